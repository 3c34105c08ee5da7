//! Loop-invariant `a` operands of tensor-core products (attention's `q` in
//! `q·kᵀ` for every block of keys): staged in shared memory once, before
//! the loop, instead of on every iteration. A warp-level instruction's
//! fragments are read into registers there and held across the loop (as
//! Triton does); `wgmma` reads its A from the staging, which the loop keeps.
//!
//! The fragments hold the tile's elements once each, as its own layout
//! did, so where the tile has no other use the registers live across the
//! loop are as many, and each iteration saves a barrier, the tile's stores
//! to shared memory and their `ldmatrix`es.

use super::dot::OperandA;
use super::{Lowered, Lowerer};
use crate::layout_assign::TensorDot;
use crate::program::{SharedId, ThreadOpKind};
use std::collections::HashMap;
use tile_ir::{OpId, OpKind, Region, Value};

/// The fragments of each hoisted operand, by its `dot`.
pub(super) type Preloaded = HashMap<OpId, OperandA>;

impl<'a> Lowerer<'a> {
    /// Before the `for` whose body is `body`: for each tensor-core `dot`
    /// directly in it whose `a` is a tile computed before the loop that only
    /// `dot`s use, stages the tile once. A warp-level instruction's
    /// fragments are read from it at once and the bytes released; `wgmma`
    /// and `tcgen05.mma`, which read their A from shared memory, keep them
    /// until the loop ends. Returns the allocations held.
    pub(super) fn preload_invariant_operands(&mut self, body: &'a Region) -> Vec<SharedId> {
        let mut held = Vec::new();
        for &id in &body.ops {
            let op = self.func.op(id);
            let (OpKind::Dot { .. }, Some(&a)) = (&op.kind, op.operands.first()) else {
                continue;
            };
            let Some(plan) = self.tensor_plan(id) else {
                continue;
            };
            let Some(Lowered::Tile { layout, regs }) = self.env.get(&a).cloned() else {
                continue;
            };
            let &[m, k] = layout.shape.as_slice() else {
                continue;
            };
            let chained = match &plan {
                TensorDot::Mma(mma) => self.chained_a_fragments(mma, &layout, &regs, k).is_some(),
                TensorDot::Wgmma(_) | TensorDot::Tcgen05(_) => false,
            };
            if chained || !self.only_dots_in(body, a) {
                continue;
            }
            let dtype = self.func.ty(a).dtype();
            let place = self.operand_layout(Some(&plan), [m, k], 0, false);
            let (alloc, reused) = self.take_operand_buffer(dtype, m * k, plan.reads_descriptors());
            if self.loop_depth > 0 || reused {
                self.barrier();
            }
            // TF32 for an instruction that would truncate (`round_staged.rs`).
            let regs = match plan.reads_descriptors() && dtype == tile_ir::DType::F32 {
                true => self.rounded_tf32(&regs),
                false => regs,
            };
            self.store_tile(alloc, &layout, &regs, place);
            let operand = match plan {
                TensorDot::Mma(mma) => {
                    self.barrier();
                    let swizzle = place.swizzle();
                    let (_, _, ik) = mma.kind.shape();
                    let base = self.a_base(&mma, k);
                    let at = (alloc, swizzle, None);
                    let fragments = (0..k / ik)
                        .map(|step| self.a_fragments(&mma, at, (base, k), step))
                        .collect();
                    self.release_shared(alloc);
                    OperandA::Registers(fragments)
                }
                TensorDot::Wgmma(_) | TensorDot::Tcgen05(_) => {
                    // The instruction reads through the asynchronous proxy.
                    self.emit_op(ThreadOpKind::FenceProxyAsync, vec![], &[]);
                    self.barrier();
                    held.push(alloc);
                    OperandA::Shared(alloc)
                }
            };
            self.preloaded_a.insert(id, operand);
        }
        held
    }

    /// Whether every use of `value` is as the `a` operand of a `dot`
    /// directly in `body`.
    fn only_dots_in(&self, body: &Region, value: Value) -> bool {
        let mut only = true;
        self.func.walk(&mut |id| {
            let op = self.func.op(id);
            for (i, &operand) in op.operands.iter().enumerate() {
                if operand == value {
                    let dot = matches!(op.kind, OpKind::Dot { .. });
                    only &= i == 0 && dot && body.ops.contains(&id);
                }
            }
        });
        only
    }
}
