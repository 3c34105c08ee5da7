//! Transposes of frame tiles in 8 × 8 blocks of vector shuffles (also used
//! by the row folds of `reduce.rs` on blocks held in registers).
//!
//! As an affine copy, a transpose reads or writes with a stride on every
//! element, which LLVM leaves as one scalar load and store per element. For
//! a `[batch, rows, cols]` tile whose `rows` and `cols` are multiples of 8,
//! each 8 × 8 block is instead loaded as eight row vectors, transposed in
//! registers by three rounds of two-vector shuffles, and stored as eight row
//! vectors of the result. Round `d` (4, 2, then 1) pairs rows `i` and `i + d`
//! and swaps the off-diagonal `d × d` sub-blocks of each `2d × 2d` block: at
//! position `p`, with `q = p mod 2d` and `s = p − q`, the first row takes
//! `a[s + q]` where `q < d` and `b[s + q − d]` elsewhere, the second
//! `a[s + d + q]` and `b[s + q]`. After the three rounds row `j` holds
//! column `j`. Elements are moved as integers of their width, so every dtype
//! transposes bit for bit.

use super::alias::Memory;
use super::error::HostError;
use super::frame::TileRef;
use super::kernel::HostKernel;
use inkwell::types::VectorType;
use inkwell::values::{BasicValue, IntValue, VectorValue};

/// The side of a block, in elements.
pub(super) const BLOCK: u32 = 8;

/// The shuffle mask of one output row of a round: the first row of the pair
/// (`high` false) or the second, for sub-blocks of side `d`.
fn round_mask(d: u32, high: bool) -> Vec<u32> {
    (0..BLOCK)
        .map(|p| {
            let q = p % (2 * d);
            let s = p - q;
            match (q < d, high) {
                (true, false) => s + q,
                (false, false) => BLOCK + s + q - d,
                (true, true) => s + d + q,
                (false, true) => BLOCK + s + q,
            }
        })
        .collect()
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// `out[b, j, i] = x[b, i, j]` for `x` seen as `[batch, rows, cols]`, in
    /// blocks of shuffles; `false` (and nothing emitted) unless `rows` and
    /// `cols` are multiples of the block side.
    pub(super) fn transpose_blocks(
        &mut self,
        x: &TileRef,
        out: &TileRef,
        [batch, rows, cols]: [usize; 3],
    ) -> Result<bool, HostError> {
        let n = BLOCK as usize;
        if !rows.is_multiple_of(n) || !cols.is_multiple_of(n) || rows == 0 || cols == 0 {
            return Ok(false);
        }
        let bounds = [
            self.i64(batch as i64),
            self.i64((rows / n) as i64),
            self.i64((cols / n) as i64),
        ];
        let bits = (x.dtype.size_bytes() * 8) as u32;
        let vector = self.e.int_type(bits).vec_type(BLOCK);
        self.nest(&bounds, &mut |l, c| {
            let b = &l.e.b;
            let side = l.i64(n as i64);
            let (i0, j0) = (
                b.build_int_nsw_mul(c[1], side, "i0")?,
                b.build_int_nsw_mul(c[2], side, "j0")?,
            );
            let mut block = Vec::with_capacity(n);
            for r in 0..n {
                let row = b.build_int_nsw_add(i0, l.i64(r as i64), "row")?;
                let at = l.linear(&[c[0], row, j0], &[(rows * cols) as i64, cols as i64, 1], 0)?;
                block.push(l.vector_at(x, at, vector, None)?);
            }
            let block = l.transpose_registers(block)?;
            for (r, &v) in block.iter().enumerate() {
                let b = &l.e.b;
                let row = b.build_int_nsw_add(j0, l.i64(r as i64), "col")?;
                let at = l.linear(&[c[0], row, i0], &[(rows * cols) as i64, rows as i64, 1], 0)?;
                l.vector_at(out, at, vector, Some(v))?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// The columns of the 8 × 8 block whose rows are `block` (eight vectors
    /// of eight elements), by the three rounds of shuffles.
    pub(super) fn transpose_registers(
        &self,
        mut block: Vec<VectorValue<'ctx>>,
    ) -> Result<Vec<VectorValue<'ctx>>, HostError> {
        if block.len() != BLOCK as usize {
            return Err(HostError::internal(
                "a register transpose of a non-square block",
            ));
        }
        for d in [4, 2, 1] {
            let (low, high) = (round_mask(d, false), round_mask(d, true));
            let mut next = block.clone();
            for i in (0..block.len()).filter(|i| (i / d as usize).is_multiple_of(2)) {
                let (a, b) = (block[i], block[i + d as usize]);
                next[i] = self.shuffle(a, b, &low)?;
                next[i + d as usize] = self.shuffle(a, b, &high)?;
            }
            block = next;
        }
        Ok(block)
    }

    /// Loads the vector of `ty` at element `at` of `tile`, or stores `value`
    /// there; returns the vector loaded or stored.
    pub(super) fn vector_at(
        &self,
        tile: &TileRef,
        at: IntValue<'ctx>,
        ty: VectorType<'ctx>,
        value: Option<VectorValue<'ctx>>,
    ) -> Result<VectorValue<'ctx>, HostError> {
        let ptr = self.element(tile, at)?;
        let align = tile.dtype.size_bytes() as u32;
        let (access, v) = match value {
            Some(v) => (self.e.b.build_store(ptr, v)?, v),
            None => {
                let v = self.e.b.build_load(ty, ptr, "row")?;
                let inst = v.as_instruction_value().ok_or_else(|| {
                    HostError::internal("a vector load that is not an instruction")
                })?;
                (inst, v.into_vector_value())
            }
        };
        access
            .set_alignment(align)
            .map_err(|e| HostError::internal(format!("setting an alignment: {e}")))?;
        self.mark(Some(access), Memory::Frame)?;
        Ok(v)
    }

    /// `shufflevector a, b, mask`.
    fn shuffle(
        &self,
        a: VectorValue<'ctx>,
        b: VectorValue<'ctx>,
        mask: &[u32],
    ) -> Result<VectorValue<'ctx>, HostError> {
        let i32t = self.e.ctx.i32_type();
        let mask: Vec<IntValue<'ctx>> = mask
            .iter()
            .map(|&k| i32t.const_int(u64::from(k), false))
            .collect();
        Ok(self
            .e
            .b
            .build_shuffle_vector(a, b, VectorType::const_vector(&mask), "t")?)
    }
}

#[cfg(test)]
mod tests {
    use super::{round_mask, BLOCK};

    /// Three rounds of the masks on an 8 × 8 block of (row, column) pairs
    /// give its transpose.
    #[test]
    fn three_rounds_transpose_a_block() {
        let n = BLOCK as usize;
        let mut rows: Vec<Vec<(usize, usize)>> =
            (0..n).map(|i| (0..n).map(|j| (i, j)).collect()).collect();
        for d in [4usize, 2, 1] {
            let mut next = rows.clone();
            for i in (0..n).filter(|i| (i / d).is_multiple_of(2)) {
                let pick = |mask: Vec<u32>| -> Vec<(usize, usize)> {
                    mask.iter()
                        .map(|&k| {
                            let k = k as usize;
                            if k < n {
                                rows[i][k]
                            } else {
                                rows[i + d][k - n]
                            }
                        })
                        .collect()
                };
                next[i] = pick(round_mask(d as u32, false));
                next[i + d] = pick(round_mask(d as u32, true));
            }
            rows = next;
        }
        for (j, row) in rows.iter().enumerate() {
            for (i, &element) in row.iter().enumerate() {
                assert_eq!(element, (i, j), "row {j}, position {i}");
            }
        }
    }
}
