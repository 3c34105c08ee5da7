//! `reduce_with` and `scan_with`: lanes folded by the kernel author's
//! combine function, in the interpreter's order.
//!
//! As the exact reductions of `reduce.rs`: every operand is staged in shared
//! memory, and each register of the results folds its lane sequentially in
//! one thread (every thread for a scalar result), `acc = combine(acc,
//! x[k])` for `k = 1, 2, …`, the combine function's ops inlined on the
//! accumulators' registers. One counted loop over `k` folds all of a
//! thread's lanes in step, carrying their accumulators; a scan register at
//! coordinate `c` keeps step `k` only while `k ≤ c`. No order is assumed:
//! the function need not be associative.

use super::reduce::ResultLanes;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::row_major;
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_ir::{CmpPred, DType, OpId, OpKind, Scalar};

impl Lowerer<'_> {
    /// Lowers `reduce_with` and `scan_with`.
    pub(super) fn combine(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let (axis, keepdim, scan) = match op.kind {
            OpKind::ReduceWith { axis, keepdim } => (axis, keepdim, false),
            OpKind::ScanWith { axis } => (axis, true, true),
            _ => return Err(self.invalid(id, "not a combine")),
        };
        let ([region], Some(&first)) = (op.regions.as_slice(), op.results.first()) else {
            return Err(self.invalid(id, "a combine needs one region and results"));
        };
        let mut staged = Vec::with_capacity(op.operands.len());
        let mut shape = Vec::new();
        for &x in &op.operands {
            let (layout, regs) = self.tile(id, x)?;
            let dtype = func.ty(x).dtype();
            shape.clone_from(&layout.shape);
            staged.push((self.stage_tile(dtype, &layout, &regs), dtype));
        }
        if axis >= shape.len() {
            return Err(self.invalid(id, "axis out of range"));
        }
        let rs = row_major(&shape);
        let lanes = self.result_lanes(id, first, (axis, keepdim, scan), &rs)?;
        let folded = self.fold_combined(id, region, &staged, (shape[axis], rs[axis]), &lanes);
        for &(alloc, _) in &staged {
            self.release_shared(alloc);
        }
        for ((&result, &(_, dtype)), folded) in op.results.iter().zip(&staged).zip(folded?) {
            let lowered = match (lanes.lowered(&folded), &lanes.layout) {
                (Lowered::Tile { layout, regs }, Some(_)) => {
                    let want = self.layout_of(id, result)?;
                    let regs = if *want == *layout {
                        regs
                    } else {
                        self.convert(dtype, &layout, &regs, &want)
                    };
                    Lowered::Tile { layout: want, regs }
                }
                (scalar, _) => scalar,
            };
            self.env.insert(result, lowered);
        }
        Ok(())
    }

    /// Folds `lanes` of the staged operands (each `(alloc, dtype)`, a
    /// lane's element `k` at `base + k·stride`, `extent` of them) with the
    /// combine function `region`; the folded registers per operand, per
    /// lane.
    fn fold_combined(
        &mut self,
        id: OpId,
        region: &tile_ir::Region,
        staged: &[(SharedId, DType)],
        (extent, stride): (usize, usize),
        lanes: &ResultLanes,
    ) -> Result<Vec<Vec<Reg>>, LowerError> {
        let n = staged.len();
        let truth = self.constant(Scalar::Bool(true));
        // The accumulators, lane by lane, operand by operand within a lane.
        let mut acc = Vec::with_capacity(lanes.starts.len() * n);
        for &(base, _) in &lanes.starts {
            for &(alloc, dtype) in staged {
                acc.push(self.read_shared(alloc, dtype, base, truth));
            }
        }
        if extent > 1 {
            let bounds = [self.i32c(1), self.i32c(extent as i64), self.i32c(1)];
            acc = self.counted_for(bounds, &acc, |me, k, carried| {
                me.combine_steps(id, region, staged, (k, stride), lanes, carried)
            })?;
        }
        Ok((0..n)
            .map(|i| acc.iter().skip(i).step_by(n).copied().collect())
            .collect())
    }

    /// One step `k` of every lane: the elements at `k`, combined with the
    /// accumulators `acc` (a scan's kept only while `k ≤ c`); the new
    /// accumulators.
    fn combine_steps(
        &mut self,
        id: OpId,
        region: &tile_ir::Region,
        staged: &[(SharedId, DType)],
        (k, stride): (Reg, usize),
        lanes: &ResultLanes,
        acc: &[Reg],
    ) -> Result<Vec<Reg>, LowerError> {
        let n = staged.len();
        let truth = self.constant(Scalar::Bool(true));
        let offset = if stride == 1 {
            k
        } else {
            let stride = self.i32c(stride as i64);
            self.binary(tile_ir::BinaryOp::Mul, k, stride)
        };
        let mut next = Vec::with_capacity(acc.len());
        for (l, &(base, limit)) in lanes.starts.iter().enumerate() {
            let at = self.binary(tile_ir::BinaryOp::Add, base, offset);
            let xs: Vec<Reg> = staged
                .iter()
                .map(|&(alloc, dtype)| self.read_shared(alloc, dtype, at, truth))
                .collect();
            let before = &acc[l * n..(l + 1) * n];
            let combined = self.inline_combine(id, region, before, &xs)?;
            match limit {
                Some(c) => {
                    let take = self.emit(ThreadOpKind::Cmp(CmpPred::Le), vec![k, c], DType::Bool);
                    for (&new, &old) in combined.iter().zip(before) {
                        next.push(self.select(take, new, old));
                    }
                }
                None => next.extend(combined),
            }
        }
        Ok(next)
    }

    /// The combine function `region` lowered on the registers `acc` and
    /// `xs`: its scalar ops emitted in place, its yielded registers
    /// returned.
    fn inline_combine(
        &mut self,
        id: OpId,
        region: &tile_ir::Region,
        acc: &[Reg],
        xs: &[Reg],
    ) -> Result<Vec<Reg>, LowerError> {
        for (&arg, &r) in region.args.iter().zip(acc.iter().chain(xs)) {
            self.env.insert(arg, Lowered::Scalar(r));
        }
        let Some((&last, body)) = region.ops.split_last() else {
            return Err(self.invalid(id, "an empty combine function"));
        };
        for &inner in body {
            self.op(inner)?;
        }
        let yielded = self.func.op(last).operands.clone();
        yielded
            .into_iter()
            .map(|v| match self.get(id, v)? {
                Lowered::Scalar(r) => Ok(r),
                _ => Err(self.invalid(id, "a combine function yields scalars")),
            })
            .collect()
    }
}
