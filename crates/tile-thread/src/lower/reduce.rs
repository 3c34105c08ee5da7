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
//! Cost: `O(extent)` shared reads per result register. Reductions where any
//! order gives the same bits (integers; float `max`/`min`) take the parallel
//! path of `reduce_tree.rs` instead (in thread, shuffles, across warps).

use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::row_major;
use crate::layout_assign::{order_free, LayoutKind};
use crate::program::{Reg, ThreadOpKind};
use tile_ir::{
    ArgKind, BinaryOp, CmpPred, DType, OpId, OpKind, ReduceKind, Scalar, ScanKind, Type, UnaryOp,
};

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
        if let (OpKind::Reduce { kind, .. }, Fold::Combine(combine)) = (&op.kind, fold_kind) {
            if let Some(layout) = self.plan.values.get(&result).cloned() {
                let parallel = if keepdim {
                    src_layout.slice(axis)
                } else {
                    src_layout
                        .drop_axis(axis)
                        .unwrap_or_else(|| src_layout.slice(axis))
                };
                if order_free(*kind, dtype)
                    && src_layout.kind == LayoutKind::Blocked
                    && !src_layout.has_copies()
                    && src[axis] > 1
                    && layout == parallel
                {
                    let layout = std::rc::Rc::new(layout);
                    let regs =
                        self.tree_reduce(combine, dtype, axis, &src_layout, &src_regs, &layout);
                    return self.bind(id, Lowered::Tile { layout, regs });
                }
            }
        }
        let alloc = self.stage_tile(dtype, &src_layout, &src_regs);
        let extent = src[axis];
        // Folds the lane starting at `base` (`limit`: a scan register's coordinate).
        let fold = |s: &mut Self, base: Reg, limit: Option<Reg>| -> Reg {
            let truth = s.constant(Scalar::Bool(true));
            let lane: Vec<Reg> = (0..extent)
                .map(|k| {
                    let index = if k == 0 {
                        base
                    } else {
                        let step = s.i32c((k * rs[axis]) as i64);
                        s.binary(BinaryOp::Add, base, step)
                    };
                    s.read_shared(alloc, dtype, index, truth)
                })
                .collect();
            match (fold_kind, limit) {
                (Fold::Arg(kind), _) => s.arg_fold(kind, dtype, &lane),
                (Fold::Scan(op), Some(c)) => {
                    let mut acc = lane[0];
                    for (k, &x) in lane.iter().enumerate().skip(1) {
                        let next = s.emit(ThreadOpKind::Binary(op), vec![acc, x], dtype);
                        let k = s.i32c(k as i64);
                        let take = s.emit(ThreadOpKind::Cmp(CmpPred::Le), vec![k, c], DType::Bool);
                        acc = s.select(take, next, acc);
                    }
                    acc
                }
                (Fold::Combine(op) | Fold::Scan(op), _) => {
                    lane[1..].iter().fold(lane[0], |acc, &x| {
                        s.emit(ThreadOpKind::Binary(op), vec![acc, x], dtype)
                    })
                }
            }
        };
        let lowered = match func.ty(result) {
            Type::Scalar(_) => {
                let zero = self.i32c(0);
                Lowered::Scalar(fold(self, zero, None))
            }
            Type::Tile(_) => {
                let layout = self.layout_of(id, result)?;
                let coords = self.coords(&layout);
                let mut regs = Vec::new();
                for v in 0..layout.registers() {
                    let first = coords.representative[v];
                    if first != v {
                        // A copy in a slice layout: the same lane, folded once.
                        regs.push(regs[first]);
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
                    let limit = matches!(fold_kind, Fold::Scan(_)).then(|| c[axis]);
                    regs.push(fold(self, base, limit));
                }
                Lowered::Tile { layout, regs }
            }
            _ => return Err(self.invalid(id, "the result is not a scalar or tile")),
        };
        self.release_shared(alloc);
        self.bind(id, lowered)
    }

    /// The interpreter's `arg`: `best = 0`; for `k = 1, 2, …`, stop once
    /// `x[best]` is NaN, else take `k` if `x[k]` is NaN or strictly beyond
    /// `x[best]` (for floats, `+0` is beyond `-0` for argmax and vice versa).
    fn arg_fold(&mut self, kind: ArgKind, dtype: DType, lane: &[Reg]) -> Reg {
        let mut best = self.i32c(0);
        let mut best_value = lane[0];
        for (k, &x) in lane.iter().enumerate().skip(1) {
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
            let mut better =
                self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![low, high], DType::Bool);
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
            let k = self.i32c(k as i64);
            best = self.select(take, k, best);
            best_value = self.select(take, x, best_value);
        }
        best
    }

    /// Whether `a` is `-0` and `b` is `+0`: both equal zero and `1 / a < 0 < 1 / b`
    /// (in f32, which holds every float dtype's zeros and gives ±inf).
    fn negative_then_positive_zero(&mut self, dtype: DType, a: Reg, b: Reg) -> Reg {
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
