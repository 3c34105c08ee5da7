//! The swizzle of tensor-core operands in shared memory: which 16-byte
//! chunk of a row an operand chunk lands in, so that the 8 rows an
//! `ldmatrix` phase reads (and the chunks `cp.async` writes) fall in 8
//! different groups of 4 banks.
//!
//! An operand of `C` columns of `b`-byte elements (8-bit FP8, 16-bit, or TF32's
//! 32-bit ones) is staged row-major, `e = 16 / b` elements to a chunk and
//! `R = C / e` chunks per row; a 128-byte line of banks holds `L = 128 / b`
//! elements. Element index `i` is stored at CuTe's `Sw<B, log2 e, s - log2
//! e>(i)` (`tile_ir::layout::Swizzle`):
//!
//! ```text
//! i ^ (((i >> s) & (2^B - 1)) << log2 e),   B = min(3, log2 R),  s = max(log2 C, log2 L)
//! ```
//!
//! XORing the chunk bits with the row's bits (`C ≥ L`: one row per line or
//! more) or with the line's bits (`C < L`: several rows per line). Whole
//! chunks move, so a chunk's elements stay consecutive and 16-byte
//! aligned. `C` must be a power of two of at least two chunks (otherwise
//! the operand is not swizzled).
//!
//! TF32's B is not read by `ldmatrix` but element by element: the 32 lanes
//! read rows `t = 0..4` at 8 consecutive columns (two chunks, the first
//! even). Its swizzle XORs chunk bits 1 and up with the row's position
//! among the 4 rows' bank lines, `Sw<2 - log2 P, 3, s - 3>` (`P = max(1, L
//! / C)` rows per line), so that the 4 rows × 2 chunks fall in 8 groups
//! ([`tf32_b_swizzle`]).
//!
//! FP8's B is read element by element too: the 32 lanes read rows `4t +
//! j` (`t = 0..4`, one `j` per load) at 8 consecutive bytes. Rows 4 apart
//! are `4C` bytes apart, the same banks once `C ≥ 32`; the swizzle XORs
//! the chunk bits 0–1 with the row's bits 2–3 (`t`), `Sw<2, 4, log2 C -
//! 2>`, so that the 4 rows' bytes fall in 4 different chunks of a line
//! ([`fp8_b_swizzle`]).

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
    /// Blocks of `width` columns one after another, each row-major with
    /// rows of 128, 64 or 32 bytes (64, 32 or 16 16-bit elements; 128, 64
    /// or 32 8-bit ones) under the swizzle of rows that wide: `Sw<b, log2
    /// e, 3>`, `e = 16 / bytes` elements to a chunk and `2^b` chunks to a
    /// row, which XORs a row's 16-byte chunk with the index of its 128-byte
    /// line modulo `2^b`: Hopper's canonical swizzled layouts
    /// (`tile_hw::wgmma`), K-major for A (columns are `k`) and N-major for
    /// B (columns are `n`, always 64) or K-major as A; and, in rows of 128
    /// bytes, what the TMA's boxes write, which `mma.sync` reads with
    /// `ldmatrix` where the TMA copies its operands (`tma.rs`). Element
    /// `(r, c)` sits at `(c / width)·R·width + Sw(r·width + c % width)`.
    Blocks {
        /// `R`.
        rows: usize,
        /// The columns of a block.
        width: usize,
        /// The bytes of an element: 2 or 1.
        bytes: usize,
    },
}

impl OperandLayout {
    /// The smallest offset that commutes with the layout: adding a multiple
    /// of it to an index before placing it adds it after.
    pub(super) fn period(self) -> usize {
        match self {
            OperandLayout::RowMajor(sw) => sw.map_or(1, swizzle_period),
            OperandLayout::Blocks { width, bytes, .. } => {
                swizzle_period(blocks_swizzle(width, bytes))
            }
        }
    }

    /// Where the element at row-major index `linear`, row `row` and column
    /// `col` of the operand tile is stored: what [`Lowerer::operand_index`]
    /// computes at run time.
    pub(super) fn placed(self, linear: usize, (row, col): (usize, usize)) -> usize {
        match self {
            OperandLayout::RowMajor(sw) => sw.map_or(linear, |sw| sw.apply(linear as i64) as usize),
            OperandLayout::Blocks { rows, width, bytes } => {
                let swizzle = blocks_swizzle(width, bytes);
                let within = swizzle.apply((row * width + col % width) as i64);
                (col / width) * rows * width + within as usize
            }
        }
    }
}

/// The smallest offset that commutes with `swizzle`: adding a multiple of
/// it changes none of the bits the swizzle reads or writes.
pub(super) fn swizzle_period(swizzle: Swizzle) -> usize {
    1usize << (swizzle.base() + swizzle.shift().unsigned_abs() + swizzle.bits())
}

