//! The XOR swizzle of shared-memory stagings that avoids bank conflicts.
//!
//! Shared memory has 32 banks of 4-byte words. A tile staged row-major and
//! read along a column (a transpose, or a conversion between layouts of
//! different orders) hits one bank per `32·4 / bytes` elements of stride:
//! a column of a 32-wide `f32` tile is 32 words in one bank. Stagings of
//! tiles of rank ≥ 2 therefore store element `i` at `Sw<B,M,S>(i)`
//! (CuTe's swizzle, [`tile_ir::layout::Swizzle`]), with
//!
//! * `M = log2(max(1, 4 / bytes))`: the elements sharing a word stay
//!   together;
//! * `P = log2(128 / bytes)`: the elements of one row of banks;
//! * `B = S = P - M`: the bank bits `[M, P)` of the index are XOR-ed with the
//!   bits `[P, 2P - M)`, the index of the row of banks.
//!
//! Consecutive elements stay in distinct banks (the swizzle permutes the
//! banks of each row of banks), and the elements of a column, one per row of
//! banks, spread over the banks. The swizzle only changes bits below `P`, so
//! it maps each block of `2^P` elements onto itself: the allocation is
//! rounded up to a multiple of `2^P`. Index 0 is fixed, so dead registers
//! still read element 0.

use super::Lowerer;
use crate::program::{Reg, ThreadOpKind};
use tile_ir::layout::Swizzle;
use tile_ir::{BinaryOp, DType, Scalar};

/// The swizzle of a staging of a tile of `dtype` and `shape`, and the
/// allocation length it needs; `None` for tiles of rank below 2 or of at
/// most one row of banks (where it would be the identity).
fn bank_swizzle(dtype: DType, shape: &[usize]) -> Option<(Swizzle, usize)> {
    let bytes = dtype.size_bytes().max(1);
    let len: usize = shape.iter().product();
    let m = (4 / bytes).max(1).trailing_zeros();
    let p = (128 / bytes).trailing_zeros();
    let row = 1usize << p;
    if shape.len() < 2 || len <= row {
        return None;
    }
    let sw = Swizzle::new(p - m, m, (p - m) as i32).ok()?;
    Some((sw, len.div_ceil(row) * row))
}

/// The swizzle of a staging of a tile of `dtype` and `shape` that is read
/// back in 16-byte vectors along its rows (`super::store_vectors`), and
/// the allocation length it needs: the 16-byte chunks of a row are permuted
/// by the row's index, `Sw<B, log2(16 / bytes), log2(row) − log2(16 / bytes)>`
/// with `2^B` the row's chunks up to 8 (Triton's phase of a shared layout
/// of vectors). A vector stays whole, and the chunks of 8 consecutive rows
/// at one column lie in 8 distinct groups of 4 banks. `None` unless the
/// row is a power of two of at least two chunks.
pub(super) fn vector_swizzle(dtype: DType, shape: &[usize]) -> Option<(Swizzle, usize)> {
    let bytes = dtype.size_bytes().max(1);
    let (&row, _) = shape.split_last()?;
    let vector = (16 / bytes).max(1);
    let chunks = row / vector;
    if shape.len() < 2 || !row.is_power_of_two() || chunks < 2 {
        return None;
    }
    let base = vector.trailing_zeros();
    let bits = chunks.min(8).trailing_zeros();
    let shift = (row.trailing_zeros() - base) as i32;
    let sw = Swizzle::new(bits, base, shift).ok()?;
    Some((sw, shape.iter().product()))
}

impl Lowerer<'_> {
    /// [`bank_swizzle`] unless swizzling is off ([`super::Options`]).
    pub(super) fn staging_swizzle(
        &self,
        dtype: DType,
        shape: &[usize],
    ) -> Option<(Swizzle, usize)> {
        self.swizzle_shared
            .then(|| bank_swizzle(dtype, shape))
            .flatten()
    }

    /// [`vector_swizzle`] unless swizzling is off ([`super::Options`]).
    pub(super) fn vector_staging_swizzle(
        &self,
        dtype: DType,
        shape: &[usize],
    ) -> Option<(Swizzle, usize)> {
        self.swizzle_shared
            .then(|| vector_swizzle(dtype, shape))
            .flatten()
    }

    /// `index` (an `i32` or `i64` register) through the swizzle, if any:
    /// `i ^ ((i & yyy) >> shift)`, a left shift for a negative `shift`. A
    /// negative `i64` offset stays negative: the masks are below bit 62.
    pub(super) fn swizzled(&mut self, index: Reg, swizzle: Option<Swizzle>) -> Reg {
        let Some(sw) = swizzle else {
            return index;
        };
        let dtype = self.program.dtype(index);
        let constant = |s: &mut Self, v: i64| match dtype {
            DType::I64 => s.constant(Scalar::I64(v)),
            _ => s.i32c(v),
        };
        let yyy = constant(self, sw.yyy_mask());
        let high = self.binary(BinaryOp::And, index, yyy);
        let shift = constant(self, i64::from(sw.shift().abs()));
        let direction = if sw.shift() >= 0 {
            BinaryOp::Shr
        } else {
            BinaryOp::Shl
        };
        let moved = self.emit(ThreadOpKind::Binary(direction), vec![high, shift], dtype);
        self.binary(BinaryOp::Xor, index, moved)
    }
}

#[cfg(test)]
mod tests {
    use super::bank_swizzle;
    use tile_ir::DType;

    #[test]
    fn the_swizzle_permutes_each_row_of_banks_and_spreads_columns() {
        let (sw, len) = bank_swizzle(DType::F32, &[32, 32]).unwrap();
        assert_eq!((sw.to_string(), len), ("Sw<5,0,5>".to_string(), 1024));
        let image: std::collections::BTreeSet<i64> = (0..1024).map(|i| sw.apply(i)).collect();
        assert_eq!(image, (0..1024).collect());
        // Column 3: 32 distinct banks.
        let banks: std::collections::BTreeSet<i64> =
            (0..32).map(|r| sw.apply(r * 32 + 3) % 32).collect();
        assert_eq!(banks.len(), 32);
        // f16: pairs of elements share a word; f64 spans two.
        assert_eq!(
            bank_swizzle(DType::F16, &[64, 64]).unwrap().0.to_string(),
            "Sw<5,1,5>"
        );
        assert_eq!(
            bank_swizzle(DType::F64, &[16, 16]).unwrap().0.to_string(),
            "Sw<4,0,4>"
        );
        // Rank 1 and a single row of banks stay unswizzled; lengths round up.
        assert!(bank_swizzle(DType::F32, &[1024]).is_none());
        assert!(bank_swizzle(DType::F32, &[4, 8]).is_none());
        assert_eq!(bank_swizzle(DType::F32, &[5, 7]).unwrap().1, 64);
    }
}
