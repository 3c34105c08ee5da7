//! Matrix products whose `K` loop a GPU lowering software-pipelines, inside
//! the control flow real kernels put around it: a loop over output tiles
//! (`for` or `while`), a persistent loop (`for t in (pid..tiles).step_by(
//! programs)`), the same product repeated into one accumulator, an `if`; and
//! after other users of shared memory (a reduction across rows, a first
//! product). Every way back to the loop's first stages must wait for the
//! reads of the last ones: this is what the differential suites check here.
//!
//! The operands are `f16` or `bf16` integers of magnitude at most
//! [`MAGNITUDE`] (the reduction's input, `f32` integers of the same
//! magnitude), so every product and partial sum is an integer far below
//! 2^24: exact in `f32`, so that a `tensor`-precision `dot` on tensor cores
//! equals the interpreter's bit for bit whatever order its instruction
//! adds in. Every choice comes from the stream handed in, so that the rest
//! of a case is the one its seed gave before these products existed.

use super::memory::ParamPlan;
use super::{Built, Gen};
use crate::rng::SplitMix64;
use tile_ir::builder::Builder;
use tile_ir::{
    BinaryOp, CmpPred, DType, DotPrecision, Padding, ReduceKind, Scalar, TensorType, Type, Value,
};

/// The largest magnitude of an operand element.
pub(crate) const MAGNITUDE: i64 = 3;

/// The extents of the `M` and `N` blocks (`K`'s are
/// `GenConfig::pipeline_k_blocks`).
const BLOCKS: [usize; 3] = [16, 32, 64];

/// What surrounds the pipelined `K` loop.
#[derive(Clone, Copy, Debug)]
enum Around {
    /// Nothing: one output tile per program.
    Nothing,
    /// `for n in 0..tiles_n`: a row of output tiles per program.
    ForTiles,
    /// The same as a `while` over a carried counter.
    WhileTiles,
    /// `for t in (pid..tiles).step_by(programs)`: tile `t` is row
    /// `t / tiles_n`, column `t % tiles_n`.
    Persistent,
    /// `for r in 0..reps`: the product added `reps` times into one
    /// accumulator.
    Repeat,
    /// `if k_tiles > 0 { product } else { start }`.
    Guarded,
}

/// What comes before the pipelined loops and starts their accumulators.
#[derive(Clone, Copy, Debug)]
enum Before {
    /// Zeros.
    Zeros,
    /// Column sums of an `f32` tile, broadcast down the rows.
    Reduction,
    /// A first product of the same operands, at the program's first tile.
    Product,
}

/// The operands of the product: their views and shapes.
#[derive(Clone, Copy)]
struct Operands {
    a: Value,
    b: Value,
    a_view: Value,
    b_view: Value,
    /// `BM`, `BN`, `BK`.
    block: [usize; 3],
    masked: bool,
}

