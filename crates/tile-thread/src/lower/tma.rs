//! The TMA in a pipelined loop (`software_pipeline.rs`) whose `dot`s run on
//! tensor cores, on a target with it ([`super::LowerOptions::tma`]): each
//! stage's operand tiles are copied by one thread with
//! `cp.async.bulk.tensor`, box by box, instead of by every thread with
//! `cp.async`, and each stage has an mbarrier that the copies complete on.
//!
//! A tile `[R, C]` of a 2-D tensor is staged in blocks
//! (`OperandLayout::Blocks`); where its blocks are `W` columns of 128
//! bytes (64 16-bit elements, 128 8-bit ones, 32 `f32`), that is `C / W` blocks of
//! `R` rows under the 128-byte swizzle, exactly what a TMA box of `R` rows
//! of `W` elements writes (`tile_abi::tma`). So the partition at `(i, j)`
//! is `C / W` boxes, box `b` at column `C·j + W·b` of row `R·i`, landing
//! at element `b·R·W` of the stage. Boxes over
//! the tensor's edge (or at negative coordinates) are zero-filled, which is
//! `load_masked`'s `zero` padding; unmasked loads keep `cp.async` (their
//! bounds checks stay where they are).
//!
//! `wgmma` and `tcgen05.mma` read such blocks through their descriptors.
//! `mma.sync` reads them with `ldmatrix` ([`Lowerer::tma_blocks`]): the
//! 8 rows of an `ldmatrix` phase, consecutive in a block, fall in 8
//! different 16-byte chunks under the swizzle, as in its own swizzled rows
//! (which are these blocks when `C = W`). Its TF32 and FP8 B, read element
//! by element along 4 rows, stay in their own swizzles and on `cp.async`.
//!
//! ```text
//! before the loop:  if tid == 0 { mbarrier.init(bar[s], 1) for every stage s };  fence.proxy.async;  barrier
//!                   for s in 0..S-1: if lo + s·step < hi { issue iteration lo + s·step into stage s }
//! iteration i:      mbarrier.wait(bar[i % S], parity (i / S) % 2);  barrier
//!                   if next < hi { issue iteration next into stage (i + S − 1) % S }
//! issue:            if tid == 0 { mbarrier.expect_tx(bar[stage], bytes of the stage); tma.load each box }
//! ```
//!
//! A stage's barrier completes one phase per use, so the `k`-th use of
//! stage `s` (iteration `s + k·S`) waits for parity `k % 2`. The barrier
//! after the wait keeps a stage from being refilled while a thread still
//! reads it (the `wgmma`s of the last iteration were waited for by every
//! thread before it). The barriers' allocation is never reused for data (an
//! mbarrier's memory must be invalidated first).

use super::copies::{is_transposed, product_operands};
use super::operand_swizzle::OperandLayout;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::TensorDot;
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_abi::tma::TmaBox;
use tile_hw::mma::MmaFamily;
use tile_ir::{BinaryOp, CmpPred, DType, OpId, OpKind, Padding, Scalar};

/// How one prefetched operand is copied by the TMA.
#[derive(Clone, Debug)]
pub(super) struct TmaCopy {
    /// The tensor parameter.
    param: usize,
    /// The tile's rows and columns.
    tile: [usize; 2],
    /// The columns of one box: 128 bytes of the elements.
    box_cols: usize,
    /// The bytes of an element.
    element_bytes: usize,
}

impl TmaCopy {
    /// The bytes one stage of it holds.
    fn bytes(&self) -> usize {
        self.tile[0] * self.tile[1] * self.element_bytes
    }
}

/// A pipeline's TMA state: a barrier per stage, and the register that
/// tells thread 0, which issues the copies.
#[derive(Clone, Copy, Debug)]
pub(super) struct TmaStages {
    bars: SharedId,
    elected: Reg,
}

