//! Runs the `layernorm` example (see `examples/kernels/layernorm.rs`) on the best device
//! and checks it against plain Rust.

mod common;
#[path = "kernels/layernorm.rs"]
mod layernorm;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[layernorm::run])
}
