//! Runs the `layernorm_backward` example (see
//! `examples/kernels/layernorm_backward.rs`: a lock-protected `f16`
//! accumulation) on the best device and checks it against plain Rust.

mod common;
#[path = "kernels/layernorm_backward.rs"]
mod layernorm_backward;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[layernorm_backward::run])
}
