//! Registers whose places differ by constants in every thread.
//!
//! A thread's registers of an additive layout (`DistLayout::additive`) sit
//! at its own coordinate plus constants, so where many of them go — a copy
//! chunk's row, a staged element's swizzled slot — differs from where an
//! earlier one goes by a constant that is the same in every thread. Such a
//! register is addressed as that earlier one plus the constant: one
//! computed index per class instead of one per register, which matters
//! when the indices are computed ahead and held (the 64 staging slots of an
//! accumulator's epilogue, the chunks a copy loop issues each iteration).

use super::Lowerer;
use crate::layout_assign::{row_major, DistLayout};
use crate::program::Reg;
use tile_ir::layout::Swizzle;
use tile_ir::BinaryOp;

/// Per chunk (every `width` registers) of `layout`, its padded coordinate
/// minus the first chunk's, along every axis: the same in every thread when
/// the layout is additive; `None` otherwise.
pub(super) fn chunk_deltas(layout: &DistLayout, width: usize) -> Option<Vec<Vec<i64>>> {
    if !layout.additive() || !layout.replicated.is_empty() || width == 0 {
        return None;
    }
    let first = layout.padded_coordinate(0, 0);
    let deltas = (0..layout.registers() / width)
        .map(|g| {
            let at = layout.padded_coordinate(0, g * width);
            at.iter()
                .zip(&first)
                .map(|(&c, &f)| c as i64 - f as i64)
                .collect()
        })
        .collect();
    Some(deltas)
}

/// A register's place relative to an earlier register's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Placement {
    /// Computed on its own (the first of its class).
    Own,
    /// The place of `registers[of]` plus `by`, in every thread.
    After {
        /// The position in `registers` of the register it follows.
        of: usize,
        /// The constant between the two places.
        by: i64,
    },
}

/// For each of `registers` of `layout`, whether its place — `place` of its
/// padded coordinate — is an earlier one's plus a constant in every thread
/// of the layout, checked thread by thread.
pub(super) fn placements(
    layout: &DistLayout,
    registers: &[usize],
    place: impl Fn(&[usize]) -> i64,
) -> Vec<Placement> {
    let threads = layout.thread.size() as usize;
    let places: Vec<Vec<i64>> = registers
        .iter()
        .map(|&v| {
            (0..threads)
                .map(|t| place(&layout.padded_coordinate(t, v)))
                .collect()
        })
        .collect();
    let mut owners: Vec<usize> = Vec::new();
    let mut result = Vec::with_capacity(registers.len());
    for (i, mine) in places.iter().enumerate() {
        let follows = owners.iter().find_map(|&o| {
            let by = mine[0] - places[o][0];
            let uniform = mine.iter().zip(&places[o]).all(|(m, p)| m - p == by);
            uniform.then_some(Placement::After { of: o, by })
        });
        result.push(follows.unwrap_or_else(|| {
            owners.push(i);
            Placement::Own
        }));
    }
    result
}

/// The row-major index in `layout`'s tile of padded coordinate `coordinate`,
/// as the lowering's coordinates compute it (`Coords::linear`): replicated
/// axes count as 0.
pub(super) fn linear_index(layout: &DistLayout, coordinate: &[usize]) -> i64 {
    row_major(&layout.shape)
        .iter()
        .zip(coordinate)
        .enumerate()
        .filter(|(d, _)| !layout.replicated.contains(d))
        .map(|(_, (s, c))| (s * c) as i64)
        .sum()
}

/// The shared-memory indices of a layout's registers staged at
/// `swizzle(linear)`, computed on first use: once per class of
/// [`placements`], the rest as their class's first plus a constant.
pub(super) struct StagedIndices {
    placements: Vec<Placement>,
    linear: Vec<Reg>,
    swizzle: Option<Swizzle>,
    known: Vec<Option<Reg>>,
}

impl StagedIndices {
    /// The indices of every register of `layout`, whose row-major indices
    /// are `linear` (`Coords::linear`, each the thread's plus a constant
    /// already: unswizzled, every register is its own class).
    pub(super) fn new(layout: &DistLayout, linear: &[Reg], swizzle: Option<Swizzle>) -> Self {
        let registers: Vec<usize> = (0..layout.registers()).collect();
        let placements = match swizzle {
            Some(sw) => placements(layout, &registers, |c| sw.apply(linear_index(layout, c))),
            None => vec![Placement::Own; registers.len()],
        };
        StagedIndices {
            placements,
            linear: linear.to_vec(),
            swizzle,
            known: vec![None; registers.len()],
        }
    }
}