/// The swizzle of [`OperandLayout::Blocks`] of `width` columns of
/// `bytes`-byte elements (rows of 128, 64 or 32 bytes): `Sw<3, log2 e, 3>`,
/// `Sw<2, log2 e, 3>` or `Sw<1, log2 e, 3>` for `e = 16 / bytes`, the 128-,
/// 64- and 32-byte swizzles (`Sw<3,3,3>` for 16-bit rows of 64).
fn blocks_swizzle(width: usize, bytes: usize) -> Swizzle {
    let chunk = 16 / bytes.clamp(1, 16);
    let bits = (width / chunk).max(2).trailing_zeros();
    let base = chunk.trailing_zeros();
    Swizzle::new(bits, base, 3).expect("Sw<1..=3, log2 e, 3> is a swizzle")
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
            OperandLayout::Blocks { rows, width, bytes } => {
                self.blocks_index([rows, width, bytes], (row, col), true)
            }
        }
    }

    /// Where element `(row, col)` of an operand in [`OperandLayout::Blocks`]
    /// of `rows` rows of `width` elements of `bytes` bytes is stored:
    /// `(col / W)·R·W + Sw(row·W + col % W)`, the parts of `row` and `col`
    /// hoisted where `hoisted` (they are then the prologue's).
    pub(super) fn blocks_index(
        &mut self,
        [rows, width, bytes]: [usize; 3],
        (row, col): (Reg, Reg),
        hoisted: bool,
    ) -> Reg {
        let with = |s: &mut Self, op, x, k| match hoisted {
            true => s.hoist_with_const(op, x, k),
            false => s.with_const(op, x, k),
        };
        let block = with(self, BinaryOp::Shr, col, width.trailing_zeros() as i64);
        let block = with(self, BinaryOp::Mul, block, (rows * width) as i64);
        let within = with(self, BinaryOp::And, col, width as i64 - 1);
        let r = with(self, BinaryOp::Mul, row, width as i64);
        let at = self.binary(BinaryOp::Add, r, within);
        let at = self.swizzled(at, Some(blocks_swizzle(width, bytes)));
        self.binary(BinaryOp::Add, block, at)
    }
}

/// The swizzle of a tensor-core operand staged with rows of `cols`
/// elements of `bytes` bytes (see the module docs): CuTe's `Sw<B, log2 e,
/// s - log2 e>`, or `None` for rows of other lengths.
pub(super) fn operand_swizzle(cols: usize, bytes: usize) -> Option<Swizzle> {
    let chunk = 16 / bytes.clamp(1, 16);
    let chunks = cols / chunk;
    if !cols.is_power_of_two() || chunks < 2 {
        return None;
    }
    let base = chunk.trailing_zeros();
    let bits = chunks.trailing_zeros().min(3);
    let shift = cols.trailing_zeros().max((128 / bytes).trailing_zeros());
    Swizzle::new(bits, base, shift as i32 - base as i32).ok()
}

/// The swizzle of TF32's B operand staged with rows of `cols` 32-bit
/// elements (see the module docs): `Sw<2 - log2 P, 3, s - 3>`, `P = max(1,
/// 32 / cols)` rows per 128-byte line, `s = max(log2 cols, 5)`; `None` for
/// rows of 8 elements (4 rows fall in 8 groups unswizzled) or of other
/// lengths.
pub(super) fn tf32_b_swizzle(cols: usize) -> Option<Swizzle> {
    if !cols.is_power_of_two() || cols < 16 {
        return None;
    }
    let per_line = (32 / cols).max(1);
    let bits = 2 - per_line.trailing_zeros();
    let shift = cols.trailing_zeros().max(5);
    Swizzle::new(bits, 3, shift as i32 - 3).ok()
}

