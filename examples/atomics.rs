//! Runs the atomics examples (see `examples/kernels/atomics.rs`: a
//! histogram, a split-K matmul, an embedding and its backward) on the best
//! device and checks them against plain Rust.

#[path = "kernels/atomics.rs"]
mod atomics;
mod common;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[atomics::run])
}
