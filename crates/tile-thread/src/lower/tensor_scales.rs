//! The scales of a `dot_scaled` on `tcgen05.mma`'s block-scaled form
//! (`kind::mxf8f6f4.block_scale`, [`tile_hw::tcgen05`]'s `block_scaled.rs`),
//! which reads them from tensor memory.
//!
//! A scale tile (`a_scale: [M, K/32]`, `b_scale: [N, K/32]`) whose load left
//! each thread the scales it stores (`layout_assign`'s
//! `tensor_memory_scale_layouts`) is held in those registers; any other is
//! staged row-major beside the operands, as on `mma.sync`
//! (`block_scales.rs`), and each thread loads its bytes back. Each thread
//! packs the bytes of its lane's rows into the images the instruction
//! reads and stores them (`tmem.store.bytes`): a side's image
//! holds, per block of its rows (128 of A's, the instruction's `N` of B's)
//! and per four groups of 32 `k`, the scale of row `r` of the block in
//! column `r / 32`, lane `r % 32` of every quarter of the lanes, byte `g %
//! 4` for group `g`. Warp `w` writes the quarter `w % 4`, so each warp of
//! a warpgroup writes the same words into its own lanes: the copies the
//! instruction needs in every quarter. Warpgroup `G` of the block's writes
//! its share of each block's columns (`scale_columns / groups` of them).
//! The images sit after the accumulator in tensor memory, A's first, and
//! are free again once the products' `tcgen05.commit_wait` returns.
//!
//! Instruction `s` of the product (32 `k`, one group) reads byte `s % 4`
//! of the images of its row block and column block for groups `4·(s / 4)`
//! on.

use super::block_scales::ScaleSource;
use super::dot::StagedOperands;
use super::{LowerError, Lowerer};
use crate::layout_assign::Tcgen05Dot;
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_hw::tcgen05::{scale_columns, GROUPS_PER_COLUMN, GROUP_K, M, WARP_LANES};
use tile_ir::{BinaryOp, DType, OpId};

/// The most columns one `tmem.store` moves.
const MOST_COLUMNS: usize = 128;

