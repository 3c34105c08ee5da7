//! Stores in 16-byte vectors from layouts that hold less of a row per
//! thread.
//!
//! A tensor-core accumulator holds two consecutive columns per thread and
//! row (`mma.sync`, `wgmma`) or one (MFMA's columns across lanes), so a
//! store of it, or of what the epilogue computes from it in its layout,
//! moves 4 or 8 bytes per access: a 128×128 f16 tile takes 32 stores per
//! thread where 16-byte vectors take 8, each warp instruction writing half
//! sectors. A store of a tile in an accumulator's layout (blocked layouts
//! already move what their groups allow) whose warp writes less than a
//! 32-byte sector of a row per access (f16 and bf16 on `mma.sync` and
//! `wgmma`; their f32 pairs and MFMA's rows of 32 lanes fill sectors)
//! converts it first to the blocked layout of 16-byte vectors
//! ([`DistLayout::blocked`]) when that layout moves more per access and
//! the conversion costs no shared memory: it
//! goes through warp shuffles or a register renaming where those suffice,
//! else through the bytes of a released allocation large enough to hold
//! its staging (the stages of the `dot`'s pipelined loop, dead after it),
//! never a new one. This is what Triton does for its epilogues on sm_80.
//! In a persistent kernel's loop over tiles, the staging's addresses
//! depend on the thread's index alone; NVPTX's code generation moves them
//! back after the K loop (`tile_codegen`'s `loop_sink`), where LLVM would
//! keep them live across it.

use super::contiguity::vector_width;
use super::placement::StagedIndices;
use super::shared::register_selection;
use super::Lowerer;
use crate::layout_assign::{DistLayout, LayoutKind};
use crate::program::{Reg, ThreadOpKind};
use std::rc::Rc;
use tile_ir::layout::Swizzle;
use tile_ir::DType;

impl Lowerer<'_> {
    /// The layout and registers a tile of `dtype` in `layout` (registers
    /// `regs`) is stored from: a tensor-core accumulator's layout converted
    /// to 16-byte vectors where that moves more per access and its staging
    /// fits released shared memory (see the module doc), else unchanged.
    pub(super) fn store_layout(
        &mut self,
        dtype: DType,
        layout: Rc<DistLayout>,
        regs: Vec<Reg>,
    ) -> (Rc<DistLayout>, Vec<Reg>) {
        let Some(vectors) = wider_store_layout(&layout, dtype, self.program.num_warps) else {
            return (layout, regs);
        };
        let threads = self.program.block_threads();
        if let Some(renamed) = register_selection(&layout, &vectors, threads, |c| c.to_vec()) {
            let regs = renamed.into_iter().map(|u| regs[u]).collect();
            return (Rc::new(vectors), regs);
        }
        if let Some(converted) = self.shuffle_convert(dtype, &layout, &regs, &vectors) {
            return (Rc::new(vectors), converted);
        }
        let swizzle = self.vector_staging_swizzle(dtype, &layout.shape);
        let staging = swizzle.map_or(layout.shape.iter().product(), |(_, len)| len);
        let fits = self
            .reusable_bytes(dtype)
            .is_some_and(|bytes| bytes >= staging * dtype.size_bytes());
        if !fits {
            return (layout, regs);
        }
        let converted = self.convert_in_vectors(dtype, (&layout, &regs), &vectors, swizzle);
        (Rc::new(vectors), converted)
    }

    /// The registers of a tile of `from` in layout `to` through shared
    /// memory staged through `swizzle` (which must keep 16-byte chunks
    /// whole), written and read in the widest vectors each layout allows
    /// ([`vector_groups`]).
    fn convert_in_vectors(
        &mut self,
        dtype: DType,
        (from, regs): (&DistLayout, &[Reg]),
        to: &DistLayout,
        swizzle: Option<(Swizzle, usize)>,
    ) -> Vec<Reg> {
        let (sw, len) = match swizzle {
            Some((sw, len)) => (Some(sw), len),
            None => (None, from.shape.iter().product()),
        };
        let source = self.coords(from);
        let groups = vector_groups(from, dtype, self.program.block_threads());
        let mut stored = StagedIndices::new(from, &source.linear, sw);
        let alloc = self.stage_by(dtype, len, |s, alloc| {
            s.store_groups(alloc, (regs, &source.owner), groups, |s, v| {
                s.placed_index(&mut stored, v)
            });
        });
        let target = self.coords(to);
        let groups = vector_groups(to, dtype, self.program.block_threads());
        let mut loaded = StagedIndices::new(to, &target.linear, sw);
        let mut converted = Vec::with_capacity(to.registers());
        for g in (0..to.registers()).step_by(groups) {
            let all_live = target.live[g..g + groups].iter().all(|&l| self.is_true(l));
            if !all_live {
                for v in g..g + groups {
                    let index = self.placed_index(&mut loaded, v);
                    converted.push(self.read_shared(alloc, dtype, index, target.live[v]));
                }
                continue;
            }
            let index = self.placed_index(&mut loaded, g);
            let load = ThreadOpKind::LoadShared {
                alloc,
                width: groups as u8,
            };
            let op = self.emit_op(load, vec![index], &vec![dtype; groups]);
            converted.extend(self.program.ops[op].results.clone());
        }
        self.release_shared(alloc);
        converted
    }
}

