//! A tile staged as a tensor-core operand by two products of one region,
//! laid out alike for both (attention's backward pass stages `q` for `q·kᵀ`
//! and for `dsᵀ·q`, `dO` for `pᵀ·dO` and for `dO·vᵀ`): staged once, by the
//! first, and kept until the last, so the registers that held the tile are
//! free after the first product, as Triton's one shared copy leaves them.
//! On NVIDIA's instructions: AMD's 64 KiB of LDS would hold the kept
//! staging beside those made between the products (the FlashAttention
//! backward pass would take 80 KiB on gfx942).

use super::operand_swizzle::OperandLayout;
use super::{Lowered, Lowerer};
use crate::layout_assign::TensorDot;
use crate::program::SharedId;
use tile_hw::mma::MmaFamily;
use tile_ir::{DType, OpId, OpKind, Value};

/// How a product stages a tile as its operand: the same key, the same bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct OperandKey {
    /// The tile.
    pub(super) value: Value,
    /// Whether it is staged transposed (a B read K-major).
    pub(super) transposed: bool,
    /// How it is laid out.
    pub(super) place: OperandLayout,
}

/// A staging kept for a later product.
#[derive(Clone, Copy, Debug)]
pub(super) struct HeldOperand {
    key: OperandKey,
    alloc: SharedId,
    /// The last product that reads it.
    until: OpId,
}

impl Lowerer<'_> {
    /// The staging a product earlier in the region made of `key`, kept.
    pub(super) fn held_operand(&self, key: OperandKey) -> Option<SharedId> {
        self.held_operands
            .iter()
            .find(|h| h.key == key)
            .map(|h| h.alloc)
    }

    /// Keeps `alloc`, where the `dot` `id` staged `key`, for
    /// the products after `id` in its region that stage the same tile
    /// alike; returns whether it is kept.
    pub(super) fn hold_operand(&mut self, id: OpId, key: OperandKey, alloc: SharedId) -> bool {
        let Some(region) = self.regions.last() else {
            return false;
        };
        let later = region.ops.iter().skip_while(|&&op| op != id).skip(1);
        let until = later
            .filter(|&&op| self.stages_alike(op, key))
            .last()
            .copied();
        if let Some(until) = until {
            self.held_operands.push(HeldOperand { key, alloc, until });
        }
        until.is_some()
    }

    /// Whether `alloc` is kept for a later product.
    pub(super) fn is_held(&self, alloc: SharedId) -> bool {
        self.held_operands.iter().any(|h| h.alloc == alloc)
    }

    /// Releases the stagings whose last product is `id`.
    pub(super) fn release_held_after(&mut self, id: OpId) {
        let (done, kept) = self
            .held_operands
            .iter()
            .partition::<Vec<_>, _>(|h| h.until == id);
        self.held_operands = kept;
        for h in done {
            self.release_shared(h.alloc);
        }
    }

    /// Whether the `dot` `op` stages `key.value` (from registers, or
    /// copying its load) as `key` says: a tensor-core product on NVIDIA's
    /// instructions whose operand it is, of 16- or 8-bit elements (TF32
    /// stagings are rounded for some instructions only).
    fn stages_alike(&self, op: OpId, key: OperandKey) -> bool {
        let func = self.func;
        let dot = func.op(op);
        if !matches!(dot.kind, OpKind::Dot { .. })
            || !matches!(
                self.env.get(&key.value),
                Some(Lowered::Tile { .. } | Lowered::Deferred { .. })
            )
            || func.ty(key.value).dtype() == DType::F32
        {
            return false;
        }
        let Some(plan) = self.tensor_plan(op).filter(|plan| match plan {
            TensorDot::Mma(mma) => mma.kind.family() == MmaFamily::MmaSync,
            TensorDot::Wgmma(_) | TensorDot::Tcgen05(_) => true,
        }) else {
            return false;
        };
        let Some(&[rows, cols]) = func.ty(key.value).tile_shape().map(|s| s.dims()) else {
            return false;
        };
        (0..2).any(|which| {
            if dot.operands[which] != key.value {
                return false;
            }
            let transposed = which == 1
                && match &plan {
                    TensorDot::Wgmma(p) => p.k_major_b(),
                    TensorDot::Tcgen05(p) => p.k_major_b(),
                    TensorDot::Mma(_) => false,
                };
            let shape = if transposed {
                [cols, rows]
            } else {
                [rows, cols]
            };
            let place = self.operand_layout(Some(&plan), shape, which, transposed);
            key.transposed == transposed && key.place == place
        })
    }
}
