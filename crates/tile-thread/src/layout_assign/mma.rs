//! Tensor-core accumulators: which `dot`s run on `mma.sync`, WMMA or MFMA,
//! and the layout their accumulators take.
//!
//! The accumulator of `mma.sync.m16n8k16` holds a 16×8 block per warp, lane
//! `l` the elements at row `l/4 (+8)` and columns `2·(l%4) (+1)`
//! ([`tile_hw::mma`]). A tile of `[M, N]` is cut among `wm × wn` warps
//! (`wm·wn` the block's warps), each repeating its block `M / (16·wm)` times
//! down and `N / (8·wn)` times across. As a [`DistLayout`]:
//!
//! * `thread = (4, 8, wn, wm) : (2, N, 8, 16·N)` — lane `t = l%4` steps two
//!   columns, `g = l/4` a row, then the warps;
//! * `value = (2, 2, N/(8·wn), M/(16·wm)) : (1, 8·N, 8·wn, 16·wm·N)` —
//!   register `i + 4·r` is element `i` of the fragment of repetition `r`.
//!
//! RDNA 3's WMMA (`v_wmma_f32_16x16x16`, wave32) holds a 16×16 block per
//! warp, lane `l` the elements at column `l%16` and rows `l/16 + 2r`:
//! `thread = (16, 2, wn, wm) : (1, N, 16, 16·N)`,
//! `value = (8, N/(16·wn), M/(16·wm)) : (2·N, 16·wn, 16·wm·N)`.
//!
//! CDNA's MFMA (wave64) is issued by a wave of 64 lanes, two warps of the
//! program: the block's `wm × wn` units are its waves, `tid = l + 64·wave`.
//! `v_mfma_f32_32x32x8` holds a 32×32 block per wave, lane `l` column
//! `l%32` and rows `8·(r/4) + 4·(l/32) + r%4`:
//! `thread = (32, 2, wn, wm) : (1, 4·N, 32, 32·N)`,
//! `value = (4, 4, N/(32·wn), M/(32·wm)) : (N, 8·N, 32·wn, 32·wm·N)`;
//! `v_mfma_f32_16x16x16` a 16×16 block, lane `l` column `l%16` and rows
//! `4·(l/16) + r`: `thread = (16, 4, wn, wm) : (1, 4·N, 16, 16·N)`,
//! `value = (4, N/(16·wn), M/(16·wm)) : (N, 16·wn, 16·wm·N)`. The 32×32×8
//! instruction is chosen when the tile and the waves allow it (it loads
//! half the operand elements of 16×16×16 per product), else 16×16×16.
//! CDNA 4 (gfx950) first tries its forms of twice the `K` at twice the
//! rate, `32×32×16` then `16×16×32`, whose accumulators are laid out as
//! those of the CDNA 3 form of the same block.

use super::blocked::{flat_layout, row_major};
use super::chain;
use super::{DistLayout, LayoutKind};
use crate::lower::TensorCores;
use crate::program::{MmaKind, WARP_SIZE};
use tile_hw::mma::MmaFamily;
use tile_ir::layout::Layout;
use tile_ir::{DType, DotPrecision, Function, OpId, OpKind};

/// How one `dot` runs on tensor cores.
#[derive(Clone, Debug, PartialEq)]
pub struct MmaDot {
    /// The instruction.
    pub kind: MmaKind,
    /// The accumulator's layout (of the `c` operand and the result).
    pub layout: DistLayout,
    /// Warps (MFMA: 64-lane waves) along M and along N.
    pub warps: [usize; 2],
    /// Whether each block is computed transposed (MFMA feeding the next
    /// product's `a`: [`DistLayout::mfma_accumulator_transposed`]); the
    /// instruction then takes B's fragments as its A and A's as its B.
    pub transposed: bool,
    /// Whether CDNA 4's form is fed the `k` of two CDNA 3 steps (a product
    /// whose `a` is a transposed accumulator, `chain.rs`): lane group `h`'s
    /// 8 elements of A and of B are `k = 4h + i%4 + (K/2)·(i/4)` of the
    /// step, the 4 of each half-step such a lane holds, instead of the
    /// instruction's `8h + i`. The step's sum is the same, in another order.
    pub paired_k: bool,
}

