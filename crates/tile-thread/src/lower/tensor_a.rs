//! A `tcgen05.mma` whose `a` the kernel computed (attention's `p`, the
//! accumulator of an earlier product after elementwise work and a cast to
//! f16 or bf16) reads it from tensor memory instead of shared memory.
//!
//! Such an `a: [M, K]` arrives in registers already laid out as a
//! tensor-memory accumulator is read (`layout_assign/tcgen05.rs`): thread
//! `T` of warpgroup `g` holds row `128·i + 32·(w % 4) + l` of row block
//! `i` and the `k` of its warpgroup's share, `g·K/G` to `(g + 1)·K/G`.
//! Those are the lanes and columns `tcgen05.st.32x32b` writes, and A in
//! tensor memory has its rows in D's lanes and two 16-bit `k` packed into
//! each 32-bit column ([`tile_hw::tcgen05::tensor_a_element`]). So each
//! thread packs its pairs of `k` and stores them, no conversion and no
//! shared memory between; thread 0 then issues `tcgen05.mma` with A's
//! address. A sits in the columns after the dot's accumulator: row block
//! `i` at `N·M/128 + i·K/2` (`tcgen05.rs` allocates both), and is free
//! again once the product's `tcgen05.commit_wait` returns.
//!
//! Triton does the same on Blackwell (its `tmem` operand for `p`); it
//! saves attention's `[128, 128]` f16 staging of `p`, 32 KiB of shared
//! memory, and the stores and barrier that fill it.

use super::dot::{OperandA, StagedOperands};
use super::{LowerError, Lowerer};
use crate::layout_assign::{DistLayout, Tcgen05Dot};
use crate::program::{DescriptorSwizzle, Reg, ThreadOpKind};
use tile_hw::tcgen05::{COLUMNS, M, WARP_LANES};
use tile_hw::wgmma::Major;
use tile_ir::{BinaryOp, OpId, OpKind};

/// The most columns one `tmem.store` moves.
const MOST_COLUMNS: usize = 128;

/// Which register of a tile in `layout` each thread stores as A of
/// `plan`'s dot of depth `k` in tensor memory: per row block, per column
/// of its share, the low `k` then the high one; the same register indices
/// in every thread, or `None` when the layout does not hold A that way.
pub(super) fn tensor_a_registers(
    plan: &Tcgen05Dot,
    layout: &DistLayout,
    k: usize,
    threads: usize,
) -> Option<Vec<usize>> {
    let (m, groups) = (plan.layout.shape[0], plan.groups);
    let share = k / groups;
    if plan.kind.dtype.size_bytes() != 2
        || layout.shape != [m, k]
        || !share.is_multiple_of(2)
        || threads != groups * 4 * WARP_LANES
    {
        return None;
    }
    let at = |t: usize, i: usize, e: usize| {
        let (w, l, g) = (t / WARP_LANES, t % WARP_LANES, t / (4 * WARP_LANES));
        vec![M * i + WARP_LANES * (w % 4) + l, g * share + e]
    };
    let holds = |t: usize, v: usize, want: &[usize]| {
        let (coord, live, _) = layout.coordinate(t, v);
        live && coord == want
    };
    let mut registers = Vec::with_capacity(m / M * share);
    for i in 0..m / M {
        for e in 0..share {
            let v = (0..layout.registers()).find(|&v| holds(0, v, &at(0, i, e)))?;
            if !(0..threads).all(|t| holds(t, v, &at(t, i, e))) {
                return None;
            }
            registers.push(v);
        }
    }
    Some(registers)
}

impl Lowerer<'_> {
    /// The columns of tensor memory the `dot` `id` takes for an `a` read
    /// from there, if it reads one: `a` is computed in the layout
    /// [`tensor_a_registers`] needs, and fits beside the accumulator, and B
    /// is staged under the 128-byte swizzle (the instruction's A in tensor
    /// memory has no swizzle of its own for B's to follow: an MN-major B,
    /// or a K-major one of at least 64 `k`).
    pub(super) fn tensor_a_columns(&self, id: OpId, plan: &Tcgen05Dot) -> Option<usize> {
        if plan.kind.b_major == Major::K && plan.a_swizzle != DescriptorSwizzle::B128 {
            return None;
        }
        let op = self.func.op(id);
        let (OpKind::Dot { .. }, Some(&a)) = (&op.kind, op.operands.first()) else {
            return None;
        };
        let layout = self.plan.values.get(&a)?;
        let k = *layout.shape.get(1)?;
        let threads = self.program.block_threads() as usize;
        tensor_a_registers(plan, layout, k, threads)?;
        let columns = layout.shape[0] / M * k / 2;
        (plan.columns() + columns <= COLUMNS).then_some(columns)
    }

    /// The `a` of the `dot` `id` on `plan`, from its registers `regs` in
    /// `layout`, packed for tensor memory, if it goes there.
    pub(super) fn tensor_a(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        (layout, regs): (&DistLayout, &[Reg]),
    ) -> Option<OperandA> {
        self.tensor_a_columns(id, plan)?;
        let threads = self.program.block_threads() as usize;
        let order = tensor_a_registers(plan, layout, layout.shape[1], threads)?;
        let values = order.iter().map(|&v| regs[v]).collect();
        Some(OperandA::Tensor(values))
    }

    /// Every thread's `tmem.store` of its part of `staged`'s A, if A goes
    /// to tensor memory (the caller orders them before the products by a
    /// barrier): whether it does.
    pub(super) fn store_tensor_a(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        staged: &StagedOperands,
        k: usize,
    ) -> Result<bool, LowerError> {
        let OperandA::Tensor(values) = &staged.a else {
            return Ok(false);
        };
        let share = k / plan.groups / 2;
        let chunk = 1 << share.trailing_zeros().min(MOST_COLUMNS.trailing_zeros());
        let own = self.tensor_a_base(id, plan)?;
        let tid = self.thread_id();
        let group = self.hoist_with_const(BinaryOp::Div, tid, 128);
        let offset = self.hoist_with_const(BinaryOp::Mul, group, share as i64);
        let own = self.hoist_binary(BinaryOp::Add, own, offset);
        for (i, block) in values.chunks(2 * share).enumerate() {
            for (c, pairs) in block.chunks(2 * chunk).enumerate() {
                let at = self.tmem_column(own, i * k / 2 + c * chunk);
                let mut operands = vec![at];
                operands.extend(pairs);
                self.emit_op(ThreadOpKind::TmemStoreHalves, operands, &[]);
            }
        }
        Ok(true)
    }

    /// The tensor-memory address of row block 0 of `plan`'s A: the column
    /// after its accumulator's.
    pub(super) fn tensor_a_base(&mut self, id: OpId, plan: &Tcgen05Dot) -> Result<Reg, LowerError> {
        let base = self.tensor_memory_base(id)?;
        Ok(self.tmem_column(base, plan.columns()))
    }
}
