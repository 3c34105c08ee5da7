//! Runs the `packed` example (see `examples/kernels/packed.rs`) on the best device
//! and checks it against plain Rust.

mod common;
#[path = "kernels/packed.rs"]
mod packed;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[packed::run])
}
