//! Loop-invariant operands of tensor-core products, staged in shared
//! memory once, before the loop, instead of on every iteration.
//!
//! An `a` computed before the loop (attention's `q` in `q·kᵀ` for every
//! block of keys): a warp-level instruction's fragments are read into
//! registers there and held across the loop (as Triton does); `wgmma` reads
//! its A from the staging, which the loop keeps. The fragments hold the
//! tile's elements once each, as its own layout did, so where the tile has
//! no other use the registers live across the loop are as many, and each
//! iteration saves a barrier, the tile's stores to shared memory and their
//! `ldmatrix`es.
//!
//! A `b` computed before the loop, or its transpose (the keys and values a
//! block of attention's backward pass keeps while it walks the queries: `k`
//! in `ds·k`, `kᵀ` in `q·kᵀ`, `vᵀ` in `dO·vᵀ`), on NVIDIA's instructions:
//! staged once and read from the staging by every iteration. Every warp
//! reads all of a `b`, so its fragments would take the whole tile's
//! registers in each warp; staged, the registers the tile held before the
//! loop are free in it. AMD's instructions keep staging it per use: their
//! 64 KiB of LDS would hold the copies for the whole loop.

use super::dot::OperandA;
use super::operand_swizzle::OperandLayout;
use super::{Lowered, Lowerer};
use crate::layout_assign::{DistLayout, TensorDot};
use crate::program::{Reg, SharedId, ThreadOpKind};
use std::collections::HashMap;
use std::rc::Rc;
use tile_hw::mma::MmaFamily;
use tile_ir::{OpId, OpKind, Region, Value};

/// The fragments of each hoisted operand, by its `dot`.
pub(super) type Preloaded = HashMap<OpId, OperandA>;

/// A loop-invariant tile a `dot` takes as its `b`: the tile computed
/// before the loop, and whether `b` is its transpose.
struct InvariantTile {
    /// The tile computed before the loop.
    source: Value,
    /// Its layout and registers.
    layout: Rc<DistLayout>,
    regs: Vec<Reg>,
    /// Whether `b` is its transpose (a `permute` in the loop).
    permuted: bool,
}

/// A `b` staged before its loop: where, and how the `dot` reads it.
#[derive(Clone, Copy, Debug)]
pub(super) struct PreloadedB {
    /// The allocation, held until the loop ends.
    pub(super) alloc: SharedId,
    /// Whether it is staged transposed, K-major.
    pub(super) transposed: bool,
    /// How it is laid out.
    pub(super) place: OperandLayout,
}

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
                    let (_, _, ik) = mma.kind.shape();
                    let base = self.a_base(&mma, k);
                    let at = (alloc, place, None);
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
        held.extend(self.preload_invariant_b(body));
        held
    }

    /// Stages, before the loop whose body is `body`, the `b` of each
    /// tensor-core `dot` directly in it that is a tile computed before the
    /// loop or its transpose, on NVIDIA's instructions (the module docs).
    /// Two `dot`s whose `b`s stage the same bytes (`k` read K-major as
    /// `kᵀ` and `k` read MN-major) share one staging. Returns the
    /// allocations, which the loop keeps.
    fn preload_invariant_b(&mut self, body: &'a Region) -> Vec<SharedId> {
        let mut held = Vec::new();
        let mut staged: Vec<(Value, bool, OperandLayout, SharedId)> = Vec::new();
        for &id in &body.ops {
            let op = self.func.op(id);
            let (OpKind::Dot { .. }, Some(&b)) = (&op.kind, op.operands.get(1)) else {
                continue;
            };
            let Some(plan) = self.tensor_plan(id) else {
                continue;
            };
            let nvidia = match &plan {
                TensorDot::Mma(mma) => mma.kind.family() == MmaFamily::MmaSync,
                TensorDot::Wgmma(_) | TensorDot::Tcgen05(_) => true,
            };
            let Some(tile) = self.invariant_tile(body, b).filter(|_| nvidia) else {
                continue;
            };
            let &[k, n] = self.func.ty(b).tile_shape().map_or(&[][..], |s| s.dims()) else {
                continue;
            };
            // Staged transposed (K-major): where the instruction reads only
            // that, or where `b` is a transpose `mma.sync` can read so, the
            // tile it transposes then staged as it is.
            let transposed = match &plan {
                TensorDot::Wgmma(p) => p.k_major_b(),
                TensorDot::Tcgen05(p) => p.k_major_b(),
                TensorDot::Mma(_) => tile.permuted && self.reads_transposed_b(id),
            };
            let shape = if transposed { [n, k] } else { [k, n] };
            let place = self.operand_layout(Some(&plan), shape, 1, transposed);
            // Whether the staging holds the source tile as it is.
            let as_source = tile.permuted == transposed;
            let key = (tile.source, as_source, place);
            let shared = staged.iter().find(|s| (s.0, s.1, s.2) == key).map(|s| s.3);
            let alloc = match shared {
                Some(alloc) => alloc,
                None => {
                    let alloc = self.stage_invariant_b(&plan, &tile, (k * n, place), as_source);
                    staged.push((key.0, key.1, key.2, alloc));
                    held.push(alloc);
                    alloc
                }
            };
            let preloaded = PreloadedB {
                alloc,
                transposed,
                place,
            };
            self.preloaded_b.insert(id, preloaded);
        }
        held
    }

    /// Stages the source of an invariant `b` in a fresh allocation of `len`
    /// elements laid out as `place`: as it is, or transposed unless
    /// `as_source`.
    fn stage_invariant_b(
        &mut self,
        plan: &TensorDot,
        tile: &InvariantTile,
        (len, place): (usize, OperandLayout),
        as_source: bool,
    ) -> SharedId {
        let dtype = self.func.ty(tile.source).dtype();
        let descriptors = plan.reads_descriptors();
        let (alloc, reused) = self.take_operand_buffer(dtype, len, descriptors);
        if self.loop_depth > 0 || reused {
            self.barrier();
        }
        let regs = match descriptors && dtype == tile_ir::DType::F32 {
            true => self.rounded_tf32(&tile.regs),
            false => tile.regs.clone(),
        };
        self.store_b(alloc, &tile.layout, &regs, place, !as_source);
        if descriptors {
            self.emit_op(ThreadOpKind::FenceProxyAsync, vec![], &[]);
        }
        self.barrier();
        alloc
    }

    /// The tile `value` is, where it is a tile computed before the loop
    /// whose body is `body` or a `permute` in the body of one.
    fn invariant_tile(&self, body: &Region, value: Value) -> Option<InvariantTile> {
        let tile = |v: Value, permuted: bool| match self.env.get(&v) {
            Some(Lowered::Tile { layout, regs }) => Some(InvariantTile {
                source: v,
                layout: layout.clone(),
                regs: regs.clone(),
                permuted,
            }),
            _ => None,
        };
        if let Some(held) = tile(value, false) {
            return Some(held);
        }
        let def = self.func.defining_op(value)?;
        let op = self.func.op(def);
        let (OpKind::Permute { perm }, true) = (&op.kind, body.ops.contains(&def)) else {
            return None;
        };
        (perm.as_slice() == [1, 0])
            .then(|| tile(*op.operands.first()?, true))
            .flatten()
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
