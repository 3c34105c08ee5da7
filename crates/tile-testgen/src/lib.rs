//! Random well-typed tile programs, their inputs, a shrinker, and the
//! differential harness; [`inputs`] holds the deterministic inputs the
//! tests of every stage share.
//!
//! # What is generated
//!
//! [`generate`] returns a [`Case`]: a kernel built with
//! `tile_ir::builder::Builder` (so it is typed by construction and always
//! verifies), a grid, and one argument per parameter. Generation is
//! type-directed: to make a value of some type it picks an op family that can
//! produce that type and recurses on the operand types the op needs.
//!
//! - **Ops:** every elementwise op (all unary and binary ops, `cmp`,
//!   `select`, `fma`, `cast` between any dtypes), `broadcast` (from scalars
//!   and tiles), `reshape`, `permute`, `expand`, `flip`, `slice` (steps 1 to
//!   3), `pad`, `cat` (2 or more parts), `reduce` and `arg` with and without
//!   `keepdim` (down to scalars), `scan`, `dot` on every supported dtype
//!   pair, `for` loops with one or two carried values (bounds of several
//!   integer dtypes, sometimes `num_programs`), `if`/`else` on scalar
//!   conditions, `iota`, `full`, `constant`, scalar parameters, and
//!   `program_id`/`num_programs`/`dim` arithmetic in partition indices.
//! - **Types:** tiles of rank 1 to [`GenConfig::max_rank`] with extents
//!   1..=17 and sometimes 32 or 64 (so mostly not powers of two), all 15
//!   dtypes, each op constrained by its typing rule.
//! - **Memory:** each load reads a tensor of its own; masked loads (with
//!   every padding kind valid for the dtype) get extents that leave partial
//!   edge tiles, unmasked loads get extents that are multiples of the tile,
//!   so the interpreter never rejects an access. Indices are reduced modulo
//!   the partition count computed from `dim`, and cast to assorted integer
//!   dtypes. Tensors have random layouts: row-major, column-major, permuted,
//!   padded strides, a reversed axis (negative stride) and non-zero offsets,
//!   and every buffer element, gaps included, holds a random value.
//! - **Outputs:** every program stores each result to partition `p` (its
//!   linear program index) along axis 0 of an output tensor of its own, so
//!   no two programs write one element and every op feeds a stored value.
//!   A store sits at the top level, in both branches of an `if`, or in the
//!   body of a `for` (each iteration stores; the last one stays). Output
//!   tensors start with random contents, so elements a store skips are
//!   compared too.
//! - **Pipelined products:** some cases also compute a matrix product of
//!   `tensor` precision over `f16`/`bf16` integers, whose `K` loop a GPU
//!   lowering software-pipelines, inside a loop over output tiles (`for` or
//!   `while`), a persistent loop, a repeat into one accumulator or an `if`,
//!   after a reduction or a first product (`gen/pipelined.rs`): the shapes
//!   where a pipeline's prologue refills stages another iteration read.
//! - **Values** stay tame: small integers and quarter-integer floats, `exp`
//!   mostly of `tanh`/`sin`/`cos`, `log`/`sqrt` mostly of `abs`; with
//!   probability [`GenConfig::special_rate`] an input element is a NaN with a
//!   random payload, an infinity, `-0.0`, the largest finite value or the
//!   smallest subnormal. IR constants favour `0`, `-0.0`, `1`, `-1`, `2` and
//!   `0.5`, which the canonicalizer has identities for.
//!
//! # Knobs
//!
//! [`GenConfig`]: `dtypes` (stored, cast, compared and loaded dtypes),
//! `max_outputs`, `max_depth` (of each stored expression), `max_ops` (ops
//! grown by choice), `max_rank`, `max_tile_elements`, `max_programs` (grid
//! size), `max_nesting` (of loops and `if`), `max_inputs`, `special_rate`,
//! `atomic_rate`, `scatter_rate` (results written at index tiles),
//! `assert_rate` (asserts whose conditions always hold),
//! `gather_rate` (inputs read at scattered index tiles), `while_rate`
//! (counted loops written as `while`), `combine_rate` (reductions and
//! scans written with a combine function), `aligned_rate` (tensors promised
//! aligned), `pipeline_rate` and `max_pipeline_tile_elements` (pipelined
//! products).
//! `GenConfig::default()` is the configuration of the differential suite.
//!
//! # Reproducing a seed
//!
//! A case depends only on the seed and the configuration: the random stream
//! is this crate's own SplitMix64, so it is the same on every platform and
//! with any version of `rand`; the same seed and configuration give the same
//! case byte for byte (kernel text, grid, and every argument's layout and
//! bytes; `tests/determinism.rs` checks it). To look at a failing seed of
//! the suite:
//!
//! ```
//! use tile_testgen::{check_case, generate, GenConfig};
//!
//! let case = generate(42, &GenConfig::default());
//! println!("{}\ngrid {:?}", case.func, case.grid);
//! assert_eq!(check_case(&case), Ok(()));
//! ```
//!
//! # Saving a regression test
//!
//! Shrink the case with a predicate that holds while it fails the same way,
//! and print it as a test:
//!
//! ```
//! # use tile_testgen::{check_case, generate, shrink, to_regression_test, GenConfig};
//! let case = generate(7, &GenConfig::default());
//! let has_dot = |c: &tile_testgen::Case| {
//!     let mut dot = false;
//!     c.func.walk(&mut |op| dot |= matches!(c.func.op(op).kind, tile_ir::OpKind::Dot { .. }));
//!     dot
//! };
//! let small = if has_dot(&case) { shrink(&case, has_dot) } else { case };
//! let source = to_regression_test(&small);
//! assert!(source.contains("#[test]"));
//! ```
//!
//! Save the source as `crates/tile-testgen/tests/regressions/<name>.rs` and
//! declare it in `tests/regressions/main.rs`; the test calls
//! [`check_case`] and fails while the case does. A case that documents a
//! known bug is marked `#[should_panic]` with the failure it shows, so the
//! test flags the fix.
//!
//! The shrinker ([`shrink`]) shrinks the grid, drops stores, inlines `if`
//! branches and unrolls loops once, replaces op results by operands or zeros,
//! and crops, linearizes and zeroes tensors (in parts down to single elements). It does not change tile shapes.
//! `examples/hunt.rs` runs a range of seeds and saves every failure, shrunk:
//! `cargo run --release -p tile-testgen --example hunt -- 0 20000 /tmp/out`.
//!
//! # The harness
//!
//! [`check_case`] runs what exists today: the verifier, print → parse →
//! print, the reference interpreter, and `PassManager::default_pipeline()`
//! followed by the interpreter again, whose arguments must be bit-identical
//! (every buffer byte). `tests/differential.rs` runs it on 1,000 seeds.
//!
//! [`agreement`] judges a GPU path's results against the interpreter's
//! within the math library's bounds: tile-codegen's suite on the emulation
//! target and the GPU bundle's check on a device (`examples/generated_check.rs`)
//! share it.

pub mod agreement;
mod check;
mod config;
pub mod corpus;
pub mod edges;
mod gen;
pub mod inputs;
pub mod products;
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