impl Lowerer<'_> {
    /// Register `v`'s index among `indices`, emitted here on first use.
    pub(super) fn placed_index(&mut self, indices: &mut StagedIndices, v: usize) -> Reg {
        if let Some(r) = indices.known[v] {
            return r;
        }
        let r = match indices.placements[v] {
            Placement::Own => self.swizzled(indices.linear[v], indices.swizzle),
            Placement::After { of, by } => {
                let first = self.placed_index(indices, of);
                let by = self.i32c(by);
                self.binary(BinaryOp::Add, first, by)
            }
        };
        indices.known[v] = Some(r);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_deltas, linear_index, placements, Placement};
    use crate::layout_assign::DistLayout;
    use crate::lower::copies::operand_axes;
    use crate::lower::operand_swizzle::{operand_swizzle, OperandLayout};

    /// Where `place` stores each chunk of `width` registers of `layout`.
    fn chunk_placements(layout: &DistLayout, width: usize, place: OperandLayout) -> Vec<Placement> {
        let (row, col) = operand_axes(&layout.shape);
        let firsts: Vec<usize> = (0..layout.registers()).step_by(width).collect();
        placements(layout, &firsts, |c| {
            place.placed(linear_index(layout, c) as usize, (c[row], c[col])) as i64
        })
    }

    #[test]
    fn chunks_of_a_blocked_layout_are_rows_apart_in_every_thread() {
        // A 128 × 128 FP8 operand on 4 warps: 8 chunks of 16 bytes a
        // thread, 16 rows apart.
        let layout = DistLayout::blocked(&[128, 128], 4, 16).unwrap();
        let deltas = chunk_deltas(&layout, 16).unwrap();
        assert_eq!(deltas.len(), 8);
        for (g, delta) in deltas.iter().enumerate() {
            assert_eq!(delta, &vec![16 * g as i64, 0]);
        }
        for t in 0..128 {
            let first = layout.padded_coordinate(t, 0);
            for (g, delta) in deltas.iter().enumerate() {
                let at = layout.padded_coordinate(t, g * 16);
                assert_eq!(at[0] as i64 - first[0] as i64, delta[0]);
                assert_eq!(at[1] as i64 - first[1] as i64, delta[1]);
            }
        }
    }

    #[test]
    fn a_swizzle_with_a_period_of_the_chunks_spacing_places_them_after_the_first() {
        let layout = DistLayout::blocked(&[128, 128], 4, 16).unwrap();
        let after_first = |g: i64| Placement::After {
            of: 0,
            by: g * 16 * 128,
        };
        let mut want = vec![Placement::Own];
        want.extend((1..8).map(after_first));
        let swizzled = OperandLayout::RowMajor(operand_swizzle(128, 1));
        assert_eq!(chunk_placements(&layout, 16, swizzled), want);
        let blocks = OperandLayout::Blocks {
            rows: 128,
            width: 128,
            bytes: 1,
        };
        assert_eq!(chunk_placements(&layout, 16, blocks), want);
    }

    #[test]
    fn a_swizzle_that_depends_on_the_thread_splits_the_chunks_into_classes() {
        // 16 rows of 64 16-bit elements on one warp: a thread's four chunks
        // are 4 rows apart, inside the 8-row period of the swizzle, which
        // moves the second by +4 or −4 chunks depending on the row; the
        // third is 8 rows past the first, a whole period.
        let layout = DistLayout::blocked(&[16, 64], 1, 8).unwrap();
        assert_eq!(chunk_deltas(&layout, 8).unwrap()[1], vec![4, 0]);
        let swizzled = OperandLayout::RowMajor(operand_swizzle(64, 2));
        assert_eq!(
            chunk_placements(&layout, 8, swizzled),
            vec![
                Placement::Own,
                Placement::Own,
                Placement::After { of: 0, by: 8 * 64 },
                Placement::After { of: 1, by: 8 * 64 },
            ]
        );
        let plain = OperandLayout::RowMajor(None);
        let by = |rows: i64| Placement::After {
            of: 0,
            by: rows * 64,
        };
        assert_eq!(
            chunk_placements(&layout, 8, plain),
            vec![Placement::Own, by(4), by(8), by(12)]
        );
    }
}
