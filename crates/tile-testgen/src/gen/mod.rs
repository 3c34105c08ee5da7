//! The generator: type-directed construction of a kernel.
//!
//! [`Gen::value`] builds a value of a requested type by choosing, at random,
//! an op family able to produce that type and recursing on the operand types
//! the family needs; at depth 0, when the op budget is spent, or when no
//! family fits, it takes a leaf (a load, a constant, an `iota`, a parameter,
//! a grid id, or a value already visible). Every value built is an operand of
//! the value asked for, so every op feeds a stored result. The families live
//! in one file each: [`elementwise`], [`movement`], [`reduce`], [`control`],
//! and [`memory`] (parameters, views, indices, loads and stores).

mod atomics;
mod control;
mod elementwise;
mod memory;
mod movement;
mod pipelined;
mod reduce;
mod scatters;

use crate::config::GenConfig;
use crate::rng::SplitMix64;
use crate::values::{random_scalar, Place};
use crate::Case;
use tile_ir::builder::{BuildError, Builder};
use tile_ir::interp::Arg;
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, Shape, TileType, Type, Value};

use memory::ParamPlan;

/// The result of a builder call.
pub(crate) type Built<T> = Result<T, BuildError>;

/// The families of ops that can produce a value of a requested type.
#[derive(Clone, Copy, Debug)]
enum Family {
    Unary,
    Binary,
    Cmp,
    Select,
    Fma,
    Cast,
    Broadcast,
    Reshape,
    Permute,
    Expand,
    Flip,
    Slice,
    Pad,
    Cat,
    Fp4Pairs,
    Reduce,
    ArgReduce,
    Scan,
    Dot,
    If,
    For,
}

/// Each family with its weight.
const FAMILIES: [(Family, u32); 21] = [
    (Family::Unary, 8),
    (Family::Binary, 10),
    (Family::Cmp, 4),
    (Family::Select, 4),
    (Family::Fma, 3),
    (Family::Cast, 6),
    (Family::Broadcast, 4),
    (Family::Reshape, 4),
    (Family::Permute, 3),
    (Family::Expand, 3),
    (Family::Flip, 3),
    (Family::Slice, 3),
    (Family::Pad, 3),
    (Family::Cat, 3),
    (Family::Fp4Pairs, 1),
    (Family::Reduce, 5),
    (Family::ArgReduce, 6),
    (Family::Scan, 3),
    (Family::Dot, 12),
    (Family::If, 2),
    (Family::For, 2),
];

/// Mixed into the seed for the stream that picks atomic outputs.
const ATOMIC_STREAM: u64 = 0xa70d_1c5e_ed5a_17c3;

/// Mixed into the seed for the stream that picks the asserted values.
const ASSERT_STREAM: u64 = 0x5a55_e47d_0b5e_c0de;

/// Mixed into the seed for the stream that picks the outputs written with a
/// `scatter`.
const SCATTER_STREAM: u64 = 0x5ca7_7e12_0b7a_c3d9;

/// Mixed into the seed for the stream that picks the gathered inputs.
const GATHER_STREAM: u64 = 0x6a7e_e25c_a77e_12ed;

/// Mixed into the seed for the stream that picks the loops written as
/// `while`.
const WHILE_STREAM: u64 = 0x3b11_e5a1_7f0c_9d24;

/// Mixed into the seed for the stream that picks the reductions and scans
/// written with a combine function.
const COMBINE_STREAM: u64 = 0xc0b1_4e5f_2a93_7d61;

/// Mixed into the seed for the stream that picks the tensors promised
/// aligned.
const ALIGN_STREAM: u64 = 0x16a1_19ed_0b17_e5aa;

/// Mixed into the seed for the stream that picks which masked loads read a
/// window of their tensor, and where.
const WINDOW_STREAM: u64 = 0x3d1e_0ff5_e7a1_bb0c;
/// The stream of `multiple_of` hints on windows' scalar parameters.
const HINT_STREAM: u64 = 0x6b2f_91c4_d37a_0e55;

/// Mixed into the seed for the stream that picks which tensors are tensors
/// of arrays, and what else those arrays hold.
const ARRAY_STREAM: u64 = 0x2a77_a15e_5c0d_e3f1;

/// Mixed into the seed for the stream that adds a pipelined matrix
/// product and chooses its shape.
const PIPELINE_STREAM: u64 = 0x919e_11ed_d07c_0a57;

