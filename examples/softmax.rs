//! Runs the `softmax` example (see `examples/kernels/softmax.rs`) on the best device
//! and checks it against plain Rust.

mod common;
#[path = "kernels/softmax.rs"]
mod softmax;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[softmax::run])
}