/// The swizzle of FP8's B operand staged with rows of `cols` bytes (see
/// the module docs): `Sw<2, 4, log2 cols - 2>`; `None` for rows of fewer
/// than 16 bytes or of other lengths than a power of two.
pub(super) fn fp8_b_swizzle(cols: usize) -> Option<Swizzle> {
    if !cols.is_power_of_two() || cols < 16 {
        return None;
    }
    Swizzle::new(2, 4, cols.trailing_zeros() as i32 - 2).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TF32's B fragment loads: lane `(g, t)` reads row `t` (and `t + 4`),
    /// column `n0 + g`; every such request falls in 32 different banks,
    /// and chunks stay whole.
    #[test]
    fn tf32_b_loads_are_conflict_free() {
        for cols in [8, 16, 32, 64, 128, 256] {
            let sw = tf32_b_swizzle(cols);
            let place = |i: usize| sw.map_or(i, |s| s.apply(i as i64) as usize);
            for row0 in [0, 4, 8] {
                for n0 in (0..cols).step_by(8) {
                    let mut banks: Vec<usize> = (0..32)
                        .map(|lane| place((row0 + lane % 4) * cols + n0 + lane / 4) % 32)
                        .collect();
                    banks.sort_unstable();
                    banks.dedup();
                    assert_eq!(
                        banks.len(),
                        32,
                        "{cols} columns, rows from {row0}, column {n0}"
                    );
                }
            }
            let mut seen = vec![false; 16 * cols];
            for i in 0..16 * cols {
                let j = place(i);
                assert_eq!(j % 4, i % 4, "elements keep their chunk");
                assert!(!seen[j], "a bijection");
                seen[j] = true;
            }
        }
        assert_eq!(tf32_b_swizzle(8), None);
        assert_eq!(tf32_b_swizzle(16).unwrap().to_string(), "Sw<1,3,2>");
        assert_eq!(tf32_b_swizzle(64).unwrap().to_string(), "Sw<2,3,3>");
    }

    /// FP8's B fragment loads: lane `(g, t)` reads byte column `n0 + g` of
    /// row `4t + j`; the 8 words each such request touches fall in 8
    /// different banks, and chunks stay whole.
    #[test]
    fn fp8_b_loads_are_conflict_free() {
        for cols in [16, 32, 64, 128, 256] {
            let sw = fp8_b_swizzle(cols).unwrap();
            let place = |i: usize| sw.apply(i as i64) as usize;
            for j in [0, 1, 2, 3, 16, 19] {
                for n0 in (0..cols).step_by(8) {
                    let mut banks: Vec<usize> = (0..32)
                        .map(|lane| place((4 * (lane % 4) + j) * cols + n0 + lane / 4) / 4 % 32)
                        .collect();
                    banks.sort_unstable();
                    banks.dedup();
                    assert_eq!(banks.len(), 8, "{cols} columns, row {j}, column {n0}");
                }
            }
            let mut seen = vec![false; 32 * cols];
            for i in 0..32 * cols {
                let j = place(i);
                assert_eq!(j % 16, i % 16, "elements keep their chunk");
                assert!(!seen[j], "a bijection");
                seen[j] = true;
            }
        }
        assert_eq!(fp8_b_swizzle(8), None);
        assert_eq!(fp8_b_swizzle(64).unwrap().to_string(), "Sw<2,4,4>");
    }

    /// The banks (4-byte words mod 32) an `ldmatrix` phase reads: chunk
    /// `chunk` of rows `0..8`, each 16 bytes of `bytes`-byte elements.
    fn phase_conflicts(cols: usize, bytes: usize, chunk: usize) -> usize {
        let sw = operand_swizzle(cols, bytes);
        let per_chunk = 16 / bytes;
        let mut groups = std::collections::BTreeMap::<usize, usize>::new();
        for row in 0..8 {
            let i = row * cols + per_chunk * chunk;
            let at = sw.map_or(i, |s| s.apply(i as i64) as usize);
            // 16-byte chunk → its group of 4 banks.
            *groups.entry(at * bytes / 16 % 8).or_default() += 1;
        }
        groups.values().max().copied().unwrap_or(0) - 1
    }

    #[test]
    fn every_phase_is_conflict_free_and_chunks_stay_whole() {
        for bytes in [1, 2, 4] {
            let per_chunk = 16 / bytes;
            for cols in [2 * per_chunk, 32, 64, 128, 256] {
                for chunk in 0..cols / per_chunk {
                    assert_eq!(
                        phase_conflicts(cols, bytes, chunk),
                        0,
                        "{cols} columns of {bytes} bytes, chunk {chunk}"
                    );
                }
                let sw = operand_swizzle(cols, bytes).unwrap();
                let mut seen = vec![false; 16 * cols];
                for i in 0..16 * cols {
                    let j = sw.apply(i as i64) as usize;
                    assert_eq!(j % per_chunk, i % per_chunk, "elements keep their chunk");
                    assert!(!seen[j], "a bijection");
                    seen[j] = true;
                }
            }
        }
        assert_eq!(operand_swizzle(8, 2), None);
        assert_eq!(operand_swizzle(24, 2), None);
        assert_eq!(operand_swizzle(4, 4), None);
        assert_eq!(operand_swizzle(64, 2).unwrap().to_string(), "Sw<3,3,3>");
        assert_eq!(operand_swizzle(16, 2).unwrap().to_string(), "Sw<1,3,3>");
        assert_eq!(operand_swizzle(32, 4).unwrap().to_string(), "Sw<3,2,3>");
        assert_eq!(operand_swizzle(8, 4).unwrap().to_string(), "Sw<1,2,3>");
    }
}
