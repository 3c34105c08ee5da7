//! Runs the `transpose` example (see `examples/kernels/transpose.rs`) on the best device
//! and checks it against plain Rust.

mod common;
#[path = "kernels/transpose.rs"]
mod transpose;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[transpose::run])
}