/// How the `dot` `id` of `func` runs on `tensor_cores` with `num_warps`
/// warps, or `None` when it is a chain of fused multiply-adds (a
/// `dot_scaled` of one format on both sides with E8M0 scales runs on a
/// block-scaled instruction of that format where the target has one, or
/// is `None`, to be expanded): it must have
/// an instruction's precision and operand dtype (`tensor` on f16 or bf16,
/// and on FP8 of one format where the target has `mma.sync`'s FP8 form,
/// `tf32` on f32 for `mma.sync`'s TF32 instruction), and `M`, `N`, `K`
/// whole multiples of the instruction's shape that the warps (MFMA: the
/// block's whole 64-lane waves) can share. Of several instructions, the
/// first of [`MmaKind::ALL`] that fits.
pub fn mma_dot(
    func: &Function,
    id: OpId,
    num_warps: u32,
    tensor_cores: TensorCores,
) -> Option<MmaDot> {
    let op = func.op(id);
    let (precision, [a, b], scaled) = match (&op.kind, op.operands.as_slice()) {
        (OpKind::Dot { precision }, &[a, b, _]) => (*precision, [a, b], false),
        (OpKind::DotScaled, &[a, a_scale, b, b_scale, _]) => {
            let dtypes = [a, a_scale, b, b_scale].map(|v| func.ty(v).dtype());
            if !block_scaled_dtypes(dtypes) {
                return None;
            }
            (DotPrecision::Tensor, [a, b], true)
        }
        _ => return None,
    };
    let family = tensor_cores.family()?;
    let (da, db) = (func.ty(a).dtype(), func.ty(b).dtype());
    let (sa, sb) = (func.ty(a).tile_shape()?, func.ty(b).tile_shape()?);
    let (&[m, k], &[_, n]) = (sa.dims(), sb.dims()) else {
        return None;
    };
    let threads = num_warps as usize * WARP_SIZE as usize;
    let chained = chain::in_chain(func, id);
    let transposed = family == MmaFamily::Mfma && chain::feeds_a(func, id);
    let kinds: Vec<MmaKind> = match scaled {
        true => MmaKind::for_scaled_dot(family, da).collect(),
        false => MmaKind::for_dot(family, precision, da).collect(),
    };
    kinds
        .into_iter()
        .filter(|kind| tensor_cores.offers(*kind))
        .filter(|_| da == db && threads.is_multiple_of(family.lanes()))
        .find_map(|kind| {
            let (im, in_, ik) = kind.shape();
            if m % im != 0 || n % in_ != 0 || k % ik != 0 {
                return None;
            }
            let warps = if !matches!(family, MmaFamily::Wmma | MmaFamily::Wmma12) && chained {
                rows_per_warp(m / im, n / in_, threads / family.lanes())?
            } else {
                split_warps(m / im, n / in_, threads / family.lanes())?
            };
            let layout = if transposed {
                DistLayout::mfma_accumulator_transposed(kind, m, n, warps)?
            } else {
                DistLayout::mma_accumulator(kind, m, n, warps)?
            };
            Some(MmaDot {
                kind,
                layout,
                warps,
                transposed,
                paired_k: kind.is_cdna4() && chain::takes_a_from_dot(func, id),
            })
        })
}

/// Whether a `dot_scaled` of operands and scales of `dtypes` (`a`,
/// `a_scale`, `b`, `b_scale`) may fit a block-scaled instruction: one
/// format on both sides among `f8f6f4`'s (E4M3, E5M2, E2M3, E3M2, E2M1)
/// and E8M0 scales. Which of them a target takes its instructions say
/// ([`MmaKind::for_scaled_dot`], `Tcgen05Kind::new`).
pub(super) fn block_scaled_dtypes([a, a_scale, b, b_scale]: [DType; 4]) -> bool {
    a == b
        && matches!(
            a,
            DType::F8E4M3 | DType::F8E5M2 | DType::F6E2M3 | DType::F6E3M2 | DType::F4E2M1
        )
        && a_scale == DType::F8E8M0
        && b_scale == DType::F8E8M0
}

/// Warps along M only for a grid of `bm × bn` instruction blocks, for a
/// `dot` in a chain (`chain.rs`): each warp owns whole rows, so the next
/// product reads its `a` operand from this one's registers. Where the rows
/// are too few for the warps, as [`split_warps`].
fn rows_per_warp(bm: usize, bn: usize, warps: usize) -> Option<[usize; 2]> {
    if bm.is_multiple_of(warps) {
        Some([warps, 1])
    } else {
        split_warps(bm, bn, warps)
    }
}

