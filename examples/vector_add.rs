//! Runs the `vector_add` example (see `examples/kernels/vector_add.rs`) on the best device
//! and checks it against plain Rust.

mod common;
#[path = "kernels/vector_add.rs"]
mod vector_add;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[vector_add::run])
}
