//! `reduce`, `arg` and `scan` in the interpreter's order.
//!
//! The operand is seen as `[outer, extent, inner]` around the reduced axis.
//! Each lane `(o, i)` folds `x[o, 0, i], x[o, 1, i], …` strictly left to
//! right, one rounding per step (docs/semantics.md §6); the loops run `o`,
//! then `k` along the axis, then `i` innermost, so that independent lanes are
//! the vectorizable loop and each lane still sees `k` ascending. A reduction
//! with at most [`REGISTER_LANES`] lanes keeps each lane's accumulator in a
//! register and folds every lane at each `k`, reading the operand in place
//! (f32/f64 sums, products, maxima and minima of rows in groups of eight,
//! eight columns at a time from 8 × 8 blocks transposed in registers).
//! Along the last axis (`inner` is 1) the lanes are the rows: a reduction of
//! more rows, and an `arg` of at least four, first transposes its operand
//! (`[extent, rows]`, shuffled in 8 × 8 blocks where they divide it), so
//! each step is one vector op across the rows; scans and fewer rows run `k`
//! outside the rows, so that their dependent chains at least interleave. An
//! f32/f64 `sum`, `prod`, `max` or `min` folds without canonicalizing NaN on
//! each step and canonicalizes each lane once at the end (bit-identical: a
//! NaN stays a NaN through every later step).

