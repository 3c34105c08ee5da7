//! The typing rules of the ops that order memory accesses: `fence`, `barrier` and the grid
//! dependency ops.

use super::checks::*;
use super::RuleResult;
use crate::ops::{MemOrder, OpKind};
use crate::types::Type;

/// The result types of a sync op of `kind` applied to operands of the given
/// types.
pub(super) fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    match kind {
        OpKind::Fence { order, .. } => {
            arity(operands, 0)?;
            if *order == MemOrder::Relaxed {
                return Err("a fence's order is acquire, release, acq_rel or seq_cst: a relaxed fence orders nothing".into());
            }
            Ok(Some(Vec::new()))
        }
        OpKind::Barrier | OpKind::GridWait | OpKind::GridLaunchDependents => {
            arity(operands, 0)?;
            Ok(Some(Vec::new()))
        }
        other => Err(format!("`{}` is not a sync op", other.name())),
    }
}
