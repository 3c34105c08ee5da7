//! Random well-typed tile programs, their inputs, a shrinker, and the
//! differential harness.
//!
//! (Documentation filled in below.)

mod check;
mod config;
mod gen;
mod regression;
mod rng;
mod shrink;
mod tensors;
mod values;

pub use check::{check_case, Failure};
pub use config::GenConfig;
pub use regression::{hex_bytes, to_regression_test};
pub use shrink::shrink;

use tile_ir::interp::Arg;
use tile_ir::Function;

/// A complete, runnable test case: a kernel, a grid and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The kernel.
    pub func: Function,
    /// The grid, `[x, y, z]`.
    pub grid: [u32; 3],
    /// One argument per parameter of `func`, in order.
    pub args: Vec<Arg>,
}

/// The case of `seed` under `config`: the same seed and configuration give
/// the same case, byte for byte.
pub fn generate(seed: u64, config: &GenConfig) -> Case {
    gen::generate(seed, config)
}
