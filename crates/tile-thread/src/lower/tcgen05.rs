//! `dot` on Blackwell's `tcgen05.mma`, accumulating in tensor memory
//! (`layout_assign/tcgen05.rs` for which dots, and the accumulator's
//! layout; [`tile_hw::tcgen05`] for the instructions).
//!
//! A kernel with such a dot allocates tensor memory once, at its start:
//! warp 0's `tmem.alloc` of the columns its widest accumulator takes (a
//! power of two, at least 32), and thread 0's `mbarrier.init` of the
//! barrier the products complete on, both visible after a barrier, when
//! every thread reads the address; at its end, after a barrier, warp 0
//! frees the columns.
//!
//! Each dot then moves its accumulator through tensor memory: every
//! thread stores its registers (`tmem.store`, its rows and its
//! warpgroup's columns), a barrier orders them before thread 0 issues
//! every instruction of the product (per `k`-step of 16, per row block of
//! 128, per `n` columns of B; the operands as `wgmma` has them staged, the
//! instruction accumulating), `tcgen05.commit_wait` has every thread wait
//! for them, and every thread loads its registers back.

use super::dot::{OperandA, StagedOperands};
use super::{LowerError, Lowerer};
use crate::layout_assign::{Tcgen05Dot, TensorDot};
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_hw::tcgen05::{allocation_columns, K, M};
use tile_hw::wgmma::Major;
use tile_ir::{BinaryOp, CmpPred, DType, OpId, OpKind, Scalar};

/// The `k` of a row of a K-major B's staged blocks: 128 bytes of 16-bit
/// elements.
const B_ROW: usize = 64;

/// The most columns one `tmem.load` or `tmem.store` moves.
const MOST_COLUMNS: usize = 128;

/// The kernel's tensor memory, once allocated.
#[derive(Clone, Copy, Debug)]
pub(super) struct TensorMemory {
    /// The allocation's address (`i32`).
    base: Reg,
    /// The columns allocated.
    columns: u16,
    /// The mbarrier (one, in its own allocation) the products complete on.
    bar: SharedId,
    /// Whether the thread is thread 0, which issues the products.
    elected: Reg,
}

