//! Shrunk failures of the differential suite, one module each, written by
//! `tile_testgen::to_regression_test`. A case that documents a known bug in
//! another crate is marked `should_panic` with the failure it shows, so the
//! fix makes its test fail until the mark is removed.

mod add_negative_zero_keeps_an_e5m2_infinity;
mod div_one_keeps_a_nan_payload;
mod min_of_itself_keeps_a_nan_payload;
mod sub_zero_keeps_a_nan_payload;
