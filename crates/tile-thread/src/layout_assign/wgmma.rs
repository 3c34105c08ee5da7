//! Hopper's warpgroup MMA: which `dot`s run on `wgmma.m64n64k16` and the
//! layout of their accumulators.
//!
//! A warpgroup (4 warps, 128 threads) issues one instruction for a 64×`n`
//! block of D from a 64×16 block of A and a 16×`n` block of B in shared
//! memory, `n` being 64 (one 128-byte atom of an N-major B's rows), or,
//! where B is read K-major (its rows run along N, so any multiple of 8
//! rows is whole atoms), `N` itself where it is below 64 (attention's
//! `q·kᵀ` over 32 keys, its backward's `k·qᵀ` over 32 queries) or the
//! widest of 256 and 128 that divides `N` and whose blocks the warpgroups
//! can share (`q·kᵀ` over 128 keys: one `m64n128k16` a step). A tile of
//! `[M, N]` is cut among `gm × gn` warpgroups (all of the block's), each
//! repeating its 64×`n` block `M / (64·gm)` times down and `N / (n·gn)`
//! times across. Thread `T` of a warpgroup (warp `w`, `g`, `t` of
//! [`tile_hw::wgmma`]) holds element `i` of each repetition's `n / 2` at
//! row `16w + g + 8·((i/2) % 2)` and column `8·(i/4) + 2t + i%2`. As a
//! [`DistLayout`] into the row-major `[M, N]` tile:
//!
//! * `thread = (4, 8, 4, gn, gm) : (2, N, 16·N, n, 64·N)`;
//! * `value = (2, 2, n/8, N/(n·gn), M/(64·gm)) : (1, 8·N, 8, n·gn, 64·gm·N)`.
//!
//! A dot takes it when its precision is `tensor`, its operands f16 or bf16,
//! `M` a multiple of 64 and `N` a multiple of 64 (or one `n` below it,
//! above) that the warpgroups can share, and `K` a multiple of 64 (A staged
//! in blocks of 64 `k`, rows of 128 bytes under the 128-byte swizzle), 32
//! or 16 (one block of rows of 64 or 32 bytes, under the 64- or 32-byte
//! swizzle; `N` then a multiple of 64, or B the transpose of a loaded
//! tile, staged K-major in A's rows). FP8 operands (`e4m3`, `e5m2`:
//! `wgmma.m64nNk32`) take the same blocks with twice the `k` per row
//! (128, 64 or 32), and as the instruction reads them K-major only, their
//! B must be the transpose of a loaded tile, staged K-major as A is (an
//! FP8 GEMM's `a · wᵀ`). So do `tf32` dots of f32 operands
//! (`wgmma.m64nNk8.f32.tf32.tf32`, 32 `k` to a row of 128 bytes), whose
//! instruction also reads B K-major only and truncates each operand to
//! TF32: the lowering rounds the staged operands first
//! (`lower/round_staged.rs`). Other dots on sm_90a take `mma.sync`.

use super::blocked::{flat_layout, row_major};
use super::mma::split_warps;
use super::{DistLayout, LayoutKind};
use crate::lower::{is_transposed, TensorCores};
use crate::program::{DescriptorSwizzle, WgmmaKind};
use tile_hw::wgmma::{b_swizzle, Major};
use tile_ir::{DType, DotPrecision, Function, OpId, OpKind};

/// The `N` of the `wgmma`s of a dot whose `N` is a multiple of it: one
/// 128-byte atom of an N-major B's rows (see `tile_hw::wgmma` on wider
/// N-major operands).
pub const WGMMA_N: usize = 64;

/// The widest `N` of one instruction (`wgmma`'s and `tcgen05.mma`'s).
const WIDEST_N: usize = 256;

/// The bytes of a row of A's staged blocks where `K` has that many: one
/// atom of the 128-byte swizzle.
const ROW_BYTES: usize = 128;

/// How one `dot` runs on `wgmma`.
#[derive(Clone, Debug, PartialEq)]
pub struct WgmmaDot {
    /// The instruction; its `n` is the columns of D each one computes.
    pub kind: WgmmaKind,
    /// The accumulator's layout.
    pub layout: DistLayout,
    /// Warpgroups along M and along N.
    pub groups: [usize; 2],
    /// The swizzle of A's staging, whose rows are `K` elements, at most
    /// 128 bytes.
    pub a_swizzle: DescriptorSwizzle,
}

impl WgmmaDot {
    /// The `k` of a row of A's staged blocks: 64, 32 or 16 16-bit
    /// elements, 128, 64 or 32 8-bit ones.
    pub fn a_columns(&self) -> usize {
        self.a_swizzle.row_bytes().unwrap_or(ROW_BYTES) / self.kind.dtype.size_bytes()
    }

    /// Whether B must be staged K-major: for 8-bit and `tf32` operands,
    /// and for an instruction `N` other than 64 (narrower, or widened, as
    /// only a K-major B's rows reach).
    pub fn k_major_b(&self) -> bool {
        self.kind.k_major_only() || self.kind.n != WGMMA_N
    }