impl Gen<'_> {
    /// A pipelined matrix product stored to an output of its own, all of its
    /// choices drawn from `pick` (see the module docs).
    /// Nothing where the configuration allows no such product.
    pub(super) fn pipelined_output(&mut self, b: &mut Builder, pick: &mut SplitMix64) -> Built<()> {
        let dtypes: Vec<DType> = [DType::F16, DType::BF16]
            .into_iter()
            .filter(|d| self.cfg.dtypes.contains(d))
            .collect();
        let most = self.cfg.max_pipeline_tile_elements;
        let blocks: Vec<[usize; 3]> = BLOCKS
            .iter()
            .flat_map(|&m| BLOCKS.iter().map(move |&n| (m, n)))
            .flat_map(|(m, n)| self.cfg.pipeline_k_blocks.iter().map(move |&k| [m, n, k]))
            .filter(|&[m, n, k]| m * n <= most && m * k <= most && k * n <= most)
            .collect();
        if dtypes.is_empty()
            || blocks.is_empty()
            || !self.cfg.dtypes.contains(&DType::F32)
            || self.cfg.max_rank < 2
        {
            return Ok(());
        }
        let dtype = pick.pick(&dtypes);
        let block = pick.pick(&blocks);
        let [bm, bn, bk] = block;
        let programs = self.grid.iter().product::<u32>() as usize;
        let ragged = pick.chance(0.5);
        let short = |pick: &mut SplitMix64, whole: usize| {
            if ragged {
                pick.range(0, whole - 1)
            } else {
                0
            }
        };
        let m = programs * bm - short(pick, bm);
        let k = pick.range(1, 3) * bk - short(pick, bk);
        let n = pick.range(1, 3) * bn - short(pick, bn);
        // From the window stream: `a`'s rows and `b`'s columns read from
        // windows past leading rows and columns of their tensors (copied with
        // `cp.async` from a base that is or is not a whole chunk).
        let (r0, c0) = match self.windows.chance(self.cfg.window_rate) {
            true => (self.windows.range(1, 5), self.windows.range(1, 9)),
            false => (0, 0),
        };
        let a = self.integer_param(b, dtype, vec![m + r0, k]);
        let b_tensor = self.integer_param(b, dtype, vec![k, n + c0]);
        let c = self.plain_param(b, DType::F32, vec![m, n]);
        let (a_view, b_view) = if r0 + c0 > 0 {
            let zero = b.constant(Scalar::I32(0))?;
            let (r0, c0) = (
                b.constant(Scalar::I32(r0 as i32))?,
                b.constant(Scalar::I32(c0 as i32))?,
            );
            (
                b.partition_view_window(a, &[bm, bk], &[r0, zero], None)?,
                b.partition_view_window(b_tensor, &[bk, bn], &[zero, c0], None)?,
            )
        } else {
            (
                b.partition_view(a, &[bm, bk])?,
                b.partition_view(b_tensor, &[bk, bn])?,
            )
        };
        let ops = Operands {
            a,
            b: b_tensor,
            a_view,
            b_view,
            block,
            masked: ragged || pick.chance(0.5),
        };
        let c_view = b.partition_view(c, &[bm, bn])?;
        let around = pick.pick(&[
            Around::Nothing,
            Around::ForTiles,
            Around::WhileTiles,
            Around::Persistent,
            Around::Repeat,
            Around::Guarded,
        ]);
        let before = pick.pick(&[Before::Zeros, Before::Reduction, Before::Product]);
        let pid = self.linear_program(b)?;
        let zero = b.constant(Scalar::I32(0))?;
        let one = b.constant(Scalar::I32(1))?;
        let start = match before {
            Before::Zeros => b.full(Scalar::F32(0.0), &[bm, bn])?,
            Before::Reduction => {
                let x = self.integer_param(b, DType::F32, vec![programs * bm, bn]);
                let x_view = b.partition_view(x, &[bm, bn])?;
                let tile = b.load(x_view, &[pid, zero])?;
                let sums = b.reduce(ReduceKind::Sum, tile, 0, true)?;
                b.broadcast(sums, &[bm, bn])?
            }
            Before::Product => {
                let zeros = b.full(Scalar::F32(0.0), &[bm, bn])?;
                k_loop(b, &ops, (pid, zero), zeros)?
            }
        };
        // The output's columns: `b`'s window's, not its tensor's.
        let tiles_n = cdiv(b, if c0 > 0 { c } else { ops.b }, 1, bn)?;
        match around {
            Around::Nothing => {
                let acc = k_loop(b, &ops, (pid, zero), start)?;
                b.store_masked(acc, c_view, &[pid, zero])
            }
            Around::ForTiles => {
                b.for_loop(zero, tiles_n, one, &[], |b, nt, _| {
                    let acc = k_loop(b, &ops, (pid, nt), start)?;
                    b.store_masked(acc, c_view, &[pid, nt])?;
                    Ok(vec![])
                })?;
                Ok(())
            }
            Around::WhileTiles => {
                b.while_loop(
                    &[zero],
                    |b, nt| b.cmp(CmpPred::Lt, nt[0], tiles_n),
                    |b, nt| {
                        let acc = k_loop(b, &ops, (pid, nt[0]), start)?;
                        b.store_masked(acc, c_view, &[pid, nt[0]])?;
                        Ok(vec![b.binary(BinaryOp::Add, nt[0], one)?])
                    },
                )?;
                Ok(())
            }
            Around::Persistent => {
                let count = self.program_count(b)?;
                let tiles = b.binary(BinaryOp::Mul, count, tiles_n)?;
                b.for_loop(pid, tiles, count, &[], |b, t, _| {
                    let row = b.binary(BinaryOp::Div, t, tiles_n)?;
                    let col = b.binary(BinaryOp::Rem, t, tiles_n)?;
                    let acc = k_loop(b, &ops, (row, col), start)?;
                    b.store_masked(acc, c_view, &[row, col])?;
                    Ok(vec![])
                })?;
                Ok(())
            }
            Around::Repeat => {
                let reps = b.constant(Scalar::I32(pick.range(1, 3) as i32))?;
                let acc = b.for_loop(zero, reps, one, &[start], |b, _, acc| {
                    Ok(vec![k_loop(b, &ops, (pid, zero), acc[0])?])
                })?;
                b.store_masked(acc[0], c_view, &[pid, zero])
            }
            Around::Guarded => {
                let k_tiles = cdiv(b, ops.a, 1, bk)?;
                let any = b.cmp(CmpPred::Gt, k_tiles, zero)?;
                let acc = b.if_else(
                    any,
                    &[super::tile(vec![bm, bn], DType::F32)],
                    |b| Ok(vec![k_loop(b, &ops, (pid, zero), start)?]),
                    |_| Ok(vec![start]),
                )?;
                b.store_masked(acc[0], c_view, &[pid, zero])
            }
        }
    }

    /// The number of programs of the grid (all axes).
    fn program_count(&mut self, b: &mut Builder) -> Built<Value> {
        let mut count = b.num_programs(0)?;
        for axis in 1..3 {
            let n = b.num_programs(axis)?;
            count = b.binary(BinaryOp::Mul, count, n)?;
        }
        Ok(count)
    }

    /// A tensor parameter of small integers (see the module docs).
    fn integer_param(&mut self, b: &mut Builder, dtype: DType, extents: Vec<usize>) -> Value {
        let ty = TensorType::new(dtype, extents.len());
        let magnitude = MAGNITUDE;
        self.own_param(
            b,
            ty,
            ParamPlan::Integers {
                dtype,
                extents,
                magnitude,
            },
        )
    }

    /// A tensor parameter of random values and layout, promising nothing.
    fn plain_param(&mut self, b: &mut Builder, dtype: DType, extents: Vec<usize>) -> Value {
        let ty = TensorType::new(dtype, extents.len());
        let aligned = false;
        self.own_param(
            b,
            ty,
            ParamPlan::Tensor {
                dtype,
                extents,
                aligned,
            },
        )
    }

    /// A tensor parameter of the product's own, of type `ty` with the
    /// argument `plan`, drawing nothing from the case's other streams.
    fn own_param(&mut self, b: &mut Builder, ty: TensorType, plan: ParamPlan) -> Value {
        let name = format!("t{}", self.params.len());
        self.params.push(plan);
        b.param(name, Type::Tensor(ty))
    }
}

