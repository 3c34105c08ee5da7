//! Helpers shared by the passes: value substitution and constant lookup.

use crate::function::{Function, OpId, Region, Value};
use crate::ops::OpKind;
use crate::scalar::Scalar;
use std::collections::HashMap;

/// Replacements of values by others, applied to every operand at once.
#[derive(Default)]
pub(super) struct Substitution {
    map: HashMap<Value, Value>,
}

impl Substitution {
    /// Records that uses of `from` become uses of `to`.
    pub(super) fn replace(&mut self, from: Value, to: Value) {
        let to = self.resolve(to);
        if from != to {
            self.map.insert(from, to);
        }
    }

    /// The value that stands for `value` now.
    pub(super) fn resolve(&self, mut value: Value) -> Value {
        while let Some(&next) = self.map.get(&value) {
            value = next;
        }
        value
    }

    /// Whether no replacement was recorded.
    pub(super) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Rewrites every operand of every op of `func`.
    pub(super) fn apply(&self, func: &mut Function) {
        if self.is_empty() {
            return;
        }
        for op in func.ops.values_mut() {
            for operand in &mut op.operands {
                *operand = self.resolve(*operand);
            }
        }
    }
}

/// The scalar every element of `value` equals, when `value` is a `constant`,
/// a `full`, or a `broadcast` of one of them.
pub(super) fn splat_of(func: &Function, value: Value) -> Option<Scalar> {
    let op = func.op(func.defining_op(value)?);
    match &op.kind {
        OpKind::Constant { value } | OpKind::Full { value, .. } => Some(*value),
        OpKind::Broadcast { .. } => splat_of(func, op.operands[0]),
        _ => None,
    }
}

/// Takes the regions out of `op` so they can be rewritten while `func` is
/// borrowed mutably; [`put_regions`] puts them back.
pub(super) fn take_regions(func: &mut Function, op: OpId) -> Vec<Region> {
    std::mem::take(&mut func.ops[op].regions)
}

/// Puts back regions taken by [`take_regions`].
pub(super) fn put_regions(func: &mut Function, op: OpId, regions: Vec<Region>) {
    func.ops[op].regions = regions;
}
