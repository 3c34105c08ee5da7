//! The scales of a `dot_scaled` that a block-scaled instruction runs:
//! sm_120a's `mma.sync` (`m16n8k32.kind::mxf8f6f4.block_scale`) and
//! gfx950's MFMA (`v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4`), and
//! their staging for sm_100a's `tcgen05.mma` (which reads them from tensor
//! memory: `tensor_scales.rs`).
//!
//! Each instruction takes one E8M0 scale per row of its A block and per
//! column of its B block for each group of 32 `k`, from the lanes of
//! [`tile_hw::mma::MmaKind::scale_holder`]: on `mma.sync` (one group a
//! step) lane `(g, t)` (`g = l / 4`, `t = l % 4`) supplies row `g + 8·(t %
//! 2)` of A and column `g` of B; on MFMA lane `l` supplies row (column)
//! `l % s` for group `l / s` of the step.
//!
//! A scale tile loaded in [`layout_assign::scale_layouts`]'s layout (on
//! MFMA) is *held*: register `s + S·r` of each thread is already its scale
//! for block row (column) `r` at step `s`. Any other (`a_scale: [M, K / 32]`,
//! `b_scale: [N, K / 32]`) is *staged* row-major with the operands, behind
//! their barrier, and each lane loads its byte for each of its warp's
//! (wave's) block rows (columns) and `k`-steps: group `j` of step `s` is
//! column `s·K_step / 32 + j` of the staged tile. Warp `w` owns block rows
//! `w / wn + wm·i` and block columns `w % wn + wn·j` (`lower/mma.rs`).
//!
//! [`layout_assign::scale_layouts`]: crate::layout_assign::scale_layouts

use super::{LowerError, Lowerer};
use crate::layout_assign::{
    scale_layouts, tensor_memory_scale_layouts, DistLayout, MmaDot, Tcgen05Dot,
};
use crate::program::{Reg, SharedId, ThreadOpKind};
use std::rc::Rc;
use tile_hw::mma::{Fragment, MmaFamily};
use tile_ir::{BinaryOp, DType, OpId, Value};

/// Where one side's scales come from.
#[derive(Clone, Debug)]
pub(super) enum ScaleSource {
    /// The registers of a tile in the holders' layout.
    Held(Vec<Reg>),
    /// A tile in another layout, to be staged: its layout, registers and
    /// rows.
    Loose(Rc<DistLayout>, Vec<Reg>, usize),
    /// The staging of such a tile, row-major, and the lane's index into it
    /// at its warp's first block row (column) and step.
    Staged(SharedId, Option<Reg>),
}

/// A block-scaled product's scales: `a_scale`'s and `b_scale`'s sources,
/// and the groups of 32 `k` along a row.
#[derive(Clone, Debug)]
pub(super) struct ProductScales {
    /// A's, then B's.
    pub(super) sides: [ScaleSource; 2],
    /// `K / 32`.
    groups: usize,
}

