//! `cp.async` for the operands of tensor-core `dot`s: a load whose only use
//! is such a dot is not lowered where it stands (it is *deferred*); the dot
//! copies its partition straight from global to shared memory, 16 bytes per
//! copy, with no registers in between.
//!
//! The copies need the tensor's rows contiguous and 16-byte aligned, which
//! is a runtime property: the dot emits `if contiguous { cp.async … } else {
//! ld.global, st.shared element by element }` behind the same uniform test
//! as vector loads (the fallback stores each element as soon as it is
//! loaded, so that it needs few registers). Each thread copies the chunks of 8 (16-bit) elements its
//! registers would hold in the blocked layout with 8 elements per thread;
//! a masked load's chunk reads only its elements inside the tensor (a
//! prefix of the row) and writes zeros for the rest, the `zero` padding.

use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::{mma_dot, DistLayout};
use crate::program::{Region, SharedId, ThreadOpKind};
use std::collections::{HashMap, HashSet};
use tile_ir::layout::Swizzle;
use tile_ir::{BinaryOp, Function, OpId, OpKind, Padding, Scalar, Value};

/// The loads to defer: each the `a` or `b` of a `dot` for which
/// `on_tensor_cores` holds, in the same region, with no write to memory (or
/// nested region) between them, and no other use.
pub(super) fn deferred_loads(
    func: &Function,
    on_tensor_cores: impl Fn(OpId) -> bool,
) -> HashSet<OpId> {
    let mut uses: HashMap<Value, usize> = HashMap::new();
    func.walk(&mut |id| {
        for &v in &func.op(id).operands {
            *uses.entry(v).or_default() += 1;
        }
    });
    let mut deferred = HashSet::new();
    let mut regions = vec![&func.body];
    while let Some(region) = regions.pop() {
        for (at, &id) in region.ops.iter().enumerate() {
            let op = func.op(id);
            regions.extend(op.regions.iter());
            if !matches!(op.kind, OpKind::Dot { .. }) || !on_tensor_cores(id) {
                continue;
            }
            for &operand in &op.operands[..2] {
                let Some(load) = func.defining_op(operand) else {
                    continue;
                };
                let eligible = matches!(
                    func.op(load).kind,
                    OpKind::Load
                        | OpKind::LoadMasked {
                            padding: Padding::Zero
                        }
                );
                let Some(from) = region.ops[..at].iter().position(|&o| o == load) else {
                    continue;
                };
                let writes_between = region.ops[from + 1..at].iter().any(|&o| {
                    let kind = &func.op(o).kind;
                    kind.writes_memory() || !func.op(o).regions.is_empty()
                });
                if eligible && !writes_between && uses.get(&operand) == Some(&1) {
                    deferred.insert(load);
                }
            }
        }
    }
    deferred
}

impl Lowerer<'_> {
    /// Whether `dot` runs on tensor cores with the layout its result was
    /// given.
    pub(super) fn on_tensor_cores(&self, dot: OpId) -> bool {
        let result = self.func.op(dot).results.first();
        match (
            mma_dot(self.func, dot, self.program.num_warps, self.tensor_cores),
            result,
        ) {
            (Some(plan), Some(r)) => self.plan.values.get(r) == Some(&plan.layout),
            _ => false,
        }
    }

    /// Stages the deferred `load` into `alloc`: `cp.async` copies when the
    /// tensor is contiguous and aligned, else the load as usual and
    /// `st.shared`.
    pub(super) fn stage_deferred(
        &mut self,
        load: OpId,
        alloc: SharedId,
        swizzle: Option<Swizzle>,
    ) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(load);
        let result = op.results[0];
        let dtype = func.ty(result).dtype();
        let shape = func
            .ty(result)
            .tile_shape()
            .map(|s| s.dims().to_vec())
            .unwrap_or_default();
        let width = 16 / dtype.size_bytes().max(1);
        let chunks = DistLayout::blocked(&shape, self.program.num_warps, width)?;
        let Lowered::PartitionView { param, .. } = self.get(load, op.operands[0])? else {
            return Err(self.invalid(load, "the operand is not a partition view"));
        };
        // Whole chunks; threads past the tile hold dead ones, not copied.
        if chunks.size_per_thread.last() != Some(&width) || chunks.has_copies() {
            return self.stage_loaded(load, alloc, swizzle);
        }
        let contiguous = self.contiguous(param, shape.len(), width, dtype);
        let masked = matches!(op.kind, OpKind::LoadMasked { .. });
        let access = self.access(load, &op.operands, &chunks, masked, false)?;
        let coords = self.coords(&chunks);
        let saved = std::mem::take(&mut self.current);
        let (one, zero) = (self.i32c(1), self.i32c(0));
        for g in 0..chunks.registers() / width {
            let mut count = zero;
            for &mask in &access.masks[g * width..(g + 1) * width] {
                let inside = self.select(mask, one, zero);
                count = self.binary(BinaryOp::Add, count, inside);
            }
            let first = g * width;
            let at = self.swizzled(coords.linear[first], swizzle);
            let operands = vec![access.addresses[first], at, count, coords.live[first]];
            let copy = self.emit_op(ThreadOpKind::CopyAsync { param, alloc }, operands, &[]);
            self.program.notes.insert(copy, access.note.clone());
        }
        self.emit_op(ThreadOpKind::Yield, vec![], &[]);
        let then_ops = std::mem::take(&mut self.current);
        // The same chunks element by element, each stored as soon as it is
        // loaded (few registers live): zeros outside the tensor.
        let padding = self.constant(Scalar::zero(dtype));
        for v in 0..chunks.registers() {
            let kind = ThreadOpKind::LoadGlobal { param, width: 1 };
            let operands = vec![access.addresses[v], access.masks[v], padding];
            let loaded = self.emit_op(kind, operands, &[dtype]);
            self.program.notes.insert(loaded, access.note.clone());
            let value = self.program.ops[loaded].results[0];
            let at = self.swizzled(coords.linear[v], swizzle);
            let store = ThreadOpKind::StoreShared { alloc };
            self.emit_op(store, vec![at, value, coords.live[v]], &[]);
        }
        self.emit_op(ThreadOpKind::Yield, vec![], &[]);
        let else_ops = std::mem::replace(&mut self.current, saved);
        let regions = vec![
            Region {
                args: vec![],
                ops: then_ops,
            },
            Region {
                args: vec![],
                ops: else_ops,
            },
        ];
        let branch = self
            .program
            .create_op(ThreadOpKind::If, vec![contiguous], &[], regions);
        self.current.push(branch);
        Ok(())
    }

    /// Lowers the deferred `load` where it is needed and stores its
    /// registers into `alloc`.
    fn stage_loaded(
        &mut self,
        load: OpId,
        alloc: SharedId,
        swizzle: Option<Swizzle>,
    ) -> Result<(), LowerError> {
        let was_deferred = self.deferred.remove(&load);
        self.memory(load)?;
        if was_deferred {
            self.deferred.insert(load);
        }
        let result = self.func.op(load).results[0];
        let (layout, regs) = self.tile(load, result)?;
        self.store_tile(alloc, &layout, &regs, swizzle);
        Ok(())
    }

    /// Waits for this thread's copies, then for every thread's.
    pub(super) fn land_copies(&mut self) {
        self.emit_op(ThreadOpKind::CommitAsync, vec![], &[]);
        self.emit_op(ThreadOpKind::WaitAsync { pending: 0 }, vec![], &[]);
        self.barrier();
    }
}
