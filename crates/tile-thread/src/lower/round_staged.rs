//! TF32 operands rounded where `wgmma` and `tcgen05.mma` read them.
//!
//! A `tf32` dot rounds each `f32` operand element to TF32, to nearest with
//! ties away from zero (`round_tf32`, docs/semantics.md §6), while
//! `wgmma…tf32` and `tcgen05.mma.kind::tf32` read an element's top 19
//! bits and drop the rest: truncation. `mma.sync` takes its TF32 operands
//! from registers, where the lowering rounds them on the way
//! (`cvt.rna.tf32.f32`); the descriptor instructions read shared memory,
//! which copies (`cp.async`, the TMA) fill straight from global memory. So
//! once an operand is staged and visible to the block, the block rounds it
//! in place: each thread rewrites its share of 16-byte chunks
//! (`round.shared.tf32`: `ld.shared`, four `round_tf32`, `st.shared`), then
//! a `fence.proxy.async` (the instructions read through the asynchronous
//! proxy) and a barrier. An
//! operand staged from registers is rounded in registers before it is
//! stored, at no extra barrier.

use super::Lowerer;
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, UnaryOp};

/// A staged operand: its allocation, the offset of its first element there
/// (a pipelined loop's stage), and its length in elements.
pub(super) type StagedRegion = (SharedId, Option<Reg>, usize);

impl Lowerer<'_> {
    /// Rounds every element of each region to TF32 in place, then fences
    /// the asynchronous proxy and waits at a barrier (the module docs). The
    /// regions' bytes must be visible to every thread already.
    pub(super) fn round_staged_tf32(&mut self, regions: &[StagedRegion]) {
        let threads = self.program.block_threads() as usize;
        let tid = self.thread_id();
        for &(alloc, offset, len) in regions {
            let width = if len.is_multiple_of(4) { 4 } else { 1 };
            let chunks = len / width;
            let first = self.hoist_with_const(BinaryOp::Mul, tid, width as i64);
            for round in 0..chunks.div_ceil(threads) {
                // Chunk `tid + threads·round`: its first element, and
                // whether it is one (the last round may run past the end).
                // (A thread past it reads nothing: the op is masked whole.)
                let start = self.i32c((round * threads * width) as i64);
                let mut index = self.binary(BinaryOp::Add, first, start);
                let inside = match (round + 1) * threads <= chunks {
                    true => self.constant(tile_ir::Scalar::Bool(true)),
                    false => {
                        let end = self.i32c(len as i64);
                        let cmp = ThreadOpKind::Cmp(CmpPred::Lt);
                        self.emit(cmp, vec![index, end], DType::Bool)
                    }
                };
                if let Some(offset) = offset {
                    index = self.binary(BinaryOp::Add, index, offset);
                }
                let round = ThreadOpKind::RoundSharedTf32 {
                    alloc,
                    width: width as u8,
                };
                self.emit_op(round, vec![index, inside], &[]);
            }
        }
        self.emit_op(ThreadOpKind::FenceProxyAsync, vec![], &[]);
        self.barrier();
    }

    /// Each of the `f32` registers rounded to TF32.
    pub(super) fn rounded_tf32(&mut self, regs: &[Reg]) -> Vec<Reg> {
        let round = ThreadOpKind::Unary(UnaryOp::RoundTf32);
        regs.iter()
            .map(|&r| self.emit(round.clone(), vec![r], DType::F32))
            .collect()
    }
}
