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

use tile_ir::layout::Swizzle;

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
