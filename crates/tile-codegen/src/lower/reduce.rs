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
//! Cost: `O(extent)` shared reads per result register; in-thread partial
//! folds, shuffles and the cross-warp stage are the faster, inexact (or
//! integer-only) alternative left for later (see `docs/lowering.md`).

use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::row_major;
use crate::thread::{Reg, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, OpId, OpKind, ReduceKind, ScanKind, Type};

impl Lowerer<'_> {
    /// Lowers `reduce` and `scan`.
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
        let (combine, axis, keepdim, scan) = match op.kind {
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
                (op, axis, keepdim, false)
            }
            OpKind::Scan { kind, axis } => {
                let op = match kind {
                    ScanKind::CumSum => BinaryOp::Add,
                    ScanKind::CumProd => BinaryOp::Mul,
                };
                (op, axis, true, true)
            }
            _ => return Err(self.invalid(id, "not a reduction")),
        };
        if axis >= src.len() {
            return Err(self.invalid(id, "axis out of range"));
        }
        let alloc = self.stage_tile(dtype, &src_layout, &src_regs);
        // Folds the lane starting at `base`; for a scan, keeps step k while k <= limit.
        let fold = |s: &mut Self, base: Reg, limit: Option<Reg>| -> Reg {
            let truth = s.constant(tile_ir::Scalar::Bool(true));
            let mut acc = s.read_shared(alloc, dtype, base, truth);
            for k in 1..src[axis] {
                let step = s.i32c((k * rs[axis]) as i64);
                let index = s.binary(BinaryOp::Add, base, step);
                let x = s.read_shared(alloc, dtype, index, truth);
                let next = s.emit(ThreadOpKind::Binary(combine), vec![acc, x], dtype);
                acc = match limit {
                    Some(c) => {
                        let k = s.i32c(k as i64);
                        let take = s.emit(ThreadOpKind::Cmp(CmpPred::Le), vec![k, c], DType::Bool);
                        s.select(take, next, acc)
                    }
                    None => next,
                };
            }
            acc
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
                    let limit = scan.then(|| c[axis]);
                    regs.push(fold(self, base, limit));
                }
                Lowered::Tile { layout, regs }
            }
            _ => return Err(self.invalid(id, "the result is not a scalar or tile")),
        };
        self.bind(id, lowered)
    }
}
