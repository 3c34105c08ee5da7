//! Runs the `scaled_matmul` example (see `examples/kernels/scaled_matmul.rs`)
//! on the best device and checks it against plain Rust.

mod common;
#[allow(dead_code)] // its plain-Rust product and tensor bound only
#[path = "kernels/matmul.rs"]
mod matmul;
#[path = "kernels/scaled_matmul.rs"]
mod scaled_matmul;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[scaled_matmul::run])
}