    /// The `k` of a row of a K-major B's staged blocks: A's
    /// (`tile_hw::wgmma::b_swizzle`).
    pub fn b_k_columns(&self) -> usize {
        let swizzle = b_swizzle(self.a_swizzle, Major::K);
        swizzle.row_bytes().unwrap_or(ROW_BYTES) / self.kind.dtype.size_bytes()
    }
}

/// What a dot on an instruction that reads its operands through
/// descriptors (`wgmma`, `tcgen05.mma`) has to fit: its operands' dtype,
/// `[M, K]` and `N`, A's swizzle and the `N` of one instruction.
pub(super) struct DescriptorShape {
    /// The operands' dtype (both the same).
    pub(super) dtype: tile_ir::DType,
    /// `M`, `K` and `N`.
    pub(super) mkn: [usize; 3],
    /// The swizzle of A's staging: rows of `K` elements, at most 128
    /// bytes.
    pub(super) a_swizzle: DescriptorSwizzle,
    /// The columns of D one instruction computes: one 128-byte swizzle
    /// atom of an MN-major B's `n` (64 16-bit elements, 32 `f32`: the
    /// widest one descriptor of it reaches), or, where B's rows run along
    /// N, `N` below it or 64.
    pub(super) instruction_n: usize,
    /// Whether B can be read K-major: the transpose of a tile its copies
    /// move as stored, staged in rows as A's.
    pub(super) k_major_b: bool,
    /// Whether the product is a `dot_scaled` (one format of
    /// [`super::mma::block_scaled_dtypes`]'s, E8M0 scales), which only a
    /// block-scaled instruction runs.
    pub(super) block_scaled: bool,
}

/// The shape of the `dot` `id` of `func` on such an instruction with
/// `num_warps` warps (whole warpgroups), or `None`: precision `tensor`
/// (`tf32` on f32 operands), operands of one dtype, `K` a multiple of 128
/// bytes of them or 64 or 32 bytes, `N` a multiple of one 128-byte atom of
/// them (64 16-bit, 32 `f32`) or, below it and a multiple of 8, B the
/// transpose of a tile its copies move as stored (in rows as A's:
/// `Lowerer::reads_transposed_b`). Operands whose element
/// size `mn_major` refuses (the instruction, or the staging, has no
/// MN-major form of them) are staged K-major only, so their B is always
/// such a transpose. A `dot_scaled` of one format with E8M0 scales
/// ([`super::mma::block_scaled_dtypes`]) has the shape of the `dot` of its
/// operands, marked [`DescriptorShape::block_scaled`] (of which
/// `tcgen05.mma`'s kinds take E4M3 and E5M2).
pub(super) fn descriptor_shape(
    func: &Function,
    id: OpId,
    num_warps: u32,
    mn_major: impl Fn(usize) -> bool,
) -> Option<DescriptorShape> {
    let op = func.op(id);
    let (precision, [a, b], block_scaled) = match (&op.kind, op.operands.as_slice()) {
        (OpKind::Dot { precision }, [a, b, _]) => (*precision, [a, b], false),
        (OpKind::DotScaled, &[ref a, a_scale, ref b, b_scale, _]) => {
            let dtypes = [*a, a_scale, *b, b_scale].map(|v| func.ty(v).dtype());
            if !super::mma::block_scaled_dtypes(dtypes) {
                return None;
            }
            (DotPrecision::Tensor, [a, b], true)
        }
        _ => return None,
    };
    let (da, db) = (func.ty(*a).dtype(), func.ty(*b).dtype());
    let tensor = match precision {
        DotPrecision::Tensor => da != DType::F32,
        DotPrecision::Tf32 => da == DType::F32,
        _ => false,
    };
    if !tensor || !num_warps.is_multiple_of(4) {
        return None;
    }
    let (sa, sb) = (func.ty(*a).tile_shape()?, func.ty(*b).tile_shape()?);
    let (&[m, k], &[_, n]) = (sa.dims(), sb.dims()) else {
        return None;
    };
    // A's rows: 128 bytes of `k`, or all of `K` where it is less.
    let bytes = da.size_bytes();
    let row = ROW_BYTES / bytes;
    let a_swizzle = DescriptorSwizzle::for_rows(bytes * if k % row == 0 { row } else { k })?;
    // Operands read K-major only: B must be the transpose of a tile its
    // copies move as stored. A transposed B is staged in A's rows.
    let k_major_only = !mn_major(bytes);
    let k_major_b = is_transposed(func, *b);
    let atom_n = ROW_BYTES / bytes;
    let instruction_n = match n {
        _ if k_major_only && !k_major_b => return None,
        _ if n.is_multiple_of(atom_n) => atom_n,
        _ if n < atom_n && k_major_b => n,
        // An FP8 `N` of 64 times an odd number.
        _ if n.is_multiple_of(WGMMA_N) && k_major_b => WGMMA_N,
        _ => return None,
    };
    (da == db).then_some(DescriptorShape {
        dtype: da,
        mkn: [m, k, n],
        a_swizzle,
        instruction_n,
        k_major_b,
        block_scaled,
    })
}