/// Warps along M and N for a grid of `bm × bn` instruction blocks: each
/// doubling goes to the axis with more blocks per warp left (M on ties),
/// and every warp must get whole blocks.
pub(super) fn split_warps(bm: usize, bn: usize, warps: usize) -> Option<[usize; 2]> {
    let (mut wm, mut wn) = (1, 1);
    while wm * wn < warps {
        let (left_m, left_n) = (bm / wm, bn / wn);
        if left_m >= left_n && left_m % 2 == 0 {
            wm *= 2;
        } else if left_n % 2 == 0 {
            wn *= 2;
        } else if left_m % 2 == 0 {
            wm *= 2;
        } else {
            return None;
        }
    }
    Some([wm, wn])
}

impl DistLayout {
    /// The layout of an `[m, n]` accumulator of `kind` over `warps = [wm,
    /// wn]` (MFMA: waves; see the module docs), or `None` if they do not
    /// cut the tile into whole blocks of the instruction.
    pub fn mma_accumulator(
        kind: MmaKind,
        m: usize,
        n: usize,
        warps: [usize; 2],
    ) -> Option<DistLayout> {
        let [wm, wn] = warps;
        let (bm, bn, _) = kind.shape();
        if wm == 0 || wn == 0 || !m.is_multiple_of(bm * wm) || !n.is_multiple_of(bn * wn) {
            return None;
        }
        let (rep_m, rep_n) = (m / (bm * wm), n / (bn * wn));
        let blocks = [(rep_n, bn * wn), (rep_m, bm * wm * n)];
        let (thread, value, spt, tpw) = match kind.family() {
            // Lane l: row l/4 (+8), columns 2(l%4) (+1).
            MmaFamily::MmaSync => (
                flat_layout(&[(4, 2), (8, n), (wn, bn), (wm, bm * n)])?,
                flat_layout(&[&[(2, 1), (2, 8 * n)][..], &blocks].concat())?,
                vec![1, 2],
                vec![8, 4],
            ),
            // Lane l: column l%16, rows l/16 + 2r.
            MmaFamily::Wmma => (
                flat_layout(&[(16, 1), (2, n), (wn, bn), (wm, bm * n)])?,
                flat_layout(&[&[(8, 2 * n)][..], &blocks].concat())?,
                vec![1, 1],
                vec![2, 16],
            ),
            // Lane l: column l%16, rows 8(l/16) + r.
            MmaFamily::Wmma12 => (
                flat_layout(&[(16, 1), (2, 8 * n), (wn, bn), (wm, bm * n)])?,
                flat_layout(&[&[(8, n)][..], &blocks].concat())?,
                vec![1, 1],
                vec![2, 16],
            ),
            // Lane l of a 64-lane wave: column l%bn, rows 4(l/bn) + r%4,
            // plus 8 per group of 4 registers in 32×32 blocks.
            MmaFamily::Mfma => {
                let groups = kind.elements(tile_hw::mma::Fragment::C) / 4;
                let lane_rows = 64 / bn;
                (
                    flat_layout(&[(bn, 1), (lane_rows, 4 * n), (wn, bn), (wm, bm * n)])?,
                    flat_layout(&[&[(4, n), (groups, 8 * n)][..], &blocks].concat())?,
                    vec![1, 1],
                    vec![lane_rows, bn],
                )
            }
        };
        debug_assert_eq!(row_major(&[m, n]), vec![n, 1]);
        Some(accumulator(vec![m, n], (spt, tpw, [wm, wn]), thread, value))
    }

