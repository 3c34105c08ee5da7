//! Runs the `device_assert!` examples (see `examples/kernels/checked.rs`:
//! rows normalized to sum to one, and a checked embedding lookup) on the
//! best device, with one launch on bad input that the assertion stops.

#[path = "kernels/checked.rs"]
mod checked;
mod common;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[checked::run])
}
