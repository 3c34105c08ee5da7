//! The typing rules of the folds along an axis: `reduce`, `arg`, `scan` and the combining
//! `reduce_with` and `scan_with`.

use super::checks::*;
use super::operand_lists::*;
use super::RuleResult;
use crate::dtype::DType;
use crate::ops::OpKind;
use crate::types::Type;

/// The result types of a reduction of `kind` applied to operands of the given
/// types.
pub(super) fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let one = |ty: Type| Ok(Some(vec![ty]));
    match kind {
        OpKind::Reduce { axis, keepdim, .. } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            numeric(t.dtype, kind.name())?;
            one(reduced(t, *axis, *keepdim, t.dtype)?)
        }
        OpKind::ArgReduce { axis, keepdim, .. } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            numeric(t.dtype, "arg")?;
            one(reduced(t, *axis, *keepdim, DType::I32)?)
        }
        OpKind::Scan { axis, .. } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            numeric(t.dtype, "scan")?;
            axis_in(*axis, t.shape.rank())?;
            one(Type::Tile(t.clone()))
        }
        OpKind::ReduceWith { axis, keepdim } => combined(operands, *axis, Some(*keepdim)),
        OpKind::ScanWith { axis } => combined(operands, *axis, None),
        other => Err(format!("`{}` is not a reduction", other.name())),
    }
}