    /// The layout of an `[m, n]` accumulator of the MFMA `kind` whose
    /// blocks (square) are computed transposed: lane `l` of a 32×32 block
    /// holds row `l%32` and columns `8·(r/4) + 4·(l/32) + r%4`
    /// (`thread = (32, 2, wn, wm) : (N, 4, 32, 32·N)`,
    /// `value = (4, 4, N/(32·wn), M/(32·wm)) : (1, 8, 32·wn, 32·wm·N)`);
    /// of a 16×16 block row `l%16` and columns `4·(l/16) + r`. `None`
    /// unless `kind` is MFMA and `waves` cut the tile into whole blocks.
    pub fn mfma_accumulator_transposed(
        kind: MmaKind,
        m: usize,
        n: usize,
        waves: [usize; 2],
    ) -> Option<DistLayout> {
        let [wm, wn] = waves;
        let (bm, bn, _) = kind.shape();
        let blocks_fit = wm > 0 && wn > 0 && m.is_multiple_of(bm * wm) && n.is_multiple_of(bn * wn);
        if kind.family() != MmaFamily::Mfma || bm != bn || !blocks_fit {
            return None;
        }
        let (rep_m, rep_n) = (m / (bm * wm), n / (bn * wn));
        let groups = kind.elements(tile_hw::mma::Fragment::C) / 4;
        let lane_columns = 64 / bm;
        let thread = flat_layout(&[(bm, n), (lane_columns, 4), (wn, bn), (wm, bm * n)])?;
        let value = flat_layout(&[(4, 1), (groups, 8), (rep_n, bn * wn), (rep_m, bm * wm * n)])?;
        let tiling = (vec![1, 4], vec![bm, lane_columns], [wm, wn]);
        Some(accumulator(vec![m, n], tiling, thread, value))
    }
}

