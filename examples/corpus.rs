//! Runs the corpus of kernels ported from public Triton code (see
//! `examples/corpus/mod.rs`) on the best device and checks each against
//! plain Rust.

mod common;
#[allow(dead_code)] // `kernels` is for the test and the bench
#[path = "corpus/mod.rs"]
mod corpus;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&corpus::RUNS)
}