impl Lowerer<'_> {
    /// The TMA's blocks of 128-byte rows for a prefetched tile of `rows`
    /// rows that `mma.sync` alone reads, each reader (`(dot, operand)`)
    /// with `ldmatrix`: an A, a K-major B, or a B of 16-bit elements
    /// (the module docs). `None` without the TMA, or for another reader.
    pub(super) fn tma_blocks(
        &self,
        readers: &[(OpId, usize)],
        [rows, _]: [usize; 2],
    ) -> Option<OperandLayout> {
        if !self.tma {
            return None;
        }
        let mut bytes = None;
        for &(dot, which) in readers {
            let Some(TensorDot::Mma(plan)) = self.tensor_plan(dot) else {
                return None;
            };
            let size = plan.kind.operand_dtype().size_bytes();
            let operands = product_operands(self.func.op(dot));
            let flipped = operands.is_some_and(|o| is_transposed(self.func, o[which]));
            let by_ldmatrix = which == 0 || flipped || size == 2;
            if plan.kind.family() != MmaFamily::MmaSync || !by_ldmatrix {
                return None;
            }
            bytes = Some(size);
        }
        let bytes = bytes?;
        Some(OperandLayout::Blocks {
            rows,
            width: 128 / bytes,
            bytes,
        })
    }

    /// How the deferred `load`, staged as `place`, is copied by the TMA, if
    /// it can be: a `load_masked` with `zero` padding of a partition view
    /// (no window) of a 2-D tensor into blocks of 128-byte rows,
    /// whose tile has a multiple of 8 rows (at most 256) and of the blocks'
    /// columns.
    pub(super) fn tma_copy(
        &mut self,
        load: OpId,
        place: OperandLayout,
    ) -> Result<Option<TmaCopy>, LowerError> {
        let op = self.func.op(load);
        let masked_zero = matches!(
            op.kind,
            OpKind::LoadMasked {
                padding: Padding::Zero
            }
        );
        let OperandLayout::Blocks { width, bytes, .. } = place else {
            return Ok(None);
        };
        if !self.tma || !masked_zero {
            return Ok(None);
        }
        // A window's box would start at its offsets and stop at the
        // tensor's edges, not the window's: windows take `cp.async`.
        let Lowered::PartitionView {
            param,
            tile,
            window: None,
        } = self.get(load, op.operands[0])?
        else {
            return Ok(None);
        };
        // A tensor of an array has no tensor map: the runtime builds maps
        // for the tensor parameters alone.
        if !matches!(
            self.program.params[param].kind,
            crate::program::ParamKind::Tensor(_)
        ) {
            return Ok(None);
        }
        let dtype = self.func.ty(op.results[0]).dtype();
        let &[rows, cols] = tile.dims() else {
            return Ok(None);
        };
        // Blocks of whole 128-byte rows, as the box writes them.
        let fits = TmaBox::new(dtype, rows).is_some_and(|b| b.cols == width)
            && dtype.size_bytes() == bytes
            && rows.is_multiple_of(8)
            && cols.is_multiple_of(width);
        Ok(fits.then_some(TmaCopy {
            param,
            tile: [rows, cols],
            box_cols: width,
            element_bytes: bytes,
        }))
    }

    /// Before a loop whose copies go through the TMA: an mbarrier per stage
    /// (a fresh allocation), initialized by thread 0 and visible to every
    /// thread and to the asynchronous proxy after the barrier.
    pub(super) fn tma_barriers(&mut self, stages: usize) -> TmaStages {
        let bars = self.program.alloc_shared(DType::U64, stages);
        let tid = self.thread_id();
        let zero = self.i32c(0);
        let elected = self.emit(ThreadOpKind::Cmp(CmpPred::Eq), vec![tid, zero], DType::Bool);
        let one = self.i32c(1);
        for s in 0..stages {
            let index = self.i32c(s as i64);
            self.emit_op(
                ThreadOpKind::MbarrierInit { alloc: bars },
                vec![index, one, elected],
                &[],
            );
        }
        self.emit_op(ThreadOpKind::FenceProxyAsync, vec![], &[]);
        self.barrier();
        TmaStages { bars, elected }
    }

    /// Thread 0's copies of one stage: `expect_tx` of all their bytes on
    /// the stage's barrier, then every box of every operand, `copies[n]` of
    /// the partition at `indices[n]` (`i64`) into `allocs[n]` from element
    /// `offsets[n]`.
    pub(super) fn tma_issue(
        &mut self,
        TmaStages { bars, elected }: TmaStages,
        stage: Reg,
        copies: &[(&TmaCopy, Vec<Reg>, SharedId, Reg)],
    ) {
        let bytes: usize = copies.iter().map(|(c, ..)| c.bytes()).sum();
        let bytes = self.i32c(bytes as i64);
        self.emit_op(
            ThreadOpKind::MbarrierExpectTx { alloc: bars },
            vec![stage, bytes, elected],
            &[],
        );
        for (copy, indices, alloc, offset) in copies {
            let ([rows, cols], box_cols) = (copy.tile, copy.box_cols);
            let [i, j] = [0, 1].map(|d| {
                let extent = self.constant(Scalar::I64(copy.tile[d] as i64));
                let origin = self.binary(BinaryOp::Mul, indices[d], extent);
                self.cast(origin, DType::I32)
            });
            for b in 0..cols / box_cols {
                let column = if b == 0 {
                    j
                } else {
                    let shift = self.i32c((b * box_cols) as i64);
                    self.binary(BinaryOp::Add, j, shift)
                };
                let at = if b == 0 {
                    *offset
                } else {
                    let block = self.i32c((b * rows * box_cols) as i64);
                    self.binary(BinaryOp::Add, *offset, block)
                };
                let kind = ThreadOpKind::TmaLoad {
                    param: copy.param,
                    rows: rows as u16,
                    alloc: *alloc,
                    bar: bars,
                };
                self.emit_op(kind, vec![at, column, i, stage, elected], &[]);
            }
        }
    }

    /// At the top of iteration `iv` (`i64`) of a loop from `lo` by `step`
    /// (`i64`) over `stages` stages: every thread waits for the stage's
    /// copies, then the barrier.
    pub(super) fn tma_wait(
        &mut self,
        TmaStages { bars, .. }: TmaStages,
        (iv, lo, step): (Reg, Reg, Reg),
        (stage, stages): (Reg, usize),
    ) {
        let done = self.binary(BinaryOp::Sub, iv, lo);
        let iteration = self.binary(BinaryOp::Div, done, step);
        let s = self.constant(Scalar::I64(stages as i64));
        let uses = self.binary(BinaryOp::Div, iteration, s);
        let one = self.constant(Scalar::I64(1));
        let parity = self.binary(BinaryOp::And, uses, one);
        let parity = self.cast(parity, DType::I32);
        self.emit_op(
            ThreadOpKind::MbarrierWait { alloc: bars },
            vec![stage, parity],
            &[],
        );
        self.barrier();
    }
}