/// An accumulator layout of `shape` (row-major), with its per-thread runs,
/// threads per warp and warps per axis, and its thread and value layouts.
pub(super) fn accumulator(
    shape: Vec<usize>,
    (size_per_thread, threads_per_warp, [wm, wn]): (Vec<usize>, Vec<usize>, [usize; 2]),
    thread: Layout,
    value: Layout,
) -> DistLayout {
    DistLayout {
        kind: LayoutKind::MmaAccumulator,
        padded: shape.clone(),
        shape,
        size_per_thread,
        threads_per_warp,
        warps_per_block: vec![wm, wn],
        order: vec![1, 0],
        thread,
        value,
        replicated: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_hw::mma::Fragment;

    /// Register `i + 4·r` of every thread holds element `i` of the C
    /// fragment of its warp's block `r`, as the instruction set lays it out.
    #[test]
    fn accumulator_registers_are_the_fragments_of_the_manual() {
        let kind = MmaKind::F16M16N8K16;
        let (m, n, warps) = (64, 32, [2, 2]);
        let layout = DistLayout::mma_accumulator(kind, m, n, warps).unwrap();
        let rep_n = n / 16;
        for t in 0..128 {
            let (lane, warp) = (t % 32, t / 32);
            let (warp_m, warp_n) = (warp / 2, warp % 2);
            for v in 0..layout.registers() {
                let (i, r) = (v % 4, v / 4);
                let (rn, rm) = (r % rep_n, r / rep_n);
                let (row, col) = kind.element(Fragment::C, lane, i);
                let want = vec![16 * (warp_m + 2 * rm) + row, 8 * (warp_n + 2 * rn) + col];
                assert_eq!(layout.coordinate(t, v), (want, true, true), "t{t} v{v}");
            }
        }
    }

    /// MFMA: register `i + nc·r` of every thread holds element `i` of the
    /// D fragment (`nc` registers) of its wave's block `r` (2×2 blocks a
    /// wave, N first), lane `t % 64` of wave `t / 64`, for both
    /// instructions; in the transposed layout (`Dᵀ = Bᵀ·Aᵀ`) mirrored, the
    /// fragment's row the tile's column.
    #[test]
    fn mfma_accumulator_registers_are_the_fragments_of_the_manual() {
        for transposed in [false, true] {
            for kind in [MmaKind::MfmaF16M32N32K8, MmaKind::MfmaBf16M16N16K16] {
                let (bm, bn, _) = kind.shape();
                let nc = kind.elements(Fragment::C);
                let (m, n, waves) = (4 * bm, 4 * bn, [2, 2]);
                let layout = match transposed {
                    true => DistLayout::mfma_accumulator_transposed(kind, m, n, waves),
                    false => DistLayout::mma_accumulator(kind, m, n, waves),
                };
                let layout = layout.unwrap();
                assert_eq!(layout.registers(), 4 * nc);
                for t in 0..256 {
                    let (lane, wave) = (t % 64, t / 64);
                    let (wave_m, wave_n) = (wave / 2, wave % 2);
                    for v in 0..layout.registers() {
                        let (i, r) = (v % nc, v / nc);
                        let (rn, rm) = (r % 2, r / 2);
                        let (row, col) = kind.element(Fragment::C, lane, i);
                        let (row, col) = if transposed { (col, row) } else { (row, col) };
                        let want = vec![bm * (wave_m + 2 * rm) + row, bn * (wave_n + 2 * rn) + col];
                        assert_eq!(layout.coordinate(t, v), (want, true, true), "t{t} v{v}");
                    }
                }
            }
        }
    }

    /// Only MFMA has a transposed accumulator.
    #[test]
    fn only_mfma_accumulators_transpose() {
        let wmma = MmaKind::ALL
            .into_iter()
            .find(|k| k.family() == MmaFamily::Wmma)
            .unwrap();
        assert!(DistLayout::mfma_accumulator_transposed(wmma, 64, 64, [2, 2]).is_none());
    }

    /// The instruction and the warps (waves) of the matmul sample's `dot`
    /// of `dtype` over `(m, n, k)` tiles on `warps` warps and `cores`.
    fn matmul_plan(
        dtype: tile_ir::DType,
        (m, n, k): (usize, usize, usize),
        warps: u32,
        cores: TensorCores,
    ) -> Option<(MmaKind, [usize; 2])> {
        let func = tile_ir::samples::matmul(m, n, k, dtype).unwrap();
        let dot = func
            .ops
            .iter()
            .find(|(_, op)| matches!(op.kind, OpKind::Dot { .. }))
            .map(|(id, _)| id)
            .unwrap();
        mma_dot(&func, dot, warps, cores).map(|p| (p.kind, p.warps))
    }

    /// MFMA takes 32×32×8 where the tile and the waves allow it, else
    /// 16×16×16, and nothing without whole waves.
    #[test]
    fn mfma_prefers_32x32_blocks() {
        let plan = |tile, warps| matmul_plan(tile_ir::DType::F16, tile, warps, TensorCores::Mfma);
        assert_eq!(
            plan((128, 128, 64), 8),
            Some((MmaKind::MfmaF16M32N32K8, [2, 2]))
        );
        // One 32×32 block cannot feed 2 waves; 2×2 16×16 blocks can.
        assert_eq!(
            plan((32, 32, 16), 4),
            Some((MmaKind::MfmaF16M16N16K16, [2, 1]))
        );
        assert_eq!(
            plan((32, 32, 16), 2),
            Some((MmaKind::MfmaF16M32N32K8, [1, 1]))
        );
        // 48 rows are no whole 32-row blocks; K = 8 no 16×16×16 step.
        assert_eq!(
            plan((48, 32, 16), 2),
            Some((MmaKind::MfmaF16M16N16K16, [1, 1]))
        );
        assert_eq!(plan((48, 32, 8), 2), None);
        // One warp is half a wave.
        assert_eq!(plan((32, 32, 16), 1), None);
    }

    /// gfx950 takes CDNA 4's forms of twice the `K` first (32×32×16, then
    /// 16×16×32), CDNA 3's where `K` is no multiple of theirs.
    #[test]
    fn cdna4_prefers_its_own_forms() {
        let plan =
            |tile, warps| matmul_plan(tile_ir::DType::BF16, tile, warps, TensorCores::Mfma950);
        assert_eq!(
            plan((128, 128, 64), 8),
            Some((MmaKind::MfmaBf16M32N32K16, [2, 2]))
        );
        assert_eq!(
            plan((32, 32, 32), 4),
            Some((MmaKind::MfmaBf16M16N16K32, [2, 1]))
        );
        // K = 16: 16×16×32 does not fit, CDNA 3's 16×16×16 does.
        assert_eq!(
            plan((32, 32, 16), 4),
            Some((MmaKind::MfmaBf16M16N16K16, [2, 1]))
        );
        assert_eq!(
            plan((32, 32, 8), 2),
            Some((MmaKind::MfmaBf16M32N32K8, [1, 1]))
        );
    }

    #[test]
    fn warps_split_the_longer_side_first() {
        assert_eq!(split_warps(4, 8, 4), Some([2, 2]));
        assert_eq!(split_warps(8, 16, 8), Some([2, 4]));
        assert_eq!(split_warps(1, 4, 4), Some([1, 4]));
        assert_eq!(split_warps(1, 1, 4), None);
        assert_eq!(split_warps(3, 3, 2), None);
    }
}
