//! Blackwell's `tcgen05.mma`: which `dot`s run on it and the layout of
//! their accumulators.
//!
//! One thread issues each instruction: a 128×`n` block of D in tensor
//! memory from a 128×16 block of A and a 16×`n` block of B in shared
//! memory, staged as for `wgmma` (`layout_assign/wgmma.rs`: A in blocks of
//! `min(K, 64)` `k`, B in blocks of 64 `n`, or K-major), `n` 64 or, with a
//! K-major B, the dot's `N` below 64. Row block `i` of an `[M, N]`
//! accumulator takes tensor-memory columns `i·N` to `(i + 1)·N`, so the dot
//! needs `(M / 128)·N` of the 512 columns. The block's warpgroups read it
//! out with `tcgen05.ld.32x32b` (each warp its quarter of the lanes):
//! thread `T` (lane `l`, warp `w`, warpgroup `g = w / 4` of `G`) holds row
//! `128·i + 32·(w % 4) + l`, columns `g·N/G` to `(g + 1)·N/G`, register
//! `c + (N/G)·i` column `g·N/G + c` of row block `i`. As a [`DistLayout`]
//! into the row-major `[M, N]` tile:
//!
//! * `thread = (32, 4, G) : (N, 32·N, N/G)`;
//! * `value = (N/G, M/128) : (1, 128·N)`.
//!
//! A dot takes it when its precision is `tensor`, its operands f16 or bf16,
//! `M` a multiple of 128, `N` a multiple of 64 (or one `n` below it, a
//! multiple of 16, with B the transpose of a loaded tile, staged K-major in
//! A's rows) that the warpgroups share, `K` a multiple of 64, 32 or 16,
//! and its columns within tensor memory's; or its operands E4M3 or E5M2
//! (`kind::f8f6f4`, `K` 32 per instruction), staged as for `wgmma`: `K` a
//! multiple of 128, 64 or 32 bytes and B the transpose of a loaded tile,
//! read K-major with A's rows; or, of precision `tf32`, f32 (`kind::tf32`,
//! `K` 8), a transposed B staged as FP8's is, any other B MN-major in
//! blocks of 32 `n` (one 128-byte atom, `N` 32 an instruction), both
//! rounded to TF32 in shared memory first (`lower/round_staged.rs`). Other
//! dots on sm_100a take `mma.sync`.
//!
//! A `dot_scaled` of E4M3 or E5M2 operands (one format) with E8M0 scales
//! takes the block-scaled form (`kind::mxf8f6f4.block_scale`) where it
//! would take `kind::f8f6f4`, with an instruction `N` of whole 32 columns,
//! and its scale images fit beside the accumulator, each side's columns
//! shared by the warpgroups ([`Tcgen05Dot::scale_image_columns`],
//! `lower/tensor_scales.rs`); other `dot_scaled`s are expanded.

use super::blocked::{flat_layout, row_major};
use super::wgmma::descriptor_shape;
use super::{DistLayout, LayoutKind};
use crate::lower::TensorCores;
use crate::program::{DescriptorSwizzle, Tcgen05Kind};
use tile_hw::tcgen05::{scale_columns, COLUMNS, GROUPS_PER_COLUMN, GROUP_K, M, WARP_LANES};
use tile_hw::wgmma::{b_swizzle, Major};
use tile_ir::{Function, OpId};

/// How one `dot` runs on `tcgen05.mma`.
#[derive(Clone, Debug, PartialEq)]
pub struct Tcgen05Dot {
    /// The instruction (B MN-major; the lowering reads a transposed B
    /// K-major); its `n` is the columns of D each one computes.
    pub kind: Tcgen05Kind,
    /// The accumulator's layout.
    pub layout: DistLayout,
    /// The block's warpgroups, which share the columns.
    pub groups: usize,
    /// The swizzle of A's staging, whose rows are `K` elements, at most 128
    /// bytes.
    pub a_swizzle: DescriptorSwizzle,
    /// Whether it is a `dot_scaled` on the block-scaled form.
    pub block_scaled: bool,
}

impl Tcgen05Dot {
    /// The `k` of a row of A's staged blocks: 64, 32 or 16 16-bit
    /// elements, 128, 64 or 32 8-bit ones, 32, 16 or 8 TF32 ones.
    pub fn a_columns(&self) -> usize {
        self.a_swizzle.row_bytes().unwrap_or(128) / self.kind.dtype.size_bytes()
    }

    /// Whether B must be staged K-major: for an instruction `N` other
    /// than one 128-byte atom of `n` (narrower, or widened, as only a
    /// K-major B's rows reach).
    pub fn k_major_b(&self) -> bool {
        self.kind.n != 128 / self.kind.dtype.size_bytes()
    }

    /// The `k` of a row of a K-major B's staged blocks: A's
    /// (`tile_hw::wgmma::b_swizzle`).
    pub fn b_k_columns(&self) -> usize {
        let bytes = self.kind.dtype.size_bytes();
        b_swizzle(self.a_swizzle, Major::K)
            .row_bytes()
            .unwrap_or(128)
            / bytes
    }

