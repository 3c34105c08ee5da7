//! Broadcast sources read again instead of converted.
//!
//! A tile loaded once and broadcast into tiles of several shapes (RoPE's
//! `cos` and `sin` rows, broadcast over the query heads and over the key
//! heads) gets the layout that broadcasts to its first use in registers;
//! each other broadcast would stage it through shared memory, behind a
//! barrier. When the load reads a tensor the kernel never writes, the
//! broadcast reads it again instead, in the layout that broadcasts to its
//! own result: the same elements (nothing wrote them in between), from the
//! cache, with no shared memory and no barrier. A load that is not `load`
//! or `load_masked` of a partition view, or that reads a tensor the kernel
//! writes, is converted as before.

use super::{LowerError, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::Reg;
use std::collections::{HashMap, HashSet};
use tile_ir::{Function, OpKind, Type, Value};

/// The positions of the tensor parameters of `func` that no op writes
/// (stores, atomics, and writes through layout views).
pub(super) fn read_only_tensors(func: &Function) -> HashSet<usize> {
    let params: HashMap<Value, usize> = func
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.value, i))
        .collect();
    let mut written = HashSet::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        if !op.kind.writes_memory() {
            return;
        }
        // The tensors behind the op's operands: follow views (of tensors,
        // of windows of tensors) back to the parameters.
        let mut pending: Vec<Value> = op.operands.clone();
        while let Some(v) = pending.pop() {
            if let Some(&p) = params.get(&v) {
                written.insert(p);
                continue;
            }
            let is_memory = !matches!(func.ty(v), Type::Tile(_) | Type::Scalar(_));
            if let (true, Some(def)) = (is_memory, func.defining_op(v)) {
                pending.extend(func.op(def).operands.iter().copied());
            }
        }
    });
    func.params
        .iter()
        .enumerate()
        .filter(|(i, p)| matches!(func.ty(p.value), Type::Tensor(_)) && !written.contains(i))
        .map(|(i, _)| i)
        .collect()
}

impl Lowerer<'_> {
    /// The registers of `operand` read again in the layout that
    /// broadcasts to `layout` (see the module docs), when `operand` is a
    /// load of a tensor the kernel never writes.
    pub(super) fn reload_broadcast(
        &mut self,
        operand: Value,
        layout: &DistLayout,
    ) -> Result<Option<Vec<Reg>>, LowerError> {
        let func = self.func;
        let Some(load) = func.defining_op(operand) else {
            return Ok(None);
        };
        let op = func.op(load);
        if !matches!(op.kind, OpKind::Load | OpKind::LoadMasked { .. }) {
            return Ok(None);
        }
        let Some(param) = op.operands.first().and_then(|&view| self.view_param(view)) else {
            return Ok(None);
        };
        let Some(shape) = func.ty(operand).tile_shape() else {
            return Ok(None);
        };
        let fitted = layout.fit(shape.dims()).filter(|f| f.broadcasts_to(layout));
        match fitted {
            Some(fitted) if self.read_only.contains(&param) => {
                Ok(Some(self.load_tile(load, &fitted)?))
            }
            _ => Ok(None),
        }
    }

    /// The tensor parameter a partition view value reads, once lowered.
    fn view_param(&self, view: Value) -> Option<usize> {
        match self.env.get(&view)? {
            super::Lowered::PartitionView { param, .. } => Some(*param),
            _ => None,
        }
    }
}