use super::error::HostError;
use super::frame::TileRef;
use super::kernel::{HostKernel, HostValue};
use super::lazy::Expr;
use super::transpose::BLOCK;
use inkwell::types::VectorType;
use inkwell::values::{BasicValueEnum, FloatMathValue, IntValue, VectorValue};
use tile_ir::{BinaryOp, DType, Function, OpId, OpKind, ReduceKind, ScanKind, Type, Value};

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `reduce`, `arg` or `scan`.
    pub(super) fn reduce(&mut self, id: OpId) -> Result<(), HostError> {
        let kind = self.func.op(id).kind.clone();
        let operand = *self
            .operands(id)
            .first()
            .ok_or_else(|| HostError::internal("a reduction without an operand"))?;
        let result = self.result(id)?;
        let x = match (self.value(operand)?, &kind) {
            // Only a block fold's operand is lazy (`fuse.rs`); one without
            // loads is computed in the fold, one with them stored first.
            (HostValue::Lazy(expr), OpKind::Reduce { kind, .. }) => {
                let Type::Tile(t) = self.func.ty(operand) else {
                    return Err(HostError::internal("a lazy scalar"));
                };
                let (shape, dtype) = (t.shape.dims().to_vec(), t.dtype);
                if let ([rows, extent], true) = (shape.as_slice(), expr.loads().is_empty()) {
                    let d = Dims {
                        outer: *rows,
                        extent: *extent,
                        inner: 1,
                    };
                    let out = self.place(&[*rows], dtype);
                    self.fold_row_blocks(Rows::Lazy(&expr), dtype, &out, d, folding(*kind))?;
                    return self.define_reduction(result, out);
                }
                let place = self.place(&shape, dtype);
                self.evaluate(&expr, &place)?;
                place
            }
            _ => self.tile(operand)?,
        };
        let axis = match kind {
            OpKind::Reduce { axis, .. }
            | OpKind::ArgReduce { axis, .. }
            | OpKind::Scan { axis, .. } => axis,
            _ => return Err(HostError::internal("not a reduction")),
        };
        let extent = *x
            .shape
            .get(axis)
            .ok_or_else(|| HostError::internal("a reduced axis out of range"))?;
        let outer: usize = x.shape[..axis].iter().product();
        let inner: usize = x.shape[axis + 1..].iter().product();
        let dims = Dims {
            outer,
            extent,
            inner,
        };
        let out = match kind {
            OpKind::Scan { kind, .. } => {
                let op = match kind {
                    ScanKind::CumSum => BinaryOp::Add,
                    ScanKind::CumProd => BinaryOp::Mul,
                };
                let out = self.place(&x.shape, x.dtype);
                self.copy(&out, &x)?;
                self.fold(&x, &out, dims, op, true)?;
                out
            }
            OpKind::Reduce { kind, .. } => {
                let op = folding(kind);
                let out = self.place(&[outer, inner], x.dtype);
                if outer * inner <= REGISTER_LANES {
                    self.fold_in_registers(&x, &out, dims, op)?;
                } else {
                    self.lanes_contiguous(&x, dims, &mut |l, x, d| {
                        l.first_of_lanes(x, &out, d)?;
                        l.fold(x, &out, d, op, false)
                    })?;
                }
                out
            }
            OpKind::ArgReduce { kind, .. } => {
                let best = self.place(&[outer, inner], x.dtype);
                let out = self.place(&[outer, inner], DType::I32);
                self.fill(&out, tile_ir::Scalar::I32(0))?;
                self.lanes_contiguous(&x, dims, &mut |l, x, d| {
                    l.first_of_lanes(x, &best, d)?;
                    l.arg_fold(x, &best, &out, d, kind)
                })?;
                out
            }
            _ => return Err(HostError::internal("not a reduction")),
        };
        self.define_reduction(result, out)
    }

    /// Runs `body` for `k = 1 … extent − 1` of every lane of `d`, lanes
    /// outermost then `k` then the inner axis, with the positions of the
    /// step ([`LaneStep`]; a scan's accumulator is its result at `k − 1`).
    pub(super) fn lane_steps(
        &mut self,
        d: Dims,
        scan: bool,
        body: &mut dyn FnMut(&mut Self, LaneStep<'ctx>) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        if d.extent < 2 {
            return Ok(());
        }
        let (lane, along) = ((d.extent * d.inner) as i64, d.inner as i64);
        let bounds = [
            self.i64(d.outer as i64),
            self.i64(d.extent as i64 - 1),
            self.i64(d.inner as i64),
        ];
        self.nest(&bounds, &mut |l, c| {
            let (o, k1, i) = (c[0], c[1], c[2]);
            let k = l.e.b.build_int_nsw_add(k1, l.i64(1), "k")?;
            let from = l.linear(&[o, k, i], &[lane, along, 1], 0)?;
            let (read, write) = if scan {
                (l.linear(&[o, k1, i], &[lane, along, 1], 0)?, from)
            } else {
                let at = l.linear(&[o, i], &[along, 1], 0)?;
                (at, at)
            };
            body(
                l,
                LaneStep {
                    k,
                    from,
                    read,
                    write,
                },
            )
        })
    }

    /// Defines `result` as the reduction stored in `out`.
    pub(super) fn define_reduction(
        &mut self,
        result: Value,
        out: TileRef,
    ) -> Result<(), HostError> {
        let value = match self.func.ty(result) {
            Type::Scalar(_) => HostValue::Scalar(self.get(&out, self.i64(0))?),
            Type::Tile(t) => HostValue::Tile(TileRef {
                shape: t.shape.dims().to_vec(),
                ..out
            }),
            other => return Err(HostError::internal(format!("a reduction to a {other}"))),
        };
        self.define(result, value);
        Ok(())
    }

    /// Runs `body` with `x` and `d`; for a reduction along the last axis of
    /// at least [`TRANSPOSED_ROWS`] rows, with a transposed copy of `x`
    /// (`[extent, rows]`, freed afterwards) seen as one block whose lanes
    /// (the rows) are the contiguous inner axis: each step of the fold is
    /// then one vector op across the rows, in the same order per row.
    fn lanes_contiguous(
        &mut self,
        x: &TileRef,
        d: Dims,
        body: &mut dyn FnMut(&mut Self, &TileRef, Dims) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        if d.inner != 1 || d.outer < TRANSPOSED_ROWS || d.extent < 2 {
            return body(self, x, d);
        }
        self.scoped(&mut |l| {
            let xt = l.place(&[d.extent, d.outer], x.dtype);
            if !l.transpose_blocks(x, &xt, [1, d.outer, d.extent])? {
                let (to, from) = ([d.outer as i64, 1], [1, d.extent as i64]);
                l.copy_affine(&[d.extent, d.outer], &xt, 0, &to, x, 0, &from)?;
            }
            let lanes = Dims {
                outer: 1,
                extent: d.extent,
                inner: d.outer,
            };
            body(l, &xt, lanes)
        })
    }

    /// `out[o, i] = x[o, 0, i]` for every lane.
    pub(super) fn first_of_lanes(
        &mut self,
        x: &TileRef,
        out: &TileRef,
        d: Dims,
    ) -> Result<(), HostError> {
        let (xs, os) = ([(d.extent * d.inner) as i64, 1], [d.inner as i64, 1]);
        self.copy_affine(&[d.outer, d.inner], out, 0, &os, x, 0, &xs)
    }

    /// For `k = 1 … extent − 1` and every lane: `acc = op(acc, x[o, k, i])`
    /// where `acc` is `out[o, i]` (or, for a scan, `out[o, k − 1, i]`, the
    /// result stored at `out[o, k, i]`).
    fn fold(
        &mut self,
        x: &TileRef,
        out: &TileRef,
        d: Dims,
        op: BinaryOp,
        scan: bool,
    ) -> Result<(), HostError> {
        if d.extent < 2 {
            return Ok(());
        }
        let (lane, along) = ((d.extent * d.inner) as i64, d.inner as i64);
        // An f32/f64 sum, product, maximum or minimum of a reduction takes
        // its steps unrounded to the canonical NaN and canonicalizes the
        // lanes once at the end: a NaN stays a NaN through every later step,
        // and other values are the same, so the result is bit-identical with
        // fewer ops on each step's dependent chain. (A scan stores every
        // step.) This relies on plain IEEE `fadd`/`fmul` and LLVM's
        // `maximum`/`minimum`: the host emitter sets no fast-math flags
        // (`nnan` or `reassoc` would break it).
        let raw = !scan && unrounded(op, x.dtype);
        // Along the last axis (`inner` 1), the lanes are the rows: run `k`
        // outside and the rows inside, so that their independent chains
        // interleave instead of running one after the other (each row still
        // sees `k` ascending).
        let rows_inside = d.inner == 1 && d.outer > 1;
        let bounds = if rows_inside {
            vec![self.i64(d.extent as i64 - 1), self.i64(d.outer as i64)]
        } else {
            vec![
                self.i64(d.outer as i64),
                self.i64(d.extent as i64 - 1),
                self.i64(d.inner as i64),
            ]
        };
        self.nest(&bounds, &mut |l, c| {
            let (o, k1, i) = if rows_inside {
                (c[1], c[0], l.i64(0))
            } else {
                (c[0], c[1], c[2])
            };
            let b = &l.e.b;
            let k = b.build_int_nsw_add(k1, l.i64(1), "k")?;
            let from = l.linear(&[o, k, i], &[lane, along, 1], 0)?;
            let (read, write) = if scan {
                (l.linear(&[o, k1, i], &[lane, along, 1], 0)?, from)
            } else {
                let at = l.linear(&[o, i], &[along, 1], 0)?;
                (at, at)
            };
            let acc = l.get(out, read)?;
            let v = l.get(x, from)?;
            let next = l.fold_step(op, x.dtype, raw, acc, v)?;
            l.set(out, write, next)
        })?;
        if raw {
            self.canonicalize_lanes(out, d)?;
        }
        Ok(())
    }

    /// `op(acc, v)`; when `raw`, the plain IEEE op, NaN left as it comes.
    fn fold_step(
        &self,
        op: BinaryOp,
        dtype: DType,
        raw: bool,
        acc: BasicValueEnum<'ctx>,
        v: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        if !raw {
            return self.apply(&OpKind::Binary(op), &[dtype; 2], &[acc, v], self.nans);
        }
        let (a, v) = (acc.into_float_value(), v.into_float_value());
        Ok(self.raw_step(op, a, v)?.into())
    }

    /// The plain IEEE `acc + v`, `acc · v`, `maximum(acc, v)` or
    /// `minimum(acc, v)` of two floats or two float vectors: a NaN operand
    /// gives a NaN, of any payload.
    fn raw_step<T>(&self, op: BinaryOp, acc: T, v: T) -> Result<T, HostError>
    where
        T: FloatMathValue<'ctx> + TryFrom<BasicValueEnum<'ctx>>,
    {
        let b = &self.e.b;
        let name = match op {
            BinaryOp::Add => return Ok(b.build_float_add(acc, v, "acc")?),
            BinaryOp::Mul => return Ok(b.build_float_mul(acc, v, "acc")?),
            // NaN if either is NaN, and -0 < +0: the oracle's `max`/`min`
            // but for the NaN's payload.
            BinaryOp::Max => "llvm.maximum",
            BinaryOp::Min => "llvm.minimum",
            other => {
                return Err(HostError::internal(format!(
                    "a raw fold step of `{}`",
                    other.name()
                )))
            }
        };
        let (acc, v) = (acc.as_basic_value_enum(), v.as_basic_value_enum());
        let f = self.e.intrinsic(name, &[acc.get_type()])?;
        let step = b
            .build_call(f, &[acc.into(), v.into()], "acc")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| HostError::internal(format!("{name} returned nothing")))?;
        T::try_from(step).map_err(|_| HostError::internal(format!("{name} of another type")))
    }

    /// Canonicalizes the NaN of every lane of `out` (after a raw fold).
    fn canonicalize_lanes(&mut self, out: &TileRef, d: Dims) -> Result<(), HostError> {
        let lanes = self.i64((d.outer * d.inner) as i64);
        self.counted(lanes, &mut |l, i| {
            let acc = l.get(out, i)?.into_float_value();
            let canonical = l.e.canonicalize(acc, l.nans)?;
            l.set(out, i, canonical.into())
        })
    }

    /// `out[o, i] = x[o, 0, i] op x[o, 1, i] op …` for a reduction with at
    /// most [`REGISTER_LANES`] lanes, each lane's accumulator in a stack slot
    /// of its own that LLVM promotes to a register: the step for `k` folds
    /// `x[o, k, i]` into every lane in turn, so the lanes' dependent chains
    /// interleave (each still sees `k` ascending), and no step waits on a
    /// store to the frame. The lanes read their own rows, so nothing is
    /// transposed.
    fn fold_in_registers(
        &mut self,
        x: &TileRef,
        out: &TileRef,
        d: Dims,
        op: BinaryOp,
    ) -> Result<(), HostError> {
        let raw = unrounded(op, x.dtype);
        if raw && in_row_blocks(d) {
            return self.fold_row_blocks(Rows::Tile(x), x.dtype, out, d, op);
        }
        let (lane, along) = ((d.extent * d.inner) as i64, d.inner as i64);
        let mut lanes = Vec::with_capacity(d.outer * d.inner);
        for o in 0..d.outer as i64 {
            for i in 0..along {
                let first = self.get(x, self.i64(o * lane + i))?;
                let slot = self.local(first.get_type())?;
                self.e.b.build_store(slot, first)?;
                lanes.push((slot, first.get_type(), o * lane + i));
            }
        }
        let steps = self.i64(d.extent as i64 - 1);
        self.counted(steps, &mut |l, k1| {
            let k = l.e.b.build_int_nsw_add(k1, l.i64(1), "k")?;
            let row = l.e.b.build_int_nsw_mul(k, l.i64(along), "row")?;
            for &(slot, ty, base) in &lanes {
                let from = l.e.b.build_int_nsw_add(row, l.i64(base), "from")?;
                let acc = l.e.b.build_load(ty, slot, "acc")?;
                let v = l.get(x, from)?;
                let next = l.fold_step(op, x.dtype, raw, acc, v)?;
                l.e.b.build_store(slot, next)?;
            }
            Ok(())
        })?;
        for (n, &(slot, ty, _)) in lanes.iter().enumerate() {
            let acc = self.e.b.build_load(ty, slot, "acc")?;
            self.set(out, self.i64(n as i64), acc)?;
        }
        // One element is the result as it is, NaN payload and all.
        if raw && d.extent > 1 {
            self.canonicalize_lanes(out, d)?;
        }
        Ok(())
    }

    /// A raw f32/f64 register fold along the last axis whose rows come in
    /// groups of eight and whose extent is a multiple of eight
    /// ([`in_row_blocks`]), eight columns at a time: each group's 8 × 8
    /// block is loaded as eight row vectors and transposed in registers
    /// (`transpose.rs`), and the group's accumulator, one vector of its eight
    /// rows, takes the block's columns in order, so each row still folds its
    /// elements left to right. (Folded lane by lane instead, LLVM turns the
    /// block back into one load per element.)
    fn fold_row_blocks(
        &mut self,
        x: Rows<'_, 'ctx>,
        dtype: DType,
        out: &TileRef,
        d: Dims,
        op: BinaryOp,
    ) -> Result<(), HostError> {
        let side = BLOCK as usize;
        let vector = match dtype {
            DType::F32 => self.e.ctx.f32_type().vec_type(BLOCK),
            DType::F64 => self.e.ctx.f64_type().vec_type(BLOCK),
            other => {
                return Err(HostError::internal(format!(
                    "a block register fold of {other}"
                )))
            }
        };
        let groups = d.outer / side;
        let mut accumulators = Vec::with_capacity(groups);
        for g in 0..groups {
            let columns = self.column_block(&x, d, g, self.i64(0), vector)?;
            let mut acc = columns[0];
            for &c in &columns[1..] {
                acc = self.raw_step(op, acc, c)?;
            }
            let slot = self.local(vector.into())?;
            self.e.b.build_store(slot, acc)?;
            accumulators.push(slot);
        }
        let blocks = self.i64((d.extent / side) as i64 - 1);
        self.counted(blocks, &mut |l, b1| {
            let b = l.e.b.build_int_nsw_add(b1, l.i64(1), "block")?;
            let column = l.e.b.build_int_nsw_mul(b, l.i64(side as i64), "column")?;
            for (g, &slot) in accumulators.iter().enumerate() {
                let columns = l.column_block(&x, d, g, column, vector)?;
                let mut acc = l.e.b.build_load(vector, slot, "acc")?.into_vector_value();
                for &c in &columns {
                    acc = l.raw_step(op, acc, c)?;
                }
                l.e.b.build_store(slot, acc)?;
            }
            Ok(())
        })?;
        for (g, &slot) in accumulators.iter().enumerate() {
            let acc = self
                .e
                .b
                .build_load(vector, slot, "acc")?
                .into_vector_value();
            for r in 0..side {
                let lane = self.e.ctx.i32_type().const_int(r as u64, false);
                let v = self.e.b.build_extract_element(acc, lane, "lane")?;
                self.set(out, self.i64((g * side + r) as i64), v)?;
            }
        }
        self.canonicalize_lanes(out, d)
    }

    /// The columns `column … column + 7` of rows `8 · group … 8 · group + 7`
    /// of `x` (seen as `[rows, extent]`), each a vector of `vector` over
    /// the eight rows.
    fn column_block(
        &self,
        x: &Rows<'_, 'ctx>,
        d: Dims,
        group: usize,
        column: IntValue<'ctx>,
        vector: VectorType<'ctx>,
    ) -> Result<Vec<VectorValue<'ctx>>, HostError> {
        let side = BLOCK as usize;
        let mut rows = Vec::with_capacity(side);
        for r in 0..side {
            let row = group * side + r;
            rows.push(match x {
                Rows::Tile(x) => {
                    let start = self.i64((row * d.extent) as i64);
                    let at = self.e.b.build_int_nsw_add(start, column, "at")?;
                    self.vector_at(x, at, vector, None)?
                }
                Rows::Lazy(expr) => self.row_vector(expr, row, column, vector)?,
            });
        }
        self.transpose_registers(rows)
    }
}

