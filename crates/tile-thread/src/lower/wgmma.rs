//! `dot` on Hopper's warpgroup MMA: `wgmma.m64nNkK` steps from the staged
//! operands, `N` the plan's instruction columns `n` (64, or the dot's `N`
//! below 64 with a K-major B: `layout_assign/wgmma.rs`), `K` 32 bytes of
//! the operands (16 f16 or bf16, 32 FP8).
//!
//! The operands are in shared memory in Hopper's canonical swizzled
//! layouts (`OperandLayout::Blocks`): A `[M, K]` in blocks of `W` `k`
//! (all of `K`, at most 128 bytes of it), K-major, under the swizzle of
//! rows of that many bytes (128, 64 or 32); B `[K, N]` in blocks of 64
//! `n`, N-major, 128-byte swizzled, or (a B that is the transpose of the
//! `[N, K]` tile its copies moved, or that is stored so from registers)
//! K-major in blocks of A's `W` `k` under A's swizzle (`imm-trans-b = 0`
//! for 16-bit operands); 8-row groups are 8 rows apart (the
//! descriptors' SBO). Warpgroup `g = (gm_i, gn_i)` owns the 64×`n` blocks
//! `(gm_i + gm·i, gn_i + gn·j)` of D; for each of them and each `k`-step
//! `s` it issues one instruction, whose A starts at row `64·(gm_i +
//! gm·i)`, column `K·s` of A's staging and whose B starts at row `K·s` of
//! block `gn_i + gn·j` of B's (K-major: at row `n·(gn_i + gn·j)`, column
//! `K·s`). One `wgmma.fence` before them (the accumulators were written by
//! other instructions), a `commit` after, and a `wait 0` that hands the
//! accumulators on: no use of them, and no write to the operands' buffers,
//! comes before the instructions are done.

use super::dot::{OperandA, StagedOperands};
use super::mma::fragments_in;
use super::{LowerError, Lowerer};
use crate::layout_assign::{DistLayout, WgmmaDot};
use crate::program::{DescriptorSwizzle, Reg, ThreadOpKind};
use tile_hw::wgmma::{register_a_element, Major, K, M, REGISTER_A_ELEMENTS, WARPGROUP};
use tile_ir::{BinaryOp, DType};

impl Lowerer<'_> {
    /// The accumulator registers `acc` (in `plan.layout`) after every
    /// `k`-step of `a · b`, for `a: [M, K]` (staged, or in registers) and
    /// `b: [K, N]` staged as `staged` says (in the layout of the module
    /// docs).
    pub(super) fn wgmma_steps(
        &mut self,
        plan: &WgmmaDot,
        staged: &StagedOperands,
        (k, n): (usize, usize),
        acc: &[Reg],
    ) -> Result<Vec<Reg>, LowerError> {
        let [gm, gn] = plan.groups;
        let (m, columns) = (plan.layout.shape[0], plan.kind.n);
        let (rep_m, rep_n) = (m / (M * gm), n / (columns * gn));
        let (a_swizzle, width) = (plan.a_swizzle, plan.a_columns());
        let (step_k, b_row) = (plan.kind.k(), plan.b_k_columns());
        let tid = self.thread_id();
        let group = self.hoist_with_const(BinaryOp::Div, tid, WARPGROUP as i64);
        let group_m = self.hoist_with_const(BinaryOp::Div, group, gn as i64);
        let group_n = self.hoist_with_const(BinaryOp::Rem, group, gn as i64);
        // The first element of the warpgroup's A rows and B block: B's
        // blocks are `k` rows of `columns` `n`, or (K-major) `columns` rows
        // `n` of `b_row` `k` each.
        let base_a = self.linear(&[(group_m, M * width)]);
        let b_block = match staged.b_transposed {
            true => columns * b_row,
            false => k * columns,
        };
        let base_b = self.linear(&[(group_n, b_block)]);
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
        for step in 0..k / step_k {
            // A: the step's `K` columns in block `k / W` of A's staging.
            let a_column = (step * step_k / width) * m * width + (step * step_k) % width;
            for rm in 0..rep_m {
                let (a, mut operands) = match &staged.a {
                    OperandA::Shared(alloc) => {
                        let index_a = at(self, base_a, a_column + rm * gm * M * width, stage_a);
                        (Some(*alloc), vec![index_a])
                    }
                    OperandA::Registers(fragments) => (None, fragments[step][rm].clone()),
                    OperandA::Tensor(_) => return Err(super::mma::tensor_a_elsewhere()),
                };
                let lead = operands.len();
                for rn in 0..rep_n {
                    // B: the step's `K` rows of block `gn_i + gn·rn`, or
                    // (K-major) its `K` columns in the step's block of
                    // `b_row` columns.
                    let b_step = match staged.b_transposed {
                        true => (step * step_k / b_row) * n * b_row + (step * step_k) % b_row,
                        false => step * step_k * columns,
                    };
                    let b_offset = rn * gn * b_block + b_step;
                    let index_b = at(self, base_b, b_offset, stage_b);
                    let first = per * (rn + rep_n * rm);
                    operands.truncate(lead);
                    operands.push(index_b);
                    operands.extend(&acc[first..first + per]);
                    let b_major = if staged.b_transposed {
                        Major::K
                    } else {
                        Major::Mn
                    };
                    let (kind, b) = (plan.kind.with_b_major(b_major), staged.b);
                    let kind = match a {
                        Some(a) => ThreadOpKind::Wgmma {
                            kind,
                            a,
                            a_swizzle,
                            b,
                        },
                        None => ThreadOpKind::WgmmaRegisterA { kind, b },
                    };
                    let op = self.emit_op(kind, operands.clone(), &vec![DType::F32; per]);
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
        Ok(self.program.ops[wait].results.clone())
    }

    /// The A fragments of `plan` (`[step][block row]`, each
    /// [`REGISTER_A_ELEMENTS`] in [`register_a_element`]'s order) among the
    /// registers `regs` of an operand tile of `K = k` columns in `layout`,
    /// or `None` unless every element of every fragment is one register of
    /// `layout` in every thread: a chained product's A where the previous
    /// product's accumulators left it (its 16-bit rounding in the same
    /// registers), as `mma.sync`'s (`mma.rs`).
    pub(super) fn chained_wgmma_fragments(
        &self,
        plan: &WgmmaDot,
        layout: &DistLayout,
        regs: &[Reg],
        k: usize,
    ) -> Option<Vec<Vec<Vec<Reg>>>> {
        let [gm, gn] = plan.groups;
        let m = plan.layout.shape[0];
        // The instruction's A in registers has no swizzle for B's to
        // follow: B is staged under the 128-byte one (MN-major, or K-major
        // of at least 64 `k`).
        let b128 = plan.kind.b_major == Major::Mn || plan.a_swizzle == DescriptorSwizzle::B128;
        if regs.len() != layout.registers()
            || layout.shape != [m, k]
            || !k.is_multiple_of(K)
            || plan.kind.k() != K
            || !b128
        {
            return None;
        }
        let threads = self.program.block_threads() as usize;
        // Where element `i` of block row `rm`'s fragment at `k`-step `step`
        // sits for thread `t`.
        let at = |t: usize, step: usize, rm: usize, i: usize| {
            let (row, col) = register_a_element(t % WARPGROUP, i);
            let group_m = t / WARPGROUP / gn;
            vec![(group_m + gm * rm) * M + row, step * K + col]
        };
        let counts = [k / K, m / (M * gm), REGISTER_A_ELEMENTS];
        fragments_in(layout, regs, threads, counts, at)
    }
}
