//! The swizzle of tensor-core operands in shared memory: which 16-byte
//! chunk of a row an operand chunk lands in, so that the 8 rows an
//! `ldmatrix` phase reads (and the chunks `cp.async` writes) fall in 8
//! different groups of 4 banks.
//!
//! An operand of `C` 16-bit columns is staged row-major, `R = C / 8`
//! chunks per row; a 128-byte line of banks holds 64 elements. Element
//! index `i` is stored at CuTe's `Sw<B, 3, s - 3>(i)` (`tile_ir::layout::Swizzle`):
//!
//! ```text
//! i ^ (((i >> s) & (2^B - 1)) << 3),   B = min(3, log2 R),  s = max(log2 C, 6)
//! ```
//!
//! XORing the chunk bits with the row's bits (`C ≥ 64`: one row per line or
//! more) or with the line's bits (`C < 64`: several rows per line). Whole
//! chunks move, so a chunk's 8 elements stay consecutive and 16-byte
//! aligned. `C` must be a power of two of at least 16 (otherwise the
//! operand is not swizzled).

use super::Lowerer;
use crate::program::Reg;
use tile_ir::layout::Swizzle;
use tile_ir::BinaryOp;

/// How a tensor-core operand tile of `R × C` elements is stored in shared
/// memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OperandLayout {
    /// Row-major, element `i` at `swizzle(i)`: `mma.sync`'s operands for
    /// `ldmatrix` ([`operand_swizzle`]), or unswizzled.
    RowMajor(Option<Swizzle>),
    /// Blocks of 64 columns one after another, each row-major (rows of 128
    /// bytes of 16-bit elements) under `Sw<3,3,3>`, which XORs a row's
    /// 16-byte chunk with its row's index modulo 8: Hopper's canonical
    /// 128-byte-swizzled layout (`tile_abi::wgmma`), K-major for A (columns
    /// are `k`) and N-major for B (columns are `n`). Element `(r, c)` sits
    /// at `(c / 64)·R·64 + Sw<3,3,3>(r·64 + c % 64)`.
    Blocks64 {
        /// `R`.
        rows: usize,
    },
}

impl OperandLayout {
    /// The smallest offset that commutes with the layout: adding a multiple
    /// of it to an index before placing it adds it after.
    pub(super) fn period(self) -> usize {
        match self {
            OperandLayout::RowMajor(sw) => sw.map_or(1, swizzle_period),
            OperandLayout::Blocks64 { .. } => 512,
        }
    }
}

/// The smallest offset that commutes with `swizzle`: adding a multiple of
/// it changes none of the bits the swizzle reads or writes.
pub(super) fn swizzle_period(swizzle: Swizzle) -> usize {
    1usize << (swizzle.base() + swizzle.shift().unsigned_abs() + swizzle.bits())
}

/// `Sw<3,3,3>`: the 128-byte swizzle of 16-bit elements.
fn swizzle_128b() -> Swizzle {
    Swizzle::new(3, 3, 3).expect("Sw<3,3,3> is a swizzle")
}

impl Lowerer<'_> {
    /// Where element `(row, col)` (`i32` registers; `linear` its row-major
    /// index in the tile) of an operand laid out as `layout` is stored.
    pub(super) fn operand_index(
        &mut self,
        layout: OperandLayout,
        linear: Reg,
        (row, col): (Reg, Reg),
    ) -> Reg {
        match layout {
            OperandLayout::RowMajor(sw) => self.swizzled(linear, sw),
            OperandLayout::Blocks64 { rows } => {
                let block = self.hoist_with_const(BinaryOp::Shr, col, 6);
                let block = self.hoist_with_const(BinaryOp::Mul, block, (rows * 64) as i64);
                let within = self.hoist_with_const(BinaryOp::And, col, 63);
                let r = self.hoist_with_const(BinaryOp::Mul, row, 64);
                let at = self.binary(BinaryOp::Add, r, within);
                let at = self.swizzled(at, Some(swizzle_128b()));
                self.binary(BinaryOp::Add, block, at)
            }
        }
    }
}

/// The swizzle of a tensor-core operand staged with rows of `cols` 16-bit
/// elements (see the module docs): CuTe's `Sw<B, 3, s - 3>`, or `None`
/// for rows of other lengths.
pub(super) fn operand_swizzle(cols: usize) -> Option<Swizzle> {
    let chunks = cols / 8;
    if !cols.is_power_of_two() || chunks < 2 {
        return None;
    }
    let bits = chunks.trailing_zeros().min(3);
    let shift = cols.trailing_zeros().max(6);
    Swizzle::new(bits, 3, shift as i32 - 3).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The banks (4-byte words mod 32) an `ldmatrix` phase reads: chunk
    /// `chunk` of rows `0..8`, each 16 bytes.
    fn phase_conflicts(cols: usize, chunk: usize) -> usize {
        let sw = operand_swizzle(cols);
        let mut groups = std::collections::BTreeMap::<usize, usize>::new();
        for row in 0..8 {
            let i = row * cols + 8 * chunk;
            let at = sw.map_or(i, |s| s.apply(i as i64) as usize);
            // 16-byte chunk → its group of 4 banks.
            *groups.entry(at * 2 / 16 % 8).or_default() += 1;
        }
        groups.values().max().copied().unwrap_or(0) - 1
    }

    #[test]
    fn every_phase_is_conflict_free_and_chunks_stay_whole() {
        for cols in [16, 32, 64, 128, 256] {
            for chunk in 0..cols / 8 {
                assert_eq!(
                    phase_conflicts(cols, chunk),
                    0,
                    "{cols} columns, chunk {chunk}"
                );
            }
            let sw = operand_swizzle(cols).unwrap();
            let mut seen = vec![false; 16 * cols];
            for i in 0..16 * cols {
                let j = sw.apply(i as i64) as usize;
                assert_eq!(j % 8, i % 8, "elements keep their place in a chunk");
                assert!(!seen[j], "a bijection");
                seen[j] = true;
            }
        }
        assert_eq!(operand_swizzle(8), None);
        assert_eq!(operand_swizzle(24), None);
        assert_eq!(operand_swizzle(64).unwrap().to_string(), "Sw<3,3,3>");
        assert_eq!(operand_swizzle(16).unwrap().to_string(), "Sw<1,3,3>");
    }
}
