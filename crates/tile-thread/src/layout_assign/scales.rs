//! The layouts of a block-scaled product's scale tiles in which each
//! thread holds exactly the scales it supplies to the instruction
//! ([`tile_hw::mma::MmaKind::scale_holder`]), so that their loads read them
//! straight into the registers the instruction takes.
//!
//! For `a_scale: [M, G]` (`G = K / 32`) under a plan of `wm × wn` warps
//! (MFMA: waves), register `s + S·r` (`S = K / K_step` steps) of a thread
//! holds the scale of its row in block row `r` for the group it supplies at
//! step `s`; `b_scale: [N, G]` likewise by block column. The lane modes are
//! the instruction's: on `mma.sync` lane `l` supplies row `l / 4 + 8·(l %
//! 2)` (lanes `4g` and `4g + 2` the same: a copy mode of stride 0) and
//! column `l / 4`, one group a step; on MFMA lane `l` supplies row (column)
//! `l % s` for group `l / s` of the step (`s` the block's side). The warps
//! along the other operand's axis hold copies.
//!
//! On sm_100a's block-scaled `tcgen05.mma` (`lower/tensor_scales.rs`) a
//! thread stores the scales of its lane's rows into tensor memory: lane
//! `l` of each warp of warpgroup `g` holds row `32·(g·S + c) + l` of each
//! block of rows (`S` the warpgroup's share of a block's `rows / 32`
//! columns, `c` below it), every group of it; the four warps of a
//! warpgroup hold copies (they store the four copies the instruction
//! reads). Register `j + G·(c + S·b)` is group `j` of that row of block
//! `b` ([`tensor_memory_scale_layouts`]).

use super::blocked::flat_layout;
use super::mma::{accumulator, MmaDot};
use super::{DistLayout, Tcgen05Dot};
use tile_hw::mma::MmaFamily;
use tile_hw::tcgen05::{scale_columns, GROUP_K, M, WARP_LANES};

/// The layouts of `a_scale: [M, K / 32]` and `b_scale: [N, K / 32]` for
/// the block-scaled `plan` of an `M × N × K` product (module docs);
/// `None` when its instruction takes no scales or the tiles do not fit.
pub fn scale_layouts(plan: &MmaDot, [m, n, k]: [usize; 3]) -> Option<[DistLayout; 2]> {
    let kind = plan.kind;
    let (im, in_, ik) = kind.shape();
    let [wm, wn] = plan.warps;
    if !kind.is_block_scaled() || !k.is_multiple_of(ik) || !m.is_multiple_of(im * wm) {
        return None;
    }
    if !n.is_multiple_of(in_ * wn) {
        return None;
    }
    let groups = k / 32;
    let (steps, per_step) = (k / ik, ik / 32);
    let side = |rows: usize, block: usize, [along, across]: [usize; 2], a: bool| {
        // The lanes' modes, then the warps': `w = wn·warp_m + warp_n`.
        let mut modes = match (kind.family(), a) {
            (MmaFamily::Mfma, _) => vec![(block, groups), (64 / block, 1)],
            (_, true) => vec![(2, 8 * groups), (2, 0), (8, groups)],
            (_, false) => vec![(4, 0), (8, groups)],
        };
        let own = (along, block * groups);
        let other = (across, 0);
        modes.extend(if a { [other, own] } else { [own, other] });
        let thread = flat_layout(&modes)?;
        let reps = rows / (block * along);
        let value = flat_layout(&[(steps, per_step), (reps, block * along * groups)])?;
        let lanes = match kind.family() {
            MmaFamily::Mfma => vec![block, 64 / block],
            _ => vec![8, 4],
        };
        // A thread's consecutive groups: a row's, one a step, on `mma.sync`.
        let run = if per_step == 1 { steps } else { 1 };
        let tiling = (vec![1, run], lanes, [wm, wn]);
        Some(accumulator(vec![rows, groups], tiling, thread, value))
    };
    Some([side(m, im, [wm, wn], true)?, side(n, in_, [wn, wm], false)?])
}

/// The layouts of `a_scale: [M, K / 32]` and `b_scale: [N, K / 32]` in
/// which each thread holds the scales it stores for the block-scaled
/// `tcgen05.mma` `plan` of an `M × N × K` product (module docs); `None`
/// for other products.
pub fn tensor_memory_scale_layouts(
    plan: &Tcgen05Dot,
    [m, n, k]: [usize; 3],
) -> Option<[DistLayout; 2]> {
    if !plan.block_scaled {
        return None;
    }
    let (groups, warpgroups) = (k / GROUP_K, plan.groups);
    let side = |rows: usize, block: usize| {
        let share = scale_columns(block) / warpgroups;
        let thread = flat_layout(&[
            (WARP_LANES, groups),
            (4, 0),
            (warpgroups, WARP_LANES * share * groups),
        ])?;
        let value = flat_layout(&[
            (groups, 1),
            (share, WARP_LANES * groups),
            (rows / block, block * groups),
        ])?;
        let tiling = (vec![1, groups], vec![WARP_LANES, 1], [4, warpgroups]);
        Some(accumulator(vec![rows, groups], tiling, thread, value))
    };
    Some([side(m, M)?, side(n, plan.kind.n)?])
}