/// The blocked layout of 16-byte vectors that a tile of `dtype` in
/// `layout`, for blocks of `num_warps` warps, is better written from: for
/// a tensor-core accumulator's layout whose warp writes less than a sector
/// of a row per access, where that layout moves more (see the module doc).
/// Blocked layouts already move the widths their groups allow
/// (`layout_assign/vectors.rs`). A scatter's layout assignment and lowering
/// ask it too.
pub(crate) fn wider_store_layout(
    layout: &DistLayout,
    dtype: DType,
    num_warps: u32,
) -> Option<DistLayout> {
    if layout.kind != LayoutKind::MmaAccumulator {
        return None;
    }
    let wide = 16 / dtype.size_bytes().max(1);
    let vectors = DistLayout::blocked(&layout.shape, num_warps, wide).ok()?;
    let width = vector_width(&vectors, dtype);
    let wider = width.is_power_of_two()
        && width > vector_width(layout, dtype)
        && row_segment_bytes(layout, dtype) < SECTOR_BYTES;
    wider.then_some(vectors)
}

/// The bytes of global memory's unit of access: a warp's store that
/// writes whole sectors of a row gains nothing from wider vectors.
const SECTOR_BYTES: usize = 32;

/// The bytes of one row that the first warp's first access of a tile of
/// `dtype` in `layout` writes: its lanes on the row of lane 0, each moving
/// a vector of [`vector_width`] elements (the lanes of a row are
/// consecutive in the accumulators: a quad's pairs in `mma.sync`'s, 32
/// columns in MFMA's).
fn row_segment_bytes(layout: &DistLayout, dtype: DType) -> usize {
    let inner = layout.shape.len() - 1;
    let row = |t: usize| {
        let (mut c, _, _) = layout.coordinate(t, 0);
        c.truncate(inner);
        c
    };
    let first = row(0);
    let lanes = (0..crate::program::WARP_SIZE as usize)
        .filter(|&t| row(t) == first)
        .count();
    lanes * vector_width(layout, dtype) * dtype.size_bytes()
}

/// The registers of a tile of `dtype` in `layout` that one shared access
/// moves: the largest power of two dividing [`vector_width`] when every
/// thread's groups start at a column that is a multiple of it (so each is
/// an aligned vector), else 1.
pub(super) fn vector_groups(layout: &DistLayout, dtype: DType, threads: u32) -> usize {
    let width = 1 << vector_width(layout, dtype).trailing_zeros();
    let inner = layout.shape.len() - 1;
    let aligned = (0..threads as usize).all(|t| {
        (0..layout.registers())
            .step_by(width)
            .all(|v| layout.coordinate(t, v).0[inner].is_multiple_of(width))
    });
    if aligned {
        width
    } else {
        1
    }
}
