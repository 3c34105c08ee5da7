//! Reductions and scans, exact: in the interpreter's order.
//!
//! The interpreter folds each lane of a reduction left to right,
//! `acc = x[0]; acc = acc ⊕ x[k]` for `k = 1, 2, …`, rounding after every step.
//! A tree of shuffles would combine in another order and, for floats, give
//! other bits. So this lowering keeps the order exactly: the operand is
//! staged in shared memory (see `movement.rs`) and each register of the
//! result — in the result's own layout — reads its lane from shared memory
//! and folds it sequentially in one thread. A scalar result (a 1-D tile
//! reduced without `keepdim`) is folded by every thread.
//!
//! A scan register with coordinate `c` along the axis folds the whole lane
//! and keeps the partial result of step `k` only while `k ≤ c`
//! (`acc = select(k ≤ c, acc ⊕ x[k], acc)`), which is the interpreter's
//! `y[k] = y[k-1] ⊕ x[k]` at `k = c`.
//!
//! A long lane is folded in a counted loop over its elements, 8 a turn
//! (all of a thread's lanes in one loop, in step), not unrolled whole: the
//! program, and the LLVM module after it, stay the same size whatever the
//! extent, and a GPU still has 8 loads in flight.
//!
//! Cost: `O(extent)` shared reads per result register. Reductions where any
//! order gives the same bits (integers; float `max`/`min`), and float sums
//! that may reassociate (`LowerOptions::reassociate_sums`, from
//! `fast_math`), take the parallel path of `reduce_tree.rs` instead (in
//! thread, shuffles, across warps), `argmax`/`argmin` that of
//! `reduce_arg.rs`, and float sums and products whose rows lie in one
//! warp's lanes the chain of `scan_chain.rs`, in this order.

use super::reduce_arg::worst;
use super::reduce_tree::AxisBits;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::order_free;
use crate::layout_assign::row_major;
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_ir::{
    ArgKind, BinaryOp, CmpPred, DType, OpId, OpKind, ReduceKind, Scalar, ScanKind, Type, UnaryOp,
    Value,
};

/// The elements of each lane a loop iteration of a fold takes.
const UNROLL: usize = 8;

/// A staged reduction operand: its allocation and dtype, the extent of the
/// folded axis, and the stride (in elements) between a lane's elements.
type StagedLane = (SharedId, DType, usize, usize);

/// The lanes of a reduction's or scan's result (see
/// [`Lowerer::result_lanes`]).
pub(super) struct ResultLanes {
    /// The result's layout; `None` for a scalar.
    pub(super) layout: Option<std::rc::Rc<crate::layout_assign::DistLayout>>,
    /// Each folded lane's first element and (a scan's) the register's
    /// coordinate along the axis.
    pub(super) starts: Vec<(Reg, Option<Reg>)>,
    /// The folded lane of each register of the result.
    pub(super) lane_of: Vec<usize>,
}

impl ResultLanes {
    /// The result whose lanes folded to `folded` (one register per lane).
    pub(super) fn lowered(&self, folded: &[Reg]) -> Lowered {
        match &self.layout {
            None => Lowered::Scalar(folded[0]),
            Some(layout) => Lowered::Tile {
                layout: layout.clone(),
                regs: self.lane_of.iter().map(|&i| folded[i]).collect(),
            },
        }
    }
}

/// How a lane is folded.
#[derive(Clone, Copy)]
enum Fold {
    /// `reduce`: `acc ⊕ x` left to right.
    Combine(BinaryOp),
    /// `scan`: the same, keeping step `k` while `k ≤ c`.
    Scan(BinaryOp),
    /// `arg`: the index of the first extreme.
    Arg(ArgKind),
}

