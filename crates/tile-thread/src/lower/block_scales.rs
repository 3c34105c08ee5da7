//! The scales of a `dot_scaled` that a block-scaled instruction runs:
//! sm_120a's `mma.sync` (`m16n8k32.kind::mxf8f6f4.block_scale`) and
//! gfx950's MFMA (`v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4`).
//!
//! Each instruction takes one E8M0 scale per row of its A block and per
//! column of its B block for each group of 32 `k`, from the lanes of
//! [`tile_hw::mma::MmaKind::scale_holder`]: on `mma.sync` (one group a
//! step) lane `(g, t)` (`g = l / 4`, `t = l % 4`) supplies row `g + 8·(t %
//! 2)` of A and column `g` of B; on MFMA lane `l` supplies row (column)
//! `l % s` for group `l / s` of the step. The scale tiles (`a_scale: [M, K
//! / 32]`, `b_scale: [N, K / 32]`) are staged row-major with the operands,
//! behind their barrier, and each lane loads its byte for each of its
//! warp's (wave's) block rows (columns) and `k`-steps: group `j` of step
//! `s` is column `s·K_step / 32 + j` of the staged tile. Warp `w` owns
//! block rows `w / wn + wm·i` and block columns `w % wn + wn·j`
//! (`lower/mma.rs`).

use super::{LowerError, Lowerer};
use crate::layout_assign::{DistLayout, MmaDot};
use crate::program::{Reg, SharedId, ThreadOpKind};
use std::rc::Rc;
use tile_hw::mma::{Fragment, MmaFamily};
use tile_ir::{BinaryOp, DType, OpId, Value};

/// A block-scaled product's scales in registers, before staging.
pub(super) struct ScaleTiles {
    /// `a_scale`'s and `b_scale`'s layouts and registers.
    tiles: [(Rc<DistLayout>, Vec<Reg>); 2],
    /// Their shapes, `[M, K / 32]` and `[N, K / 32]`.
    shapes: [[usize; 2]; 2],
}

/// A block-scaled product's staged scales.
#[derive(Clone, Copy, Debug)]
pub(super) struct StagedScales {
    /// The allocations of `a_scale` and `b_scale`, row-major.
    pub(super) allocs: [SharedId; 2],
    /// Scale groups along `K`: the staged tiles' columns.
    pub(super) groups: usize,
}

/// The lanes' element indices into the staged scales for one product:
/// of the row (column) and group the lane supplies in its warp's first
/// block row (column) at the first `k`-step.
#[derive(Clone, Copy)]
pub(super) struct ScaleBases {
    /// Into `a_scale`.
    a: Reg,
    /// Into `b_scale`.
    b: Reg,
}

impl Lowerer<'_> {
    /// The scales `a_scale` and `b_scale` of the `dot_scaled` `id`, in the
    /// registers their producers left.
    pub(super) fn scale_tiles(
        &mut self,
        id: OpId,
        [a_scale, b_scale]: [Value; 2],
    ) -> Result<ScaleTiles, LowerError> {
        let shape = |s: &Self, v: Value| match s.func.ty(v).tile_shape().map(|t| t.dims()) {
            Some(&[rows, groups]) => Ok([rows, groups]),
            _ => Err(s.invalid(id, "scales that are not rank-2 tiles")),
        };
        let shapes = [shape(self, a_scale)?, shape(self, b_scale)?];
        let tiles = [self.tile(id, a_scale)?, self.tile(id, b_scale)?];
        Ok(ScaleTiles { tiles, shapes })
    }

    /// Allocations for `tiles` (fresh or reused), and whether any is
    /// reused: its earlier readers must be done before it is stored.
    pub(super) fn take_scale_buffers(&mut self, tiles: &ScaleTiles) -> (StagedScales, bool) {
        let [(a, reused_a), (b, reused_b)] = tiles
            .shapes
            .map(|[rows, groups]| self.take_shared(DType::F8E8M0, rows * groups));
        let staged = StagedScales {
            allocs: [a, b],
            groups: tiles.shapes[0][1],
        };
        (staged, reused_a || reused_b)
    }

    /// Stores `tiles` into `staged`'s allocations; the caller places the
    /// barrier before they are read.
    pub(super) fn store_scales(&mut self, tiles: &ScaleTiles, staged: &StagedScales) {
        for ((layout, regs), alloc) in tiles.tiles.iter().zip(staged.allocs) {
            let place = super::operand_swizzle::OperandLayout::RowMajor(None);
            self.store_tile(alloc, layout, regs, place);
        }
    }

    /// The lane's indices into `staged` for `plan` ([`ScaleBases`]).
    pub(super) fn scale_bases(&mut self, plan: &MmaDot, staged: &StagedScales) -> ScaleBases {
        let kind = plan.kind;
        let (im, in_, _) = kind.shape();
        let wn = plan.warps[1];
        let [lane, warp, row, half] = self.lane_coordinates(kind);
        let warp_m = self.hoist_with_const(BinaryOp::Div, warp, wn as i64);
        let warp_n = self.hoist_with_const(BinaryOp::Rem, warp, wn as i64);
        let groups = staged.groups;
        if kind.family() == MmaFamily::Mfma {
            // Row (column) `l % s`, group `l / s`: the lane's `row` and
            // `half` (square blocks).
            return ScaleBases {
                a: self.linear(&[(warp_m, im * groups), (row, groups), (half, 1)]),
                b: self.linear(&[(warp_n, in_ * groups), (row, groups), (half, 1)]),
            };
        }
        let g = self.hoist_with_const(BinaryOp::Div, lane, 4);
        let t = self.hoist_with_const(BinaryOp::Rem, lane, 4);
        let odd = self.hoist_with_const(BinaryOp::Rem, t, 2);
        // The rows lanes `4g + 1` and `4g + 3` supply are 8 further, read
        // from the instruction's own model.
        let second_half = kind.scale_holder(Fragment::A, 1).0;
        ScaleBases {
            a: self.linear(&[
                (warp_m, im * groups),
                (g, groups),
                (odd, second_half * groups),
            ]),
            b: self.linear(&[(warp_n, in_ * groups), (g, groups)]),
        }
    }

    /// The lane's A scale for each of its warp's `reps[0]` block rows and
    /// its B scale for each of its `reps[1]` block columns at `k`-step
    /// `step`, loaded from `staged`.
    pub(super) fn step_scales(
        &mut self,
        plan: &MmaDot,
        (staged, bases): (&StagedScales, ScaleBases),
        reps: [usize; 2],
        step: usize,
    ) -> [Vec<Reg>; 2] {
        let (im, in_, ik) = plan.kind.shape();
        let [wm, wn] = plan.warps;
        let groups = staged.groups;
        // A block row (column) further is `im·wm` rows (`in·wn` columns)
        // on, a step `ik / 32` groups.
        let strides = [im * wm * groups, in_ * wn * groups];
        let first = step * ik / 32;
        let base = [bases.a, bases.b];
        [0, 1].map(|which| {
            (0..reps[which])
                .map(|r| {
                    let at = self.i32c((r * strides[which] + first) as i64);
                    let index = self.binary(BinaryOp::Add, base[which], at);
                    let alloc = staged.allocs[which];
                    let load = ThreadOpKind::LoadShared { alloc, width: 1 };
                    self.emit(load, vec![index], DType::F8E8M0)
                })
                .collect()
        })
    }
}