    /// The tensor-memory columns the accumulator takes.
    pub fn columns(&self) -> usize {
        let [m, n] = [self.layout.shape[0], self.layout.shape[1]];
        m / M * n
    }

    /// The tensor-memory columns of the scale images of a block-scaled
    /// product of depth `k`, A's then B's (`[0, 0]` for other products):
    /// per row block of 128 (per block of the instruction's `N` columns),
    /// per four groups of 32 `k`, the side's [`scale_columns`].
    pub fn scale_image_columns(&self, k: usize) -> [usize; 2] {
        if !self.block_scaled {
            return [0, 0];
        }
        let sets = (k / GROUP_K).div_ceil(GROUPS_PER_COLUMN);
        let [m, n] = [self.layout.shape[0], self.layout.shape[1]];
        [
            m / M * sets * scale_columns(M),
            n / self.kind.n * sets * scale_columns(self.kind.n),
        ]
    }

    /// The columns each thread reads per row block: `N / G`.
    pub fn thread_columns(&self) -> usize {
        self.layout.shape[1] / self.groups
    }
}

/// How the `dot` `id` of `func` runs on `tcgen05.mma` with `num_warps`
/// warps, or `None` (see the module docs).
pub fn tcgen05_dot(
    func: &Function,
    id: OpId,
    num_warps: u32,
    tensor_cores: TensorCores,
) -> Option<Tcgen05Dot> {
    if tensor_cores != TensorCores::Tcgen05 {
        return None;
    }
    // Every kind the lowering issues reads B MN-major too (E4M3 and E5M2
    // among `kind::f8f6f4`'s formats).
    let shape = descriptor_shape(func, id, num_warps, |_| true)?;
    let ([m, _, n], a_swizzle) = (shape.mkn, shape.a_swizzle);
    // One thread issues every instruction: any `N` that divides the dot's.
    let kind = Tcgen05Kind::new(shape.dtype, shape.widest_n(|_| true), Major::Mn)?;
    let groups = num_warps as usize / 4;
    if !m.is_multiple_of(M) || m / M * n > COLUMNS || !n.is_multiple_of(groups) {
        return None;
    }
    let layout = DistLayout::tensor_memory_accumulator(m, n, groups)?;
    let plan = Tcgen05Dot {
        kind,
        layout,
        groups,
        a_swizzle,
        block_scaled: shape.block_scaled,
    };
    let images = plan.scale_image_columns(shape.mkn[1]);
    let fits = !plan.block_scaled
        || kind.takes_block_scales()
            && kind.n.is_multiple_of(WARP_LANES)
            && shape.mkn[1].is_multiple_of(GROUP_K)
            && images.iter().all(|c| c.is_multiple_of(groups))
            && plan.columns() + images[0] + images[1] <= COLUMNS;
    fits.then_some(plan)
}

impl DistLayout {
    /// The layout of an `[m, n]` accumulator read out of tensor memory by
    /// `groups` warpgroups (see the module docs), or `None` unless `m` is
    /// whole blocks of 128 rows and `n` splits among the groups.
    pub fn tensor_memory_accumulator(m: usize, n: usize, groups: usize) -> Option<DistLayout> {
        if m == 0 || !m.is_multiple_of(M) || groups == 0 || !n.is_multiple_of(groups) {
            return None;
        }
        let per = n / groups;
        let thread = flat_layout(&[(WARP_LANES, n), (4, WARP_LANES * n), (groups, per)])?;
        let value = flat_layout(&[(per, 1), (m / M, M * n)])?;
        debug_assert_eq!(row_major(&[m, n]), vec![n, 1]);
        Some(DistLayout {
            kind: LayoutKind::MmaAccumulator,
            shape: vec![m, n],
            size_per_thread: vec![1, per],
            threads_per_warp: vec![WARP_LANES, 1],
            warps_per_block: vec![4, groups],
            order: vec![1, 0],
            padded: vec![m, n],
            thread,
            value,
            replicated: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_hw::tcgen05::load_element;

    /// Register `c + (N/G)·i` of thread `T` is what `tcgen05.ld.32x32b`
    /// gives its lane at column `c` of its warpgroup's share of row block
    /// `i`.
    #[test]
    fn accumulator_registers_are_the_loads_rows() {
        for (m, n, groups) in [(128, 64, 1), (256, 128, 2), (128, 16, 1)] {
            let layout = DistLayout::tensor_memory_accumulator(m, n, groups).unwrap();
            let per = n / groups;
            assert_eq!(layout.registers(), per * m / M);
            for t in 0..128 * groups {
                let (lane, warp) = (t % 32, t / 32);
                for v in 0..layout.registers() {
                    let (c, i) = (v % per, v / per);
                    let (row, col) = load_element(warp % 4, lane, c);
                    let want = vec![M * i + row, (warp / 4) * per + col];
                    assert_eq!(layout.coordinate(t, v), (want, true, true), "t{t} v{v}");
                }
            }
        }
        assert!(DistLayout::tensor_memory_accumulator(64, 64, 1).is_none());
        assert!(DistLayout::tensor_memory_accumulator(128, 48, 2).is_some());
        assert!(DistLayout::tensor_memory_accumulator(128, 63, 2).is_none());
    }
}