/// The state of one generation.
pub(crate) struct Gen<'c> {
    /// The random stream of the seed.
    pub(crate) rng: SplitMix64,
    /// The limits.
    pub(crate) cfg: &'c GenConfig,
    /// The grid the case launches.
    pub(crate) grid: [u32; 3],
    /// Data values visible at the current point, innermost last.
    pool: Vec<Value>,
    /// Ops that may still be grown by choice.
    budget: usize,
    /// The current nesting of `for`/`if` regions.
    nesting: usize,
    /// The parameters so far, in order.
    pub(crate) params: Vec<ParamPlan>,
    /// The input tensors so far (each load reads one).
    pub(crate) inputs: usize,
    /// Induction variables in scope (never negative).
    pub(crate) ivs: Vec<Value>,
    /// The stream that picks which inputs are gathered, so that a case
    /// without gathers is the one its seed gave before they existed.
    pub(crate) gathers: SplitMix64,
    /// The stream that picks which loops are `while` loops (with the same
    /// counter, bounds and body as the `for` their seed gave before).
    pub(crate) whiles: SplitMix64,
    /// The stream that picks which reductions and scans take a combine
    /// function.
    pub(crate) combines: SplitMix64,
    /// The stream that picks which tensors are promised aligned.
    pub(crate) aligns: SplitMix64,
    /// The stream that picks which masked loads read a window, and where
    /// (so that a case without windows is the one its seed gave before).
    pub(crate) windows: SplitMix64,
    /// The stream that picks which of those windows' scalar parameters
    /// pass through `multiple_of`, and by what (so that a case without
    /// hints is the one its seed gave before).
    pub(crate) hints: SplitMix64,
    /// The stream that picks which tensor parameters are tensors of arrays
    /// (so that a case without arrays is the one its seed gave before).
    pub(crate) arrays: SplitMix64,
    /// The assertion number of the next `multiple_of` (0 is the generated
    /// `assert`'s).
    pub(crate) next_hint: u32,
    /// Whether the value being generated keeps f64 math-library results out
    /// (no such function, no visible value that may hold one): it is the
    /// operand of an f64 product (`prod`, `cumprod`), which would multiply
    /// each factor's few ulps of error (docs/backends.md) past the bound the
    /// suites judge f64 results by.
    pub(crate) exact_f64: bool,
}

/// Generates the case of `seed` (see [`crate::generate`]).
pub(crate) fn generate(seed: u64, cfg: &GenConfig) -> Case {
    let mut rng = SplitMix64::new(seed);
    let grid = random_grid(&mut rng, cfg.max_programs.max(1));
    let mut g = Gen {
        rng,
        cfg,
        grid,
        pool: Vec::new(),
        budget: cfg.max_ops,
        nesting: 0,
        params: Vec::new(),
        inputs: 0,
        ivs: Vec::new(),
        gathers: SplitMix64::new(seed ^ GATHER_STREAM),
        whiles: SplitMix64::new(seed ^ WHILE_STREAM),
        combines: SplitMix64::new(seed ^ COMBINE_STREAM),
        aligns: SplitMix64::new(seed ^ ALIGN_STREAM),
        windows: SplitMix64::new(seed ^ WINDOW_STREAM),
        hints: SplitMix64::new(seed ^ HINT_STREAM),
        arrays: SplitMix64::new(seed ^ ARRAY_STREAM),
        next_hint: 1,
        exact_f64: false,
    };
    let mut b = Builder::new(format!("gen_{seed}"));
    let outputs = g.rng.range(1, cfg.max_outputs.max(1));
    // Which outputs are atomic comes from a stream of its own, so that a
    // case without atomics is the one this seed gave before they existed.
    let mut atomics = SplitMix64::new(seed ^ ATOMIC_STREAM);
    // And which are scattered, from another.
    let mut scatters = SplitMix64::new(seed ^ SCATTER_STREAM);
    for _ in 0..outputs {
        let ty = g.random_tile_type(None);
        let built = match &ty {
            Type::Tile(t) if Gen::atomic_dtype(t.dtype) && atomics.chance(cfg.atomic_rate) => {
                g.atomic_output(&mut b, t)
            }
            Type::Tile(t) if scatters.chance(cfg.scatter_rate) => g.scatter_output(&mut b, t),
            _ => g.output(&mut b, &ty),
        };
        built.unwrap_or_else(|e| panic!("the generator broke a typing rule (seed {seed}): {e}"));
    }
    // So does a pipelined product, stored to outputs of its own.
    let mut pipelines = SplitMix64::new(seed ^ PIPELINE_STREAM);
    if pipelines.chance(cfg.pipeline_rate) {
        g.pipelined_output(&mut b, &mut pipelines)
            .unwrap_or_else(|e| panic!("the generator broke a typing rule (seed {seed}): {e}"));
    }
    // Asserts, too, come from a stream of their own.
    let mut asserts = SplitMix64::new(seed ^ ASSERT_STREAM);
    if !g.pool.is_empty() && asserts.chance(cfg.assert_rate) {
        let v = g.pool[asserts.range(0, g.pool.len() - 1)];
        g.assert_holds(&mut b, v)
            .unwrap_or_else(|e| panic!("the generator broke a typing rule (seed {seed}): {e}"));
    }
    let func = b
        .finish()
        .unwrap_or_else(|e| panic!("the generator built an invalid kernel (seed {seed}): {e}"));
    let params = std::mem::take(&mut g.params);
    let args: Vec<Arg> = params
        .iter()
        .map(|p| p.arg((&mut g.rng, &mut g.aligns, &mut g.arrays), cfg))
        .collect();
    Case { func, grid, args }
}

