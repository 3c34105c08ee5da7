//! Runs the `grouped` example (see `examples/kernels/grouped.rs`) on the
//! best device and checks it against plain Rust.

mod common;
#[path = "kernels/grouped.rs"]
mod grouped;
#[path = "kernels/persistent.rs"]
#[allow(dead_code)] // the reference alone
mod persistent;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[grouped::run])
}