/// The fewest rows for which an `arg` along the last axis, or a reduction
/// of more than [`REGISTER_LANES`] rows, transposes its operand first
/// (`lanes_contiguous`): a vector of four f32 lanes.
const TRANSPOSED_ROWS: usize = 4;

/// The most lanes (outputs) of a reduction whose accumulators are kept in
/// registers ([`HostKernel::fold_in_registers`]): two AVX vectors of f32, the
/// unrolled step stays small.
const REGISTER_LANES: usize = 16;

/// Whether a reduction by `op` of `dtype` may take its steps as plain IEEE
/// ops and canonicalize NaN once at the end (see [`HostKernel::fold`]).
fn unrounded(op: BinaryOp, dtype: DType) -> bool {
    matches!(
        op,
        BinaryOp::Add | BinaryOp::Mul | BinaryOp::Max | BinaryOp::Min
    ) && matches!(dtype, DType::F32 | DType::F64)
}

/// The binary op a reduction of `kind` folds with.
fn folding(kind: ReduceKind) -> BinaryOp {
    match kind {
        ReduceKind::Sum => BinaryOp::Add,
        ReduceKind::Prod => BinaryOp::Mul,
        ReduceKind::Max => BinaryOp::Max,
        ReduceKind::Min => BinaryOp::Min,
    }
}