/// `ceil(dim(tensor, axis) / block)`, `i32`.
fn cdiv(b: &mut Builder, tensor: Value, axis: usize, block: usize) -> Built<Value> {
    let extent = b.dim(tensor, axis)?;
    let less = b.constant(Scalar::I32(block as i32 - 1))?;
    let block = b.constant(Scalar::I32(block as i32))?;
    let up = b.binary(BinaryOp::Add, extent, less)?;
    b.binary(BinaryOp::Div, up, block)
}

/// `for k in 0..k_tiles { acc = dot(a[row, k], b[k, col], acc) }` with
/// `tensor` precision, from `start`.
fn k_loop(
    b: &mut Builder,
    ops: &Operands,
    (row, col): (Value, Value),
    start: Value,
) -> Built<Value> {
    let k_tiles = cdiv(b, ops.a, 1, ops.block[2])?;
    let zero = b.constant(Scalar::I32(0))?;
    let one = b.constant(Scalar::I32(1))?;
    let acc = b.for_loop(zero, k_tiles, one, &[start], |b, k, acc| {
        let (ta, tb) = if ops.masked {
            (
                b.load_masked(ops.a_view, &[row, k], Padding::Zero)?,
                b.load_masked(ops.b_view, &[k, col], Padding::Zero)?,
            )
        } else {
            (
                b.load(ops.a_view, &[row, k])?,
                b.load(ops.b_view, &[k, col])?,
            )
        };
        Ok(vec![b.dot_with(ta, tb, acc[0], DotPrecision::Tensor)?])
    })?;
    Ok(acc[0])
}
