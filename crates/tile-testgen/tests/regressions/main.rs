//! Cases saved with `tile_testgen::to_regression_test`, one module each:
//! shrunk failures of the differential suite (and one written by hand), and
//! a passing case that keeps the printed syntax for scalar arguments
//! compiled. Each case must pass `check_case`.

mod add_negative_zero_keeps_a_nan_payload;
mod div_one_keeps_a_nan_payload;
mod e5m2_infinity_minus_zero_is_not_saturated;
mod min_of_itself_keeps_a_nan_payload;
mod neg_of_neg_keeps_a_nan_payload;
mod one_times_x_keeps_a_nan_payload;
mod scalar_arguments_print_as_rust;
