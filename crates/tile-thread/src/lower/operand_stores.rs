//! Tensor-core operands stored from registers into their staging: as they
//! are or transposed (a B read K-major), in the widest vectors whose
//! elements land side by side, each register addressed as an earlier
//! one's index plus a constant where that holds in every thread.

use super::operand_swizzle::OperandLayout;
use super::placement::{linear_index, placements, Placement};
use super::store_vectors::vector_groups;
use super::Lowerer;
use crate::layout_assign::DistLayout;
use crate::program::{Reg, SharedId};
use tile_ir::{BinaryOp, DType};

impl Lowerer<'_> {
    /// Stores a tile in `layout` into `alloc` as `place` lays it out (each
    /// element by its owner); the caller places the barrier before reading
    /// it.
    pub(super) fn store_tile(
        &mut self,
        alloc: SharedId,
        layout: &DistLayout,
        regs: &[Reg],
        place: OperandLayout,
    ) {
        self.store_operand(alloc, (layout, regs), place, false);
    }

    /// Stores the `b` tile `regs` in `layout` into `alloc` in `place`,
    /// as its transpose with `transposed` (a B read K-major).
    pub(super) fn store_b(
        &mut self,
        alloc: SharedId,
        layout: &DistLayout,
        regs: &[Reg],
        place: OperandLayout,
        transposed: bool,
    ) {
        match transposed {
            true => self.store_tile_transposed(alloc, layout, regs, place),
            false => self.store_tile(alloc, layout, regs, place),
        }
    }

    /// Stores the `[K, N]` tile `regs` in `layout` into `alloc` as its
    /// transpose, `[N, K]`, in `place`'s blocks: a B read K-major. The
    /// registers are the transpose's in `layout` permuted, so they go as
    /// that tile's, in vectors where its threads hold runs of `k`.
    fn store_tile_transposed(
        &mut self,
        alloc: SharedId,
        layout: &DistLayout,
        regs: &[Reg],
        place: OperandLayout,
    ) {
        match layout.permuted(&[1, 0]) {
            Some(transposed) => self.store_operand(alloc, (&transposed, regs), place, false),
            None => {
                // Placed by (column, row): blocks only, whose positions are
                // not the layout's own row-major index.
                debug_assert!(matches!(place, OperandLayout::Blocks { .. }));
                self.store_operand(alloc, (layout, regs), place, true)
            }
        }
    }

    /// [`Lowerer::store_tile`], each element at its (row, column) or, with
    /// `transposed`, at its (column, row) of `place`: in vectors of the
    /// registers [`operand_vectors`] finds placed side by side, one address
    /// each (a 128×128 bf16 operand on 8 warps takes 8 stores per thread,
    /// not 64, and 8 addresses where each would stay live across the loop).
    fn store_operand(
        &mut self,
        alloc: SharedId,
        (layout, regs): (&DistLayout, &[Reg]),
        place: OperandLayout,
        transposed: bool,
    ) {
        let coords = self.coords(layout);
        let (row, col) = super::copies::operand_axes(&layout.shape);
        let group = match (transposed, regs.first()) {
            (false, Some(&r)) => {
                let dtype = self.program.dtype(r);
                operand_vectors(layout, dtype, place, self.program.block_threads())
            }
            _ => 1,
        };
        // A register placed at an earlier one's index plus a constant in
        // every thread is addressed so: one held index per class, not one
        // per register (a transposed accumulator's 64 scalar stores).
        // Unswizzled, each index is already the thread's plus a constant
        // to LLVM; a swizzle's XOR hides that.
        let registers: Vec<usize> = (0..regs.len()).collect();
        let classes = match place {
            OperandLayout::RowMajor(None) => vec![Placement::Own; regs.len()],
            _ => placements(layout, &registers, |c| {
                let position = if transposed {
                    (c[col], c[row])
                } else {
                    (c[row], c[col])
                };
                place.placed(linear_index(layout, c) as usize, position) as i64
            }),
        };
        let mut known: Vec<Option<Reg>> = vec![None; regs.len()];
        self.store_groups(alloc, (regs, &coords.owner), group, |s, v| {
            let mut index = |s: &mut Self, v: usize| {
                let (r, c) = (coords.axes[v][row], coords.axes[v][col]);
                let position = if transposed { (c, r) } else { (r, c) };
                *known[v].get_or_insert_with(|| s.operand_index(place, coords.linear[v], position))
            };
            match classes[v] {
                Placement::Own => index(s, v),
                Placement::After { of, by } => {
                    let first = index(s, of);
                    let by = s.i32c(by);
                    s.binary(BinaryOp::Add, first, by)
                }
            }
        });
    }
}

/// The registers of an operand tile of `dtype` in `layout` that one shared
/// store moves when staged as `place`: the aligned groups of consecutive
/// columns [`vector_groups`] finds, where every thread's group lands in
/// consecutive elements from a multiple of its width (the swizzles move
/// whole 16-byte chunks, so groups within a chunk stay whole), else 1.
fn operand_vectors(layout: &DistLayout, dtype: DType, place: OperandLayout, threads: u32) -> usize {
    let width = vector_groups(layout, dtype, threads);
    let (row, col) = super::copies::operand_axes(&layout.shape);
    let strides = crate::layout_assign::row_major(&layout.shape);
    let whole = |t: usize, g: usize| {
        let placed: Vec<usize> = (g..g + width)
            .map(|v| {
                let (c, _, _) = layout.coordinate(t, v);
                let linear = c.iter().zip(&strides).map(|(x, s)| x * s).sum();
                place.placed(linear, (c[row], c[col]))
            })
            .collect();
        placed[0].is_multiple_of(width) && placed.windows(2).all(|p| p[1] == p[0] + 1)
    };
    let fits = width > 1
        && (0..threads as usize)
            .all(|t| (0..layout.registers()).step_by(width).all(|g| whole(t, g)));
    if fits {
        width
    } else {
        1
    }
}
