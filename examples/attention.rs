//! Runs the `attention` example (see `examples/kernels/attention.rs`) on the best device
//! and checks it against plain Rust.

#[path = "kernels/attention.rs"]
mod attention;
mod common;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[attention::run])
}