impl Lowerer<'_> {
    /// The tensor-memory addresses of `plan`'s scale images (A's, B's) at
    /// depth `k`: after the accumulator, A's first.
    pub(super) fn scale_image_bases(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        k: usize,
    ) -> Result<[Reg; 2], LowerError> {
        let base = self.tensor_memory_base(id)?;
        let a = self.tmem_column(base, plan.columns());
        let b = self.tmem_column(a, plan.scale_image_columns(k)[0]);
        Ok([a, b])
    }

    /// Every thread's stores of the staged scales of `staged` into
    /// `plan`'s images (the module docs), if the product is block-scaled;
    /// the caller orders them before the products by a barrier. Whether it
    /// stored any.
    pub(super) fn store_scale_images(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        staged: &StagedOperands,
        (k, n): (usize, usize),
    ) -> Result<bool, LowerError> {
        let Some(scales) = &staged.scales else {
            return Ok(false);
        };
        let bases = self.scale_image_bases(id, plan, k)?;
        let (groups, blocks) = (k / GROUP_K, [plan.layout.shape[0] / M, n / plan.kind.n]);
        let rows = [M, plan.kind.n];
        for which in 0..2 {
            let source = match &scales.sides[which] {
                ScaleSource::Held(regs) => Source::Held(regs.clone()),
                ScaleSource::Staged(alloc, _) => Source::Staged {
                    alloc: *alloc,
                    index: self.first_row_index(plan, rows[which], groups),
                },
                ScaleSource::Loose(..) => {
                    return Err(self.invalid(id, "block scales read before they are staged"))
                }
            };
            let image = Image {
                source,
                base: bases[which],
                rows: rows[which],
                blocks: blocks[which],
                groups,
            };
            self.store_image(plan, image);
        }
        Ok(true)
    }

    /// The thread's stores of one side's image.
    fn store_image(&mut self, plan: &Tcgen05Dot, image: Image) {
        let per_block = scale_columns(image.rows);
        let share = per_block / plan.groups;
        let sets = image.groups.div_ceil(GROUPS_PER_COLUMN);
        // Warpgroup `g` writes columns `g·share` on of each block's set, the
        // rows `32·(g·share + c) + l` of lane `l`.
        let tid = self.thread_id();
        let group = self.hoist_with_const(BinaryOp::Div, tid, 4 * WARP_LANES as i64);
        let first_column = self.hoist_with_const(BinaryOp::Mul, group, share as i64);
        let own = self.hoist_binary(BinaryOp::Add, image.base, first_column);
        let chunk = share.min(MOST_COLUMNS);
        for block in 0..image.blocks {
            for set in 0..sets {
                for c0 in (0..share).step_by(chunk) {
                    let mut values = Vec::with_capacity(chunk * GROUPS_PER_COLUMN);
                    for c in c0..c0 + chunk {
                        values.extend(match &image.source {
                            &Source::Staged { alloc, index } => {
                                let row = block * image.rows + WARP_LANES * c;
                                let at = row * image.groups + GROUPS_PER_COLUMN * set;
                                self.scale_bytes((alloc, image.groups), index, at, set)
                            }
                            Source::Held(regs) => {
                                let row = c + share * block;
                                held_bytes(regs, image.groups, (row, set))
                            }
                        });
                    }
                    let column = (block * sets + set) * per_block + c0;
                    let mut operands = vec![self.tmem_column(own, column)];
                    operands.extend(values);
                    self.emit_op(ThreadOpKind::TmemStoreBytes, operands, &[]);
                }
            }
        }
    }

    /// The index in a row-major staging of rows of `groups` scales of the
    /// thread's first row in a block of `rows`: `32·g·S + l`, `S` its
    /// warpgroup's share of the block's columns (the module docs).
    fn first_row_index(&mut self, plan: &Tcgen05Dot, rows: usize, groups: usize) -> Reg {
        let share = scale_columns(rows) / plan.groups;
        let tid = self.thread_id();
        let group = self.hoist_with_const(BinaryOp::Div, tid, 4 * WARP_LANES as i64);
        let lane = self.hoist_with_const(BinaryOp::Rem, tid, WARP_LANES as i64);
        let first = self.hoist_with_const(BinaryOp::Mul, group, (WARP_LANES * share) as i64);
        let row = self.hoist_binary(BinaryOp::Add, first, lane);
        self.hoist_with_const(BinaryOp::Mul, row, groups as i64)
    }

    /// The four bytes of one cell: groups `4·set` to `4·set + 3` of the
    /// thread's row, from element `index + at` of the staging `alloc` of
    /// rows of `groups` on; a group past the row's (never read) repeats its
    /// last.
    fn scale_bytes(
        &mut self,
        (alloc, groups): (SharedId, usize),
        index: Reg,
        at: usize,
        set: usize,
    ) -> Vec<Reg> {
        let offset = self.i32c(at as i64);
        let from = self.binary(BinaryOp::Add, index, offset);
        if groups.is_multiple_of(GROUPS_PER_COLUMN) {
            let load = ThreadOpKind::LoadShared {
                alloc,
                width: GROUPS_PER_COLUMN as u8,
            };
            let dtypes = [DType::F8E8M0; GROUPS_PER_COLUMN];
            let op = self.emit_op(load, vec![from], &dtypes);
            return self.program.ops[op].results.clone();
        }
        let real = (groups - GROUPS_PER_COLUMN * set).min(GROUPS_PER_COLUMN);
        let mut bytes = Vec::with_capacity(GROUPS_PER_COLUMN);
        for b in 0..real {
            let at = match b {
                0 => from,
                _ => {
                    let b = self.i32c(b as i64);
                    self.binary(BinaryOp::Add, from, b)
                }
            };
            let load = ThreadOpKind::LoadShared { alloc, width: 1 };
            bytes.push(self.emit(load, vec![at], DType::F8E8M0));
        }
        let last = bytes[real - 1];
        bytes.resize(GROUPS_PER_COLUMN, last);
        bytes
    }
}

/// The four bytes of one cell from the held registers `regs` of rows of
/// `groups`: groups `4·set` on of the thread's row `row` (register `j +
/// groups·row` is its group `j`), a group past the row's repeating its
/// last.
fn held_bytes(regs: &[Reg], groups: usize, (row, set): (usize, usize)) -> Vec<Reg> {
    (0..GROUPS_PER_COLUMN)
        .map(|b| {
            let group = (GROUPS_PER_COLUMN * set + b).min(groups - 1);
            regs[groups * row + group]
        })
        .collect()
}

/// Where one side's scales are.
enum Source {
    /// In the thread's registers, as it stores them.
    Held(Vec<Reg>),
    /// Staged row-major, `[rows·blocks, groups]`.
    Staged {
        /// The staging.
        alloc: SharedId,
        /// The index of the thread's first row.
        index: Reg,
    },
}

/// One side's scales and image.
struct Image {
    /// The scales.
    source: Source,
    /// The image's address.
    base: Reg,
    /// The rows of a block.
    rows: usize,
    /// The blocks.
    blocks: usize,
    /// The groups of 32 `k` along a row.
    groups: usize,
}
