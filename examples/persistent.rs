//! Runs the `persistent` example (see `examples/kernels/persistent.rs`) on
//! the best device and checks it against plain Rust.

mod common;
#[path = "kernels/persistent.rs"]
mod persistent;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[persistent::run])
}