/// Whether op `id` of `func` is a reduction that folds its operand in
/// registers, 8 × 8 blocks at a time ([`HostKernel::fold_row_blocks`]): an
/// f32/f64 sum, product, maximum or minimum along the last axis of a
/// `[rows, extent]` tile. Such a reduction computes a lazy operand in its
/// own loop (`fuse.rs`).
pub(super) fn folds_in_row_blocks(func: &Function, id: OpId) -> bool {
    let op = func.op(id);
    let (OpKind::Reduce { kind, axis, .. }, Some(&x)) = (&op.kind, op.operands.first()) else {
        return false;
    };
    let Type::Tile(t) = func.ty(x) else {
        return false;
    };
    let &[rows, extent] = t.shape.dims() else {
        return false;
    };
    let d = Dims {
        outer: rows,
        extent,
        inner: 1,
    };
    *axis == 1 && rows <= REGISTER_LANES && unrounded(folding(*kind), t.dtype) && in_row_blocks(d)
}

/// Where a block fold reads its rows: a tile in the frame, or a lazy tile
/// computed on the way.
enum Rows<'e, 'ctx> {
    Tile(&'e TileRef),
    Lazy(&'e Expr<'ctx>),
}

/// Whether a raw register fold reads its operand in 8 × 8 blocks
/// ([`HostKernel::fold_row_blocks`]): along the last axis, rows in whole
/// groups of eight, and an extent of whole blocks.
fn in_row_blocks(d: Dims) -> bool {
    let side = BLOCK as usize;
    d.inner == 1 && d.outer.is_multiple_of(side) && d.extent.is_multiple_of(side) && d.extent > 0
}

/// One step of a fold along a lane of `[outer, extent, inner]`: element
/// `k` (from 1) of lane `(o, i)` (`i64` positions).
pub(super) struct LaneStep<'ctx> {
    /// The element's index along the axis.
    pub(super) k: IntValue<'ctx>,
    /// Where the element is in the operand.
    pub(super) from: IntValue<'ctx>,
    /// Where the accumulator is read: `[o, i]` of a reduction's result, or
    /// the scan's result at `k - 1`.
    pub(super) read: IntValue<'ctx>,
    /// Where the new accumulator is written: `[o, i]`, or the scan's result
    /// at `k`.
    pub(super) write: IntValue<'ctx>,
}

/// The operand of a reduction as `[outer, extent, inner]`.
#[derive(Clone, Copy)]
pub(super) struct Dims {
    pub(super) outer: usize,
    pub(super) extent: usize,
    pub(super) inner: usize,
}
