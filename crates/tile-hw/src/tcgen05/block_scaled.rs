//! `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale` on E4M3 or E5M2
//! operands: [`Tcgen05Kind`]'s product with one E8M0 scale per row of A
//! and per column of B for its 32 `k` (one OCP MX group), the scales read
//! from tensor memory (PTX ISA "tcgen05.mma"; CUTLASS
//! `InstrDescriptorBlockScaled`; CuTe `tmem_sf_frg`).
//!
//! **Instruction descriptor** ([`Tcgen05Kind::scaled_descriptor`]): the
//! dense one's operand formats, majors, `N` and `M`, with D's format gone
//! (bits 4–5 are B's scale byte instead, D always `f32`), bit 23 the scale
//! format (1 = UE8M0), bits 29–30 A's scale byte.
//!
//! **Scales in tensor memory.** A side's scales (A's 128 rows, B's `N`
//! columns) take [`scale_columns`] 32-bit columns: the scale of row `r`
//! sits in column `r / 32` from the image's first, in lane `r % 32` of
//! *every* quarter of the lanes (`r % 32 + 32·q`, `q` 0 to 3: CuTe's
//! "ScaleFactorDuplicated4by1"), in the byte the descriptor names. Each
//! column holds four groups of 32 `k` of its rows, one a byte, so an image
//! serves four consecutive `k`-steps. The emulators read every quarter's
//! copy and call copies that differ an error ([`read_scales`]).
//!
//! **Arithmetic** ([`block_mma_scaled`]): each product of the step times
//! its row's and its column's scale (`2^(e − 127)`, `0xFF` NaN), exactly,
//! then summed as [`super::block_mma`] sums ([`crate::mma::scaled_step_sum`]).
//! The instruction never rounds a scaled element.

use super::{Qualifier, Tcgen05Kind, M, WARP_LANES};
use tile_ir::DType;

/// The quarters of the lanes, each holding a copy of every scale.
const QUARTERS: usize = 4;

/// Groups of 32 `k` one column of a scale image holds per row, a byte each.
pub const GROUPS_PER_COLUMN: usize = 4;

/// The `k` one scale covers, which is one instruction's `K`.
pub const GROUP_K: usize = 32;

impl Tcgen05Kind {
    /// Whether the block-scaled form takes these operands: E4M3 or E5M2.
    pub fn takes_block_scales(self) -> bool {
        matches!(self.dtype, DType::F8E4M3 | DType::F8E5M2)
    }

    /// The block-scaled form's instruction descriptor (the module docs),
    /// both sides' scales in byte `byte` (0 to 3) of their columns.
    pub fn scaled_descriptor(self, byte: u32) -> u32 {
        let dense = self.descriptor() & !(3 << 4);
        dense | (byte & 3) << 4 | 1 << 23 | (byte & 3) << 29
    }

    /// The instruction and A's and B's scale bytes that a block-scaled
    /// descriptor names, or why the model does not read it.
    pub fn from_scaled_descriptor(bits: u32) -> Result<(Tcgen05Kind, [u32; 2]), String> {
        let field = |at: u32, width: u32| (bits >> at) & ((1 << width) - 1);
        let bytes = [field(29, 2), field(4, 2)];
        if field(23, 1) != 1 || bits & (1 << 31 | 1 << 6 | 0xf) != 0 {
            return Err(format!(
                "block-scaled descriptor {bits:#010x} is not a modelled form (UE8M0 scales, dense, K 32)"
            ));
        }
        // The rest reads as a dense descriptor with an `f32` D.
        let dense = bits & !(3 << 4 | 1 << 23 | 3 << 29) | 1 << 4;
        let kind = Tcgen05Kind::from_descriptor(dense, Qualifier::F8F6F4)?;
        Ok((kind, bytes))
    }
}

/// The 32-bit columns a side's image of `rows` scales takes.
pub fn scale_columns(rows: usize) -> usize {
    rows.div_ceil(WARP_LANES)
}

/// Where the scale of row `row` sits in an image: its lane in each quarter
/// (add `32·q`) and its column from the image's first.
pub fn scale_cell(row: usize) -> (usize, usize) {
    (row % WARP_LANES, row / WARP_LANES)
}

/// The `rows` scales (bits in the low byte) in byte `byte` of the image
/// from column `column`, each cell's bits from `cell(lane, column)` (whose
/// error ends the read), every quarter's copy read: `Err` inside when
/// copies differ.
pub fn read_scales<E>(
    (rows, column, byte): (usize, usize, u32),
    mut cell: impl FnMut(usize, usize) -> Result<u32, E>,
) -> Result<Result<Vec<u32>, String>, E> {
    let mut scales = Vec::with_capacity(rows);
    for row in 0..rows {
        let (lane, at) = scale_cell(row);
        let mut first = None;
        for q in 0..QUARTERS {
            let bits = (cell(lane + WARP_LANES * q, column + at)? >> (8 * byte)) & 0xff;
            match first {
                Some(other) if other != bits => {
                    return Ok(Err(format!(
                        "the scale of row {row} is {other:#04x} in lane {lane} and {bits:#04x} in lane {}, column {}: the four quarters' copies differ",
                        lane + WARP_LANES * q,
                        column + at
                    )))
                }
                _ => first = Some(bits),
            }
        }
        scales.push(first.unwrap_or(0));
    }
    Ok(Ok(scales))
}

/// One block-scaled `tcgen05.mma` of `kind` on the row-major 128×32 `a`
/// and 32×`N` `b` into the row-major 128×`N` `d`, `scales` A's 128 and
/// B's `N` (bits in the low byte), adding to `d` where `accumulate` holds
/// (the module docs' arithmetic).
pub fn block_mma_scaled(
    kind: Tcgen05Kind,
    (a, b): (&[f32], &[f32]),
    scales: [&[u32]; 2],
    d: &mut [f32],
    accumulate: bool,
) -> Result<(), String> {
    let (n, k) = (kind.n, kind.k());
    if !kind.takes_block_scales() || k != GROUP_K {
        return Err(format!("{} has no block-scaled form", kind.name()));
    }
    if scales[0].len() != M || scales[1].len() != n {
        return Err(format!(
            "{} and {} scales for {}",
            scales[0].len(),
            scales[1].len(),
            kind.name()
        ));
    }
    let sum = |c, products: &mut dyn Iterator<Item = (f32, f32)>, row: usize, col: usize| {
        crate::mma::scaled_step_sum(c, products, [scales[0][row], scales[1][col]])
    };
    super::block_product(kind, (a, b), (d, accumulate), sum)
}
