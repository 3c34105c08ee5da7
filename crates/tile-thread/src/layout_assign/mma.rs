//! Tensor-core accumulators: which `dot`s run on `mma.sync` or WMMA, and
//! the layout their accumulators take.
//!
//! The accumulator of `mma.sync.m16n8k16` holds a 16×8 block per warp, lane
//! `l` the elements at row `l/4 (+8)` and columns `2·(l%4) (+1)`
//! ([`tile_abi::mma`]). A tile of `[M, N]` is cut among `wm × wn` warps
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

use super::blocked::row_major;
use super::{DistLayout, LayoutKind};
use crate::lower::TensorCores;
use crate::program::MmaKind;
use tile_abi::mma::MmaFamily;
use tile_ir::layout::{IntTuple, Layout};
use tile_ir::{DotPrecision, Function, OpId, OpKind};

/// How one `dot` runs on tensor cores.
#[derive(Clone, Debug, PartialEq)]
pub struct MmaDot {
    /// The instruction.
    pub kind: MmaKind,
    /// The accumulator's layout (of the `c` operand and the result).
    pub layout: DistLayout,
    /// Warps along M and along N.
    pub warps: [usize; 2],
}

/// How the `dot` `id` of `func` runs on `tensor_cores` with `num_warps`
/// warps, or `None` when it is a chain of fused multiply-adds: it must have
/// precision `tensor`, operands of an instruction's dtype, and `M`, `N`, `K`
/// whole multiples of the instruction's shape that the warps can share.
pub fn mma_dot(
    func: &Function,
    id: OpId,
    num_warps: u32,
    tensor_cores: TensorCores,
) -> Option<MmaDot> {
    let op = func.op(id);
    let (OpKind::Dot { precision }, [a, b, _]) = (&op.kind, op.operands.as_slice()) else {
        return None;
    };
    let family = tensor_cores.family()?;
    if *precision != DotPrecision::Tensor {
        return None;
    }
    let (da, db) = (func.ty(*a).dtype(), func.ty(*b).dtype());
    let kind = MmaKind::for_operands(family, da).filter(|_| da == db)?;
    let (sa, sb) = (func.ty(*a).tile_shape()?, func.ty(*b).tile_shape()?);
    let (&[m, k], &[_, n]) = (sa.dims(), sb.dims()) else {
        return None;
    };
    let (im, in_, ik) = kind.shape();
    if m % im != 0 || n % in_ != 0 || k % ik != 0 {
        return None;
    }
    let warps = split_warps(m / im, n / in_, num_warps as usize)?;
    let layout = DistLayout::mma_accumulator(kind, m, n, warps)?;
    Some(MmaDot {
        kind,
        layout,
        warps,
    })
}

/// Warps along M and N for a grid of `bm × bn` instruction blocks: each
/// doubling goes to the axis with more blocks per warp left (M on ties),
/// and every warp must get whole blocks.
fn split_warps(bm: usize, bn: usize, warps: usize) -> Option<[usize; 2]> {
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
    /// wn]` (see the module docs), or `None` if the warps do not cut the
    /// tile into whole blocks of the instruction.
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
        let flat = |pairs: &[(usize, usize)]| -> Option<Layout> {
            let (s, d): (Vec<i64>, Vec<i64>) =
                pairs.iter().map(|&(s, d)| (s as i64, d as i64)).unzip();
            Layout::new(IntTuple::flat(&s), IntTuple::flat(&d)).ok()
        };
        let blocks = [(rep_n, bn * wn), (rep_m, bm * wm * n)];
        let (thread, value, spt, tpw) = match kind.family() {
            // Lane l: row l/4 (+8), columns 2(l%4) (+1).
            MmaFamily::MmaSync => (
                flat(&[(4, 2), (8, n), (wn, bn), (wm, bm * n)])?,
                flat(&[&[(2, 1), (2, 8 * n)][..], &blocks].concat())?,
                vec![1, 2],
                vec![8, 4],
            ),
            // Lane l: column l%16, rows l/16 + 2r.
            MmaFamily::Wmma => (
                flat(&[(16, 1), (2, n), (wn, bn), (wm, bm * n)])?,
                flat(&[&[(8, 2 * n)][..], &blocks].concat())?,
                vec![1, 1],
                vec![2, 16],
            ),
        };
        debug_assert_eq!(row_major(&[m, n]), vec![n, 1]);
        Some(DistLayout {
            kind: LayoutKind::MmaAccumulator,
            shape: vec![m, n],
            size_per_thread: spt,
            threads_per_warp: tpw,
            warps_per_block: vec![wm, wn],
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
    use tile_abi::mma::Fragment;

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

    #[test]
    fn warps_split_the_longer_side_first() {
        assert_eq!(split_warps(4, 8, 4), Some([2, 2]));
        assert_eq!(split_warps(8, 16, 8), Some([2, 4]));
        assert_eq!(split_warps(1, 4, 4), Some([1, 4]));
        assert_eq!(split_warps(1, 1, 4), None);
        assert_eq!(split_warps(3, 3, 2), None);
    }
}