impl Lowerer<'_> {
    /// The scales `a_scale` and `b_scale` of the `dot_scaled` `id`, an `M ×
    /// N × K` product on `plan`, in the registers their producers left.
    pub(super) fn product_scales(
        &mut self,
        id: OpId,
        plan: &MmaDot,
        (values, [m, n, k]): ([Value; 2], [usize; 3]),
    ) -> Result<ProductScales, LowerError> {
        let holders = scale_layouts(plan, [m, n, k]);
        self.scales_held_by(id, holders, (values, [m, n, k]))
    }

    /// The scales `a_scale` and `b_scale` of the `dot_scaled` `id`, an `M ×
    /// N × K` product on `plan`, whose instruction reads them from tensor
    /// memory (`tensor_scales.rs`): held where their loads left them as
    /// each thread stores them ([`tensor_memory_scale_layouts`]), else to
    /// be staged.
    ///
    /// [`tensor_memory_scale_layouts`]: crate::layout_assign::tensor_memory_scale_layouts
    pub(super) fn tensor_memory_scales(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        (values, [m, n, k]): ([Value; 2], [usize; 3]),
    ) -> Result<ProductScales, LowerError> {
        let holders = tensor_memory_scale_layouts(plan, [m, n, k]);
        self.scales_held_by(id, holders, (values, [m, n, k]))
    }

    /// The scales `values` of an `M × N × K` product: each side held where
    /// its registers are in `holders`' layout of it, else loose.
    fn scales_held_by(
        &mut self,
        id: OpId,
        holders: Option<[DistLayout; 2]>,
        (values, [m, n, k]): ([Value; 2], [usize; 3]),
    ) -> Result<ProductScales, LowerError> {
        let mut sides = Vec::with_capacity(2);
        for (which, (value, rows)) in values.into_iter().zip([m, n]).enumerate() {
            let (layout, regs) = self.tile(id, value)?;
            let held = holders.as_ref().is_some_and(|h| h[which] == *layout);
            sides.push(match held {
                true => ScaleSource::Held(regs),
                false => ScaleSource::Loose(layout, regs, rows),
            });
        }
        let sides: [ScaleSource; 2] = sides
            .try_into()
            .map_err(|_| self.invalid(id, "dot_scaled has two scale tiles"))?;
        Ok(ProductScales {
            sides,
            groups: k / 32,
        })
    }

    /// Allocations (fresh or reused) for the scales that are staged, and
    /// whether any is reused: its earlier readers must be done before it
    /// is stored.
    pub(super) fn take_scale_buffers(
        &mut self,
        scales: &ProductScales,
    ) -> ([Option<SharedId>; 2], bool) {
        let mut reused = false;
        let allocs = [0, 1].map(|which| match &scales.sides[which] {
            ScaleSource::Loose(_, _, rows) => {
                let (alloc, again) = self.take_shared(DType::F8E8M0, rows * scales.groups);
                reused |= again;
                Some(alloc)
            }
            _ => None,
        });
        (allocs, reused)
    }

    /// Stores the loose scales into `allocs` and makes them staged; the
    /// caller places the barrier before they are read.
    pub(super) fn store_scales(
        &mut self,
        scales: &mut ProductScales,
        allocs: [Option<SharedId>; 2],
    ) {
        for (side, alloc) in scales.sides.iter_mut().zip(allocs) {
            if let (ScaleSource::Loose(layout, regs, _), Some(alloc)) = (&*side, alloc) {
                let place = super::operand_swizzle::OperandLayout::RowMajor(None);
                self.store_tile(alloc, layout, regs, place);
                *side = ScaleSource::Staged(alloc, None);
            }
        }
    }

    /// The allocations of the staged scales, to release after the product.
    pub(super) fn staged_scales(scales: &ProductScales) -> Vec<SharedId> {
        scales
            .sides
            .iter()
            .filter_map(|side| match side {
                ScaleSource::Staged(alloc, _) => Some(*alloc),
                _ => None,
            })
            .collect()
    }

    /// `scales` with each staged side's lane index into its staging, at its
    /// warp's first block row (column) and step.
    pub(super) fn with_scale_bases(
        &mut self,
        plan: &MmaDot,
        scales: &ProductScales,
    ) -> ProductScales {
        let kind = plan.kind;
        let (im, in_, _) = kind.shape();
        let wn = plan.warps[1];
        let groups = scales.groups;
        let mut based = scales.clone();
        for (which, side) in based.sides.iter_mut().enumerate() {
            let ScaleSource::Staged(_, base) = side else {
                continue;
            };
            let [lane, warp, row, half] = self.lane_coordinates(kind);
            let (block, warp_along) = match which {
                0 => (im, self.hoist_with_const(BinaryOp::Div, warp, wn as i64)),
                _ => (in_, self.hoist_with_const(BinaryOp::Rem, warp, wn as i64)),
            };
            *base = Some(if kind.family() == MmaFamily::Mfma {
                // Row (column) `l % s`, group `l / s`: the lane's `row` and
                // `half` (square blocks).
                self.linear(&[(warp_along, block * groups), (row, groups), (half, 1)])
            } else {
                let g = self.hoist_with_const(BinaryOp::Div, lane, 4);
                let t = self.hoist_with_const(BinaryOp::Rem, lane, 4);
                let odd = self.hoist_with_const(BinaryOp::Rem, t, 2);
                // A's rows of lanes `4g + 1` and `4g + 3` are 8 further, as
                // the instruction's own model says.
                let second = match which {
                    0 => kind.scale_holder(Fragment::A, 1).0,
                    _ => 0,
                };
                self.linear(&[
                    (warp_along, block * groups),
                    (g, groups),
                    (odd, second * groups),
                ])
            });
        }
        based
    }

    /// The lane's A scale for each of its warp's `reps[0]` block rows and
    /// its B scale for each of its `reps[1]` block columns at `k`-step
    /// `step`: held registers, or loaded from the staging.
    pub(super) fn step_scales(
        &mut self,
        plan: &MmaDot,
        scales: &ProductScales,
        reps: [usize; 2],
        step: usize,
    ) -> Result<[Vec<Reg>; 2], LowerError> {
        let (im, in_, ik) = plan.kind.shape();
        let [wm, wn] = plan.warps;
        let groups = scales.groups;
        let steps = groups * 32 / ik;
        // A block row (column) further is `im·wm` rows (`in·wn` columns)
        // on, a step `ik / 32` groups.
        let strides = [im * wm * groups, in_ * wn * groups];
        let first = step * ik / 32;
        let invalid = |reason: &str| LowerError::Invalid {
            op: "dot_scaled".into(),
            reason: reason.into(),
        };
        let mut sides = [Vec::new(), Vec::new()];
        for (which, side) in sides.iter_mut().enumerate() {
            for r in 0..reps[which] {
                side.push(match &scales.sides[which] {
                    ScaleSource::Held(regs) => *regs
                        .get(step + steps * r)
                        .ok_or_else(|| invalid(&format!("held scales of another shape: {} registers, step {step} of {steps}, {:?}", regs.len(), reps)))?,
                    ScaleSource::Staged(alloc, Some(base)) => {
                        let at = self.i32c((r * strides[which] + first) as i64);
                        let index = self.binary(BinaryOp::Add, *base, at);
                        let load = ThreadOpKind::LoadShared {
                            alloc: *alloc,
                            width: 1,
                        };
                        self.emit(load, vec![index], DType::F8E8M0)
                    }
                    ScaleSource::Loose(..) | ScaleSource::Staged(_, None) => {
                        return Err(invalid("scales read before they are staged"))
                    }
                });
            }
        }
        Ok(sides)
    }
}