/// A grid of at most `max` programs, each axis at least 1.
fn random_grid(rng: &mut SplitMix64, max: u32) -> [u32; 3] {
    let mut grid = [1u32; 3];
    for axis in 0..3 {
        let room = max / grid.iter().product::<u32>();
        if room > 1 && rng.chance(0.6) {
            grid[axis] = rng.range(1, room as usize) as u32;
        }
    }
    grid
}

impl Gen<'_> {
    /// An `assert` on `v` that holds whatever its elements are (`v == v or
    /// v != v`, true for NaNs too), formatting the program id: it must not
    /// change what any stage computes.
    fn assert_holds(&mut self, b: &mut Builder, v: Value) -> Built<()> {
        let same = b.cmp(CmpPred::Eq, v, v)?;
        let differ = b.cmp(CmpPred::Ne, v, v)?;
        let ok = b.binary(BinaryOp::Or, same, differ)?;
        let pid = b.program_id(0)?;
        b.assert(0, "program {} asserted", ok, &[pid])?;
        Ok(())
    }

    /// A value of type `ty` (a scalar or a tile), built to at most `depth`
    /// levels of ops.
    pub(crate) fn value(&mut self, b: &mut Builder, ty: &Type, depth: usize) -> Built<Value> {
        if depth > 0 && self.budget > 0 {
            self.budget -= 1;
            let weights: Vec<u32> = FAMILIES.iter().map(|f| f.1).collect();
            for _ in 0..6 {
                let family = FAMILIES[self.rng.weighted(&weights)].0;
                if let Some(v) = self.family(b, family, ty, depth - 1)? {
                    self.pool.push(v);
                    return Ok(v);
                }
            }
        }
        self.leaf(b, ty)
    }

    /// A value of `ty` from `family`, or `None` when the family cannot
    /// produce that type within the limits.
    fn family(
        &mut self,
        b: &mut Builder,
        family: Family,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        let tile = match ty {
            Type::Tile(t) => Some(t),
            _ => None,
        };
        match (family, tile) {
            (Family::Unary, _) => self.unary(b, ty, depth),
            (Family::Binary, _) => self.binary(b, ty, depth),
            (Family::Cmp, _) => self.cmp(b, ty, depth),
            (Family::Select, _) => self.select(b, ty, depth),
            (Family::Fma, _) => self.fma(b, ty, depth),
            (Family::Cast, _) => self.cast(b, ty, depth),
            (Family::Reduce, _) => self.reduce(b, ty, depth),
            (Family::ArgReduce, _) => self.arg_reduce(b, ty, depth),
            (Family::If, _) => self.if_else(b, ty, depth),
            (Family::For, _) => self.for_loop(b, ty, depth),
            (_, None) => Ok(None),
            (Family::Broadcast, Some(t)) => self.broadcast(b, t, depth),
            (Family::Reshape, Some(t)) => self.reshape(b, t, depth),
            (Family::Permute, Some(t)) => self.permute(b, t, depth),
            (Family::Expand, Some(t)) => self.expand(b, t, depth),
            (Family::Flip, Some(t)) => self.flip(b, t, depth),
            (Family::Slice, Some(t)) => self.slice(b, t, depth),
            (Family::Pad, Some(t)) => self.pad(b, t, depth),
            (Family::Cat, Some(t)) => self.cat(b, t, depth),
            (Family::Fp4Pairs, Some(t)) => self.fp4_pairs(b, t, depth),
            (Family::Scan, Some(t)) => self.scan(b, t, depth),
            (Family::Dot, Some(t)) => self.dot(b, t, depth),
        }
    }

    /// A value of `ty` without growing the op tree: a visible value, a load,
    /// a constant, an `iota` or a parameter.
    pub(super) fn leaf(&mut self, b: &mut Builder, ty: &Type) -> Built<Value> {
        let visible: Vec<Value> = self
            .pool
            .iter()
            .copied()
            .filter(|&v| b.ty(v) == ty)
            .collect();
        let exact = self.exact_f64 && ty.dtype() == DType::F64;
        if !visible.is_empty() && !exact && self.rng.chance(0.3) {
            return Ok(self.rng.pick(&visible));
        }
        match ty {
            Type::Tile(t) => self.tile_leaf(b, t),
            _ => self.scalar_leaf(b, ty.dtype()),
        }
    }

    fn tile_leaf(&mut self, b: &mut Builder, t: &TileType) -> Built<Value> {
        let dims = t.shape.dims();
        match self.rng.range(0, 9) {
            0..=4 => {
                if let Some(v) = self.load(b, t)? {
                    return Ok(v);
                }
            }
            5 if t.dtype != DType::Bool => return b.iota(dims, t.dtype),
            6 => {
                let s = self.scalar_leaf(b, t.dtype)?;
                return b.broadcast(s, dims);
            }
            _ => {}
        }
        let value = self.constant_value(t.dtype);
        b.full(value, dims)
    }

    fn scalar_leaf(&mut self, b: &mut Builder, dtype: DType) -> Built<Value> {
        if dtype == DType::I32 && self.rng.chance(0.4) {
            return self.grid_scalar(b);
        }
        if self.rng.chance(0.25) {
            return Ok(self.scalar_param(b, dtype));
        }
        let value = self.constant_value(dtype);
        b.constant(value)
    }

    /// `generate` run with [`Gen::exact_f64`] set when `product` is an f64
    /// product's operand (and as it was otherwise).
    pub(crate) fn exact_if<T>(
        &mut self,
        product: bool,
        generate: impl FnOnce(&mut Self) -> Built<T>,
    ) -> Built<T> {
        let outer = self.exact_f64;
        self.exact_f64 |= product;
        let result = generate(self);
        self.exact_f64 = outer;
        result
    }

    /// A random constant of `dtype` for the IR.
    pub(crate) fn constant_value(&mut self, dtype: DType) -> Scalar {
        random_scalar(&mut self.rng, dtype, 0.05, Place::Constant)
    }

    /// A random tile extent: mostly 1 to 17, sometimes 32 or 64, at most
    /// `room`.
    pub(crate) fn extent(&mut self, room: usize) -> usize {
        let e = match self.rng.range(0, 9) {
            0 => 32,
            1 => 64,
            _ => self.rng.range(1, 17),
        };
        e.min(room.max(1))
    }

    /// A random tile type; `rank` fixes the rank.
    pub(crate) fn random_tile_type(&mut self, rank: Option<usize>) -> Type {
        let rank = rank.unwrap_or_else(|| self.rng.range(1, self.cfg.max_rank.clamp(1, 4)));
        let mut dims = Vec::with_capacity(rank);
        let mut room = self.cfg.max_tile_elements;
        for _ in 0..rank {
            let e = self.extent(room);
            room /= e;
            dims.push(e);
        }
        let dtype = self.dtype();
        Type::tile(dims, dtype)
    }

    /// A random dtype of the configuration.
    pub(crate) fn dtype(&mut self) -> DType {
        if self.cfg.dtypes.is_empty() {
            return DType::F32;
        }
        let dtypes = self.cfg.dtypes.clone();
        self.rng.pick(&dtypes)
    }

    /// Whether a tile of `dims` is within the element limit.
    pub(crate) fn fits(&self, dims: &[usize]) -> bool {
        dims.iter().product::<usize>() <= self.cfg.max_tile_elements
    }

    /// Runs `body` in a new scope: values it makes visible are forgotten at
    /// its end, as they are after a region's `}`.
    pub(crate) fn scoped<T>(&mut self, body: impl FnOnce(&mut Self) -> Built<T>) -> Built<T> {
        let mark = self.pool.len();
        let ivs = self.ivs.len();
        self.nesting += 1;
        let result = body(self);
        self.nesting -= 1;
        self.pool.truncate(mark);
        self.ivs.truncate(ivs);
        result
    }

    /// Whether one more level of `for`/`if` is allowed.
    pub(crate) fn may_nest(&self) -> bool {
        self.nesting < self.cfg.max_nesting
    }

    /// Makes `v` visible to later leaves.
    pub(crate) fn expose(&mut self, v: Value) {
        self.pool.push(v);
    }
}

/// A tile type of `dims` and `dtype`.
pub(crate) fn tile(dims: Vec<usize>, dtype: DType) -> Type {
    Type::Tile(TileType {
        shape: Shape(dims),
        dtype,
    })
}
