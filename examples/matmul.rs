//! Runs the `matmul` example (see `examples/kernels/matmul.rs`) on the best device
//! and checks it against plain Rust.

mod common;
#[path = "kernels/matmul.rs"]
mod matmul;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[matmul::run])
}