impl DescriptorShape {
    /// The widest `N` of one instruction, 256, 128, 64 or the one already
    /// chosen, that divides the dot's `N` and that `fits` (the warpgroups
    /// can share its blocks), where B is read K-major (its rows run along
    /// N, so one descriptor reaches any 8-row multiple of them); else the
    /// `N` already chosen.
    pub(super) fn widest_n(&self, fits: impl Fn(usize) -> bool) -> usize {
        let (n, chosen) = (self.mkn[2], self.instruction_n);
        [WIDEST_N, 2 * WGMMA_N, WGMMA_N, chosen]
            .into_iter()
            .filter(|&w| self.k_major_b && n.is_multiple_of(w))
            .find(|&w| fits(w))
            .unwrap_or(chosen)
    }
}

/// How the `dot` `id` of `func` runs on `wgmma` with `num_warps` warps, or
/// `None` (see the module docs).
pub fn wgmma_dot(
    func: &Function,
    id: OpId,
    num_warps: u32,
    tensor_cores: TensorCores,
) -> Option<WgmmaDot> {
    if tensor_cores != TensorCores::Wgmma {
        return None;
    }
    // TF32 and 8-bit operands have no `imm-trans` form.
    let shape = descriptor_shape(func, id, num_warps, |bytes| bytes == 2)?;
    let [m, _, n] = shape.mkn;
    if m % 64 != 0 || shape.block_scaled {
        return None;
    }
    let warpgroups = num_warps as usize / 4;
    let instruction_n = shape.widest_n(|w| split_warps(m / 64, n / w, warpgroups).is_some());
    let (kind, a_swizzle) = (WgmmaKind::new(shape.dtype, instruction_n)?, shape.a_swizzle);
    let groups = split_warps(m / 64, n / instruction_n, warpgroups)?;
    let layout = DistLayout::wgmma_accumulator(m, [n, instruction_n], groups)?;
    Some(WgmmaDot {
        kind,
        layout,
        groups,
        a_swizzle,
    })
}

impl DistLayout {
    /// The layout of an `[m, n]` accumulator of `wgmma.m64n<i>k16` (`[n,
    /// i]`: the tile's columns and the instruction's) over `groups = [gm,
    /// gn]` warpgroups (see the module docs), or `None` if they do not cut
    /// the tile into whole 64×`i` blocks.
    pub fn wgmma_accumulator(
        m: usize,
        [n, i]: [usize; 2],
        groups: [usize; 2],
    ) -> Option<DistLayout> {
        let [gm, gn] = groups;
        let whole = |extent: usize, block: usize| block > 0 && extent.is_multiple_of(block);
        if !whole(m, 64 * gm) || !whole(n, i * gn) || !i.is_multiple_of(8) {
            return None;
        }
        let (rep_m, rep_n) = (m / (64 * gm), n / (i * gn));
        let thread = flat_layout(&[(4, 2), (8, n), (4, 16 * n), (gn, i), (gm, 64 * n)])?;
        let value = flat_layout(&[
            (2, 1),
            (2, 8 * n),
            (i / 8, 8),
            (rep_n, i * gn),
            (rep_m, 64 * gm * n),
        ])?;
        debug_assert_eq!(row_major(&[m, n]), vec![n, 1]);
        Some(DistLayout {
            kind: LayoutKind::MmaAccumulator,
            shape: vec![m, n],
            size_per_thread: vec![1, 2],
            threads_per_warp: vec![8, 4],
            warps_per_block: vec![4 * gm, gn],
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
    use tile_hw::wgmma::{accumulator_element, WARPGROUP};

    /// Register `i + (n/2)·r` of every thread holds element `i` of
    /// repetition `r` of its warpgroup's block, where `tile_hw::wgmma`
    /// puts it: for 64 columns per instruction, and for 32.
    #[test]
    fn accumulator_registers_are_the_manuals_fragments() {
        for (m, n, i, groups) in [(256, 128, 64, [2, 1]), (128, 32, 32, [2, 1])] {
            let layout = DistLayout::wgmma_accumulator(m, [n, i], groups).unwrap();
            let (per, rep_n) = (i / 2, n / i);
            for t in 0..WARPGROUP * groups[0] {
                let (within, group) = (t % WARPGROUP, t / WARPGROUP);
                for v in 0..layout.registers() {
                    let (e, r) = (v % per, v / per);
                    let (rn, rm) = (r % rep_n, r / rep_n);
                    let (row, col) = accumulator_element(within, e);
                    let want = vec![64 * (group + 2 * rm) + row, i * rn + col];
                    assert_eq!(
                        layout.coordinate(t, v),
                        (want, true, true),
                        "n{i} t{t} v{v}"
                    );
                }
            }
        }
        assert!(DistLayout::wgmma_accumulator(96, [64, 64], [1, 1]).is_none());
        assert!(DistLayout::wgmma_accumulator(64, [32, 12], [1, 1]).is_none());
    }
}