impl Lowerer<'_> {
    /// Lowers `reduce`, `arg` and `scan`.
    pub(super) fn reduce(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let result = *op
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
        let operand = *op
            .operands
            .first()
            .ok_or_else(|| self.invalid(id, "no operand"))?;
        let (src_layout, src_regs) = self.tile(id, operand)?;
        let dtype = func.ty(operand).dtype();
        let src = src_layout.shape.clone();
        let rs = row_major(&src);
        let (fold_kind, axis, keepdim) = match op.kind {
            OpKind::Reduce {
                kind,
                axis,
                keepdim,
            } => {
                let op = match kind {
                    ReduceKind::Sum => BinaryOp::Add,
                    ReduceKind::Prod => BinaryOp::Mul,
                    ReduceKind::Max => BinaryOp::Max,
                    ReduceKind::Min => BinaryOp::Min,
                };
                (Fold::Combine(op), axis, keepdim)
            }
            OpKind::ArgReduce {
                kind,
                axis,
                keepdim,
            } => (Fold::Arg(kind), axis, keepdim),
            OpKind::Scan { kind, axis } => {
                let op = match kind {
                    ScanKind::CumSum => BinaryOp::Add,
                    ScanKind::CumProd => BinaryOp::Mul,
                };
                (Fold::Scan(op), axis, true)
            }
            _ => return Err(self.invalid(id, "not a reduction")),
        };
        let result_rank = func.ty(result).tile_shape().map_or(0, |s| s.rank());
        let expected_rank = if keepdim { src.len() } else { src.len() - 1 };
        if axis >= src.len() || result_rank != expected_rank {
            return Err(self.invalid(id, "axis or result rank out of range"));
        }
        // Where the result lies in the operand's own layout (its slice, or
        // with the axis dropped), a reduction that any order gives alike
        // runs as a tree in registers.
        let parallel = self.plan.values.get(&result).cloned().filter(|layout| {
            let parallel = if keepdim {
                src_layout.slice(axis)
            } else {
                src_layout
                    .drop_axis(axis)
                    .unwrap_or_else(|| src_layout.slice(axis))
            };
            AxisBits::of(&src_layout, axis).is_some()
                && !src_layout.has_copies()
                && src[axis] > 1
                && *layout == parallel
        });
        if let Some(layout) = parallel {
            let layout = std::rc::Rc::new(layout);
            let regs = match (&op.kind, fold_kind) {
                (OpKind::Reduce { kind, .. }, Fold::Combine(combine))
                    if order_free(*kind, dtype, self.sums) =>
                {
                    Some(self.tree_reduce(combine, dtype, axis, &src_layout, &src_regs, &layout))
                }
                (OpKind::Reduce { .. }, Fold::Combine(combine)) => {
                    let operand = (&*src_layout, src_regs.as_slice());
                    self.chain_reduce((combine, dtype), axis, operand, &layout)
                }
                (_, Fold::Arg(kind)) if worst(kind, dtype).is_some() => {
                    let operand = (&*src_layout, src_regs.as_slice());
                    Some(self.tree_arg_reduce((kind, dtype), axis, operand, &layout))
                }
                _ => None,
            };
            if let Some(regs) = regs {
                return self.bind(id, Lowered::Tile { layout, regs });
            }
        }
        if let (Fold::Scan(op), Some(layout)) = (fold_kind, self.plan.values.get(&result)) {
            if *layout == *src_layout {
                let scanned = self.chain_scan(op, dtype, axis, &src_layout, &src_regs);
                if let Some(regs) = scanned {
                    let layout = src_layout.clone();
                    return self.bind(id, Lowered::Tile { layout, regs });
                }
            }
        }
        let alloc = self.stage_tile(dtype, &src_layout, &src_regs);
        let lane = (alloc, dtype, src[axis], rs[axis]);
        let scan = matches!(fold_kind, Fold::Scan(_));
        let lanes = self.result_lanes(id, result, (axis, keepdim, scan), &rs)?;
        let folded = self.fold_lanes(fold_kind, lane, &lanes.starts)?;
        let lowered = lanes.lowered(&folded);
        self.release_shared(alloc);
        self.bind(id, lowered)
    }

    /// The lanes a reduction or scan of the operand (row-major strides `rs`)
    /// along `axis` folds for `result`: one per register of the result's
    /// layout (a copy in a slice layout folds the lane of its
    /// representative), or one for a scalar result, folded by every thread.
    pub(super) fn result_lanes(
        &mut self,
        id: OpId,
        result: Value,
        (axis, keepdim, scan): (usize, bool, bool),
        rs: &[usize],
    ) -> Result<ResultLanes, LowerError> {
        if let Type::Scalar(_) = self.func.ty(result) {
            let zero = self.i32c(0);
            return Ok(ResultLanes {
                layout: None,
                starts: vec![(zero, None)],
                lane_of: vec![0],
            });
        }
        let layout = self.layout_of(id, result)?;
        let coords = self.coords(&layout);
        // Each register's lane: where it starts and (a scan's) the
        // register's coordinate along the axis.
        let mut starts = Vec::new();
        let mut lane_of = Vec::new();
        for v in 0..layout.registers() {
            let first = coords.representative[v];
            if first != v {
                lane_of.push(lane_of[first]);
                continue;
            }
            let c = &coords.axes[v];
            // The operand axis of each result axis.
            let terms: Vec<(Reg, usize)> = (0..c.len())
                .map(|j| if keepdim || j < axis { j } else { j + 1 })
                .zip(c.iter().copied())
                .filter(|&(d, _)| d != axis)
                .map(|(d, r)| (r, rs[d]))
                .collect();
            let base = self.linear(&terms);
            let live = coords.live[v];
            let base = if self.is_true(live) {
                base
            } else {
                let zero = self.i32c(0);
                self.select(live, base, zero)
            };
            lane_of.push(starts.len());
            starts.push((base, scan.then(|| c[axis])));
        }
        Ok(ResultLanes {
            layout: Some(layout),
            starts,
            lane_of,
        })
    }

    /// Folds the lanes `lanes` (each `(base, limit)`: the index of its
    /// first element, and a scan register's coordinate along the axis) of
    /// the staged operand `lane = (alloc, dtype, extent, stride)`: element
    /// `k` of a lane at `base + k·stride`. Element 0 starts each fold; the
    /// elements after it are folded by a counted loop taking [`UNROLL`]
    /// elements of every lane per iteration (their loads first, then the
    /// folds in order), carrying the accumulators (an `arg`'s index and
    /// value), and the few left over after it unrolled; a short lane (at most
    /// `2·UNROLL` elements after the first) is unrolled whole. So the
    /// program stays small whatever the extent, each lane keeps the
    /// interpreter's order, and a GPU has `UNROLL` loads in flight. The
    /// folded value of each lane (an `arg`'s index).
    fn fold_lanes(
        &mut self,
        fold: Fold,
        lane: StagedLane,
        lanes: &[(Reg, Option<Reg>)],
    ) -> Result<Vec<Reg>, LowerError> {
        let (alloc, dtype, extent, _) = lane;
        let truth = self.constant(Scalar::Bool(true));
        let mut acc: Vec<Reg> = lanes
            .iter()
            .map(|&(base, _)| self.read_shared(alloc, dtype, base, truth))
            .collect();
        let arg = matches!(fold, Fold::Arg(_));
        if arg {
            // Each lane's best index, after its best value.
            let zero = self.i32c(0);
            acc.extend(lanes.iter().map(|_| zero));
        }
        let rest = extent.saturating_sub(1);
        let blocks = if rest > 2 * UNROLL { rest / UNROLL } else { 0 };
        if blocks > 0 {
            let bounds = [
                self.i32c(1),
                self.i32c((1 + blocks * UNROLL) as i64),
                self.i32c(UNROLL as i64),
            ];
            acc = self.counted_for(bounds, &acc, |me, k, carried| {
                let mut next = carried.to_vec();
                me.fold_elements(fold, lane, lanes, &mut next, (Some(k), 0..UNROLL));
                Ok(next)
            })?;
        }
        self.fold_elements(
            fold,
            lane,
            lanes,
            &mut acc,
            (None, 1 + blocks * UNROLL..extent),
        );
        Ok(if arg { acc.split_off(lanes.len()) } else { acc })
    }

    /// Folds elements `k0 + j` for `j` in `js` of every lane into `acc`
    /// (as [`Self::fold_lanes`] carries it), `k0` the register `first` or
    /// 0: all their loads, then the folds in ascending `j`.
    fn fold_elements(
        &mut self,
        fold: Fold,
        (alloc, dtype, _, stride): StagedLane,
        lanes: &[(Reg, Option<Reg>)],
        acc: &mut [Reg],
        (first, js): (Option<Reg>, std::ops::Range<usize>),
    ) {
        let truth = self.constant(Scalar::Bool(true));
        let start = first.map(|k0| {
            if stride == 1 {
                k0
            } else {
                let stride = self.i32c(stride as i64);
                self.binary(BinaryOp::Mul, k0, stride)
            }
        });
        let mut loaded = Vec::new();
        for j in js.clone() {
            let offset = self.i32c((j * stride) as i64);
            let xs: Vec<Reg> = lanes
                .iter()
                .map(|&(base, _)| {
                    let at = match start {
                        Some(start) => self.binary(BinaryOp::Add, base, start),
                        None => base,
                    };
                    let index = if j == 0 {
                        at
                    } else {
                        self.binary(BinaryOp::Add, at, offset)
                    };
                    self.read_shared(alloc, dtype, index, truth)
                })
                .collect();
            loaded.push(xs);
        }
        let n = lanes.len();
        for (j, xs) in js.zip(loaded) {
            let k = match first {
                Some(k0) if j == 0 => k0,
                Some(k0) => {
                    let j = self.i32c(j as i64);
                    self.binary(BinaryOp::Add, k0, j)
                }
                None => self.i32c(j as i64),
            };
            for (i, (&(_, limit), x)) in lanes.iter().zip(xs).enumerate() {
                match (fold, limit) {
                    (Fold::Arg(kind), _) => {
                        let best = (acc[n + i], acc[i]);
                        (acc[n + i], acc[i]) = self.arg_step(kind, dtype, best, (k, x));
                    }
                    (Fold::Scan(op), Some(c)) => {
                        let folded = self.emit(ThreadOpKind::Binary(op), vec![acc[i], x], dtype);
                        let take =
                            self.emit(ThreadOpKind::Cmp(CmpPred::Le), vec![k, c], DType::Bool);
                        acc[i] = self.select(take, folded, acc[i]);
                    }
                    (Fold::Combine(op) | Fold::Scan(op), _) => {
                        acc[i] = self.emit(ThreadOpKind::Binary(op), vec![acc[i], x], dtype);
                    }
                }
            }
        }
    }

    /// One step of the interpreter's `arg` at index `k` (`i32`) with value
    /// `x`, from `(best, best_value)`: stop once `best_value` is NaN, else
    /// take `k` if `x` is NaN or strictly beyond `best_value` (for floats,
    /// `+0` is beyond `-0` for argmax and vice versa). The new `(best,
    /// best_value)`.
    fn arg_step(
        &mut self,
        kind: ArgKind,
        dtype: DType,
        (best, best_value): (Reg, Reg),
        (k, x): (Reg, Reg),
    ) -> (Reg, Reg) {
        let stopped = self.emit(
            ThreadOpKind::Cmp(CmpPred::Ne),
            vec![best_value, best_value],
            DType::Bool,
        );
        let x_nan = self.emit(ThreadOpKind::Cmp(CmpPred::Ne), vec![x, x], DType::Bool);
        let (low, high) = match kind {
            ArgKind::ArgMax => (best_value, x),
            ArgKind::ArgMin => (x, best_value),
        };
        let mut better = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![low, high], DType::Bool);
        if dtype.is_float() {
            let zeros = self.negative_then_positive_zero(dtype, low, high);
            better = self.binary(BinaryOp::Or, better, zeros);
        }
        let better = self.binary(BinaryOp::Or, x_nan, better);
        let go_on = self.emit(
            ThreadOpKind::Unary(UnaryOp::Not),
            vec![stopped],
            DType::Bool,
        );
        let take = self.binary(BinaryOp::And, go_on, better);
        (self.select(take, k, best), self.select(take, x, best_value))
    }

    /// Whether `a` is `-0` and `b` is `+0`: both equal zero and `1 / a < 0 < 1 / b`
    /// (in f32, which holds every float dtype's zeros and gives ±inf).
    pub(super) fn negative_then_positive_zero(&mut self, dtype: DType, a: Reg, b: Reg) -> Reg {
        let zero = self.constant(Scalar::zero(dtype));
        let (one, zero32) = (
            self.constant(Scalar::F32(1.0)),
            self.constant(Scalar::F32(0.0)),
        );
        let mut all = None;
        for (x, negative) in [(a, true), (b, false)] {
            let is_zero = self.emit(ThreadOpKind::Cmp(CmpPred::Eq), vec![x, zero], DType::Bool);
            let wide = self.cast(x, DType::F32);
            let inverse = self.binary(BinaryOp::Div, one, wide);
            let pred = if negative { CmpPred::Lt } else { CmpPred::Gt };
            let sign = self.emit(ThreadOpKind::Cmp(pred), vec![inverse, zero32], DType::Bool);
            let both = self.binary(BinaryOp::And, is_zero, sign);
            all = Some(match all {
                Some(prev) => self.binary(BinaryOp::And, prev, both),
                None => both,
            });
        }
        all.unwrap_or(zero)
    }
}
