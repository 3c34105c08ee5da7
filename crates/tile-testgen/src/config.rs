//! The knobs of the generator.

use tile_ir::DType;

/// What [`crate::generate`] may produce. [`GenConfig::default`] is the
/// configuration of the differential suite.
#[derive(Clone, Debug, PartialEq)]
pub struct GenConfig {
    /// The dtypes of stored results, casts, comparisons and loads (every op
    /// is still constrained by its typing rule; `dot` adds its operand
    /// dtypes when its accumulator dtype is allowed).
    pub dtypes: Vec<DType>,
    /// The largest number of results stored per program (at least 1).
    pub max_outputs: usize,
    /// The deepest expression tree under one stored result.
    pub max_depth: usize,
    /// The most ops a case may grow by choice (leaves and index arithmetic
    /// come on top).
    pub max_ops: usize,
    /// The highest rank of a tile (1 to 4).
    pub max_rank: usize,
    /// The most elements of one tile.
    pub max_tile_elements: usize,
    /// The most program instances of the grid.
    pub max_programs: u32,
    /// The most nested `for`/`if` regions.
    pub max_nesting: usize,
    /// The most input tensors (each load reads a tensor of its own).
    pub max_inputs: usize,
    /// The probability that an input element is a special value (NaN with a
    /// random payload, an infinity, `-0.0`, the largest finite value or the
    /// smallest subnormal).
    pub special_rate: f64,
    /// The probability that a result of a dtype atomics take is combined
    /// into a tensor with an atomic update instead of stored.
    pub atomic_rate: f64,
    /// The probability that a result not combined with an atomic update is
    /// written with a `scatter` at index tiles instead of stored.
    pub scatter_rate: f64,
    /// The probability that a case asserts something of one of its values
    /// (a condition that always holds, so the outputs stay the same).
    pub assert_rate: f64,
    /// The probability that a tile read from an input is a `gather` at
    /// scattered index tiles instead of a partition's load.
    pub gather_rate: f64,
    /// The probability that a counted loop is written as a `while` over a
    /// carried counter instead of a `for`.
    pub while_rate: f64,
    /// The probability that a reduction or scan is written with a combine
    /// function (`reduce_with`, `scan_with`) instead of its builtin kind.
    pub combine_rate: f64,
    /// The probability that a tensor whose innermost extent allows it is
    /// promised aligned (`tensor<f32, 2, aligned>`; its argument then has
    /// a random aligned layout).
    pub aligned_rate: f64,
    /// The probability that a masked load reads a window of its tensor
    /// (`partition_view .. offset(..)`, half the time with `extent(..)`)
    /// at constant or parameter offsets, instead of the whole tensor.
    pub window_rate: f64,
    /// The probability that a new tensor parameter is one tensor of a
    /// tensor array (`tensors<T, R>`) of one to three tensors of the same
    /// rank, picked by `get_tensor` where it is first used, at a constant
    /// index or one a scalar parameter holds.
    pub array_rate: f64,
    /// The probability that a window's offset or extent given as a scalar
    /// parameter is passed through `multiple_of` by a power of two that
    /// divides its value (the check holds; the lowerings may vectorize on
    /// the promise).
    pub hint_rate: f64,
    /// The probability that a case also computes a matrix product of
    /// `tensor` precision whose `K` loop a GPU lowering software-pipelines,
    /// inside a loop, an `if` or after other users of shared memory
    /// (integer operands, so that every order of summation is exact). Only
    /// where `dtypes` hold `f32` and `f16` or `bf16`, `max_rank` is at least
    /// 2 and a 16×16 tile fits `max_pipeline_tile_elements`; its inputs
    /// come on top of `max_inputs`.
    pub pipeline_rate: f64,
    /// The most elements of one tile of a pipelined product (its blocks are
    /// 16 to 64 along each axis, larger than most generated tiles, as the
    /// blocks of real kernels are).
    pub max_pipeline_tile_elements: usize,
    /// The extents a pipelined product's `K` block is drawn from (16 and
    /// 32 by default; 64 makes 16-bit rows of 128 bytes, which the TMA's
    /// boxes copy).
    pub pipeline_k_blocks: Vec<usize>,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            dtypes: DType::ALL.to_vec(),
            max_outputs: 2,
            max_depth: 4,
            max_ops: 16,
            max_rank: 3,
            max_tile_elements: 256,
            max_programs: 4,
            max_nesting: 2,
            max_inputs: 4,
            special_rate: 0.03,
            atomic_rate: 0.2,
            scatter_rate: 0.1,
            assert_rate: 0.15,
            gather_rate: 0.1,
            while_rate: 0.3,
            combine_rate: 0.25,
            aligned_rate: 0.4,
            window_rate: 0.3,
            array_rate: 0.15,
            hint_rate: 0.5,
            pipeline_rate: 0.15,
            max_pipeline_tile_elements: 64 * 64,
            pipeline_k_blocks: vec![16, 32],
        }
    }
}
