//! `dot` on Hopper's warpgroup MMA: `wgmma.m64n64k16` steps from the
//! staged operands.
//!
//! The operands are in shared memory in Hopper's canonical 128-byte
//! swizzled layout (`OperandLayout::Blocks64`): A `[M, K]` in blocks of 64
//! `k`, K-major; B `[K, N]` in blocks of 64 `n`, N-major; each block's rows
//! 128 bytes apart, so 8-row groups are 1024 bytes apart (the descriptors'
//! SBO). Warpgroup `g = (gm_i, gn_i)` owns the 64×64 blocks `(gm_i + gm·i,
//! gn_i + gn·j)` of D; for each of them and each `k`-step of 16 it issues
//! one instruction, whose A starts at row `64·(gm_i + gm·i)`, column `16s`
//! of A's staging and whose B starts at row `16s` of block `gn_i + gn·j` of
//! B's. One `wgmma.fence` before them (the accumulators were written by
//! other instructions), a `commit` after, and a `wait 0` that hands the
//! accumulators on: no use of them, and no write to the operands' buffers,
//! comes before the instructions are done.

use super::dot::StagedOperands;
use super::operand_swizzle::OperandLayout;
use super::Lowerer;
use crate::layout_assign::{WgmmaDot, WGMMA_N};
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_hw::wgmma::{K, M, WARPGROUP};
use tile_ir::{BinaryOp, DType};

impl Lowerer<'_> {
    /// The accumulator registers `acc` (in `plan.layout`) after every
    /// `k`-step of `a · b`, for `a: [M, K]` and `b: [K, N]` staged in
    /// `allocs` as `staged` says (in the layout of the module docs).
    pub(super) fn wgmma_steps(
        &mut self,
        plan: &WgmmaDot,
        [alloc_a, alloc_b]: [SharedId; 2],
        staged: &StagedOperands,
        (k, n): (usize, usize),
        acc: &[Reg],
    ) -> Vec<Reg> {
        let [gm, gn] = plan.groups;
        let m = plan.layout.shape[0];
        let (rep_m, rep_n) = (m / (M * gm), n / (WGMMA_N * gn));
        debug_assert!(staged
            .layouts
            .iter()
            .all(|l| matches!(l, OperandLayout::Blocks64 { .. })));
        let tid = self.thread_id();
        let group = self.hoist_with_const(BinaryOp::Div, tid, WARPGROUP as i64);
        let group_m = self.hoist_with_const(BinaryOp::Div, group, gn as i64);
        let group_n = self.hoist_with_const(BinaryOp::Rem, group, gn as i64);
        // The first element of the warpgroup's A rows and B block.
        let base_a = self.linear(&[(group_m, M * 64)]);
        let base_b = self.linear(&[(group_n, k * WGMMA_N)]);
        let [stage_a, stage_b] = staged.offsets;
        let at = |s: &mut Self, base: Reg, offset: usize, stage: Option<Reg>| {
            let c = s.i32c(offset as i64);
            let index = s.binary(BinaryOp::Add, base, c);
            match stage {
                Some(stage) => s.binary(BinaryOp::Add, index, stage),
                None => index,
            }
        };
        let per = plan.kind.accumulators();
        let mut acc = acc.to_vec();
        self.emit_op(ThreadOpKind::WgmmaFence, vec![], &[]);
        for step in 0..k / K {
            // A: the step's 16 columns in block `k / 64` of A's staging.
            let a_column = (step * K / 64) * m * 64 + (step * K) % 64;
            for rm in 0..rep_m {
                let index_a = at(self, base_a, a_column + rm * gm * M * 64, stage_a);
                for rn in 0..rep_n {
                    // B: the step's 16 rows of block `gn_i + gn·rn`.
                    let b_offset = rn * gn * k * WGMMA_N + step * K * WGMMA_N;
                    let index_b = at(self, base_b, b_offset, stage_b);
                    let first = per * (rn + rep_n * rm);
                    let mut operands = vec![index_a, index_b];
                    operands.extend(&acc[first..first + per]);
                    let kind = ThreadOpKind::Wgmma {
                        kind: plan.kind,
                        a: alloc_a,
                        b: alloc_b,
                    };
                    let op = self.emit_op(kind, operands, &vec![DType::F32; per]);
                    let results = self.program.ops[op].results.clone();
                    acc[first..first + per].copy_from_slice(&results);
                }
            }
        }
        self.emit_op(ThreadOpKind::WgmmaCommit, vec![], &[]);
        let wait = self.emit_op(
            ThreadOpKind::WgmmaWait { pending: 0 },
            acc.clone(),
            &vec![DType::F32; acc.len()],
        );
        self.program.ops[wait].results.clone()
    }
}