impl Lowerer<'_> {
    /// The tensor-memory columns the kernel's `tcgen05.mma` dots need at
    /// most, if it has any.
    pub(super) fn tensor_memory_columns(&self) -> Option<usize> {
        let mut most = None;
        self.func.walk(&mut |id: OpId| {
            if let (OpKind::Dot { .. }, Some(TensorDot::Tcgen05(plan))) =
                (&self.func.op(id).kind, self.tensor_plan(id))
            {
                most = Some(most.unwrap_or(0).max(plan.columns()));
            }
        });
        most
    }

    /// At the kernel's start: allocates `columns` of tensor memory and the
    /// products' mbarrier (the module docs).
    pub(super) fn allocate_tensor_memory(&mut self, columns: usize) -> Result<(), LowerError> {
        let columns = allocation_columns(columns)
            .and_then(|c| u16::try_from(c).ok())
            .ok_or_else(|| LowerError::Invalid {
                op: "kernel".into(),
                reason: format!("{columns} columns of tensor memory, past its 512"),
            })?;
        let slot = self.program.alloc_shared(DType::I32, 1);
        let bar = self.program.alloc_shared(DType::U64, 1);
        let tid = self.thread_id();
        let zero = self.i32c(0);
        let elected = self.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![tid, zero], DType::Bool);
        let one = self.i32c(1);
        let alloc = ThreadOpKind::TmemAlloc { columns, slot };
        self.emit_op(alloc, vec![zero], &[]);
        let init = ThreadOpKind::MbarrierInit { alloc: bar };
        self.emit_op(init, vec![zero, one, elected], &[]);
        self.barrier();
        let load = ThreadOpKind::LoadShared {
            alloc: slot,
            width: 1,
        };
        let base = self.emit(load, vec![zero], DType::I32);
        self.tensor_memory = Some(TensorMemory {
            base,
            columns,
            bar,
            elected,
        });
        Ok(())
    }

    /// At the kernel's end: frees the tensor memory, once every thread is
    /// done with it.
    pub(super) fn free_tensor_memory(&mut self) {
        if let Some(tm) = self.tensor_memory {
            self.barrier();
            let dealloc = ThreadOpKind::TmemDealloc {
                columns: tm.columns,
            };
            self.emit_op(dealloc, vec![tm.base], &[]);
        }
    }

    /// The accumulator registers `acc` (in `plan.layout`) after `a · b`,
    /// for `a: [M, K]` and `b: [K, N]` staged as `staged` says (the module
    /// docs).
    pub(super) fn tcgen05_steps(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        staged: &StagedOperands,
        (k, n): (usize, usize),
        acc: &[Reg],
    ) -> Result<Vec<Reg>, LowerError> {
        let Some(tm) = self.tensor_memory else {
            return Err(self.invalid(id, "tcgen05.mma without tensor memory"));
        };
        let OperandA::Shared(a) = staged.a else {
            return Err(self.invalid(id, "tcgen05.mma with A in registers"));
        };
        let (m, per) = (plan.layout.shape[0], plan.thread_columns());
        let chunk = 1 << per.trailing_zeros().min(MOST_COLUMNS.trailing_zeros());
        // The columns of the thread's warpgroup's share.
        let tid = self.thread_id();
        let group = self.hoist_with_const(BinaryOp::Div, tid, 128);
        let share = self.hoist_with_const(BinaryOp::Mul, group, per as i64);
        let own = self.hoist_binary(BinaryOp::Add, tm.base, share);
        let pieces: Vec<(usize, usize)> = (0..m / M)
            .flat_map(|i| (0..per).step_by(chunk).map(move |c| (i, c)))
            .collect();
        for &(i, c) in &pieces {
            let at = self.tmem_column(own, i * n + c);
            let first = i * per + c;
            let mut operands = vec![at];
            operands.extend(&acc[first..first + chunk]);
            self.emit_op(ThreadOpKind::TmemStore, operands, &[]);
        }
        self.barrier();
        self.tcgen05_issue(plan, staged, (a, tm), (k, n));
        let commit = ThreadOpKind::Tcgen05CommitWait { bar: tm.bar };
        let zero = self.i32c(0);
        self.emit_op(commit, vec![zero, tm.elected], &[]);
        let mut regs = vec![acc[0]; acc.len()];
        for &(i, c) in &pieces {
            let at = self.tmem_column(own, i * n + c);
            let load = ThreadOpKind::TmemLoad {
                columns: chunk as u16,
            };
            let op = self.emit_op(load, vec![at], &vec![DType::F32; chunk]);
            let first = i * per + c;
            regs[first..first + chunk].copy_from_slice(&self.program.ops[op].results);
        }
        Ok(regs)
    }

    /// Thread 0's instructions of the product into the tensor memory of
    /// `tm`, A in `a`.
    fn tcgen05_issue(
        &mut self,
        plan: &Tcgen05Dot,
        staged: &StagedOperands,
        (a, tm): (SharedId, TensorMemory),
        (k, n): (usize, usize),
    ) {
        let m = plan.layout.shape[0];
        let (columns, width) = (plan.kind.n, plan.a_columns());
        let b_major = if staged.b_transposed {
            Major::K
        } else {
            Major::Mn
        };
        let kind = ThreadOpKind::Tcgen05Mma {
            kind: plan.kind.with_b_major(b_major),
            a,
            a_swizzle: plan.a_swizzle,
            b: staged.b,
        };
        let accumulate = self.constant(Scalar::Bool(true));
        let [stage_a, stage_b] = staged.offsets;
        for step in 0..k / K {
            // A: the step's 16 columns in block `k / W` of A's staging.
            let a_column = (step * K / width) * m * width + (step * K) % width;
            // B: the step's 16 rows of each block of `columns` `n`, or
            // (K-major) its 16 columns in the step's block of `B_ROW`.
            let (b_step, b_block) = match staged.b_transposed {
                true => (
                    (step * K / B_ROW) * n * B_ROW + (step * K) % B_ROW,
                    columns * B_ROW,
                ),
                false => (step * K * columns, k * columns),
            };
            for i in 0..m / M {
                let ia = self.staged_index(a_column + i * M * width, stage_a);
                for j in 0..n / columns {
                    let ib = self.staged_index(b_step + j * b_block, stage_b);
                    let d = self.tmem_column(tm.base, i * n + j * columns);
                    let operands = vec![ia, ib, d, accumulate, tm.elected];
                    self.emit_op(kind.clone(), operands, &[]);
                }
            }
        }
    }

    /// `index` plus a pipelined loop's stage offset, if any (`i32`).
    fn staged_index(&mut self, index: usize, stage: Option<Reg>) -> Reg {
        let index = self.i32c(index as i64);
        match stage {
            Some(stage) => self.binary(BinaryOp::Add, index, stage),
            None => index,
        }
    }

    /// `base + columns` (`i32`), hoisted.
    fn tmem_column(&mut self, base: Reg, columns: usize) -> Reg {
        match columns {
            0 => base,
            _ => self.hoist_with_const(BinaryOp::Add, base, columns as i64),
        }
    }
}
