//! The typing rules of the grid, constants and the elementwise ops.

use super::checks::*;
use super::{check_shape, RuleResult};
use crate::dtype::DType;
use crate::ops::{CmpPred, OpKind};
use crate::types::Type;

/// The result types of an elementwise op of `kind` applied to operands of the given
/// types.
pub(super) fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let one = |ty: Type| Ok(Some(vec![ty]));
    match kind {
        OpKind::ProgramId { axis } | OpKind::NumPrograms { axis } => {
            arity(operands, 0)?;
            if *axis > 2 {
                return Err(format!("the grid axis must be 0, 1 or 2, found {axis}"));
            }
            one(Type::Scalar(DType::I32))
        }
        OpKind::Constant { value } => {
            arity(operands, 0)?;
            one(Type::Scalar(value.dtype()))
        }
        OpKind::Full { value, shape } => {
            arity(operands, 0)?;
            check_shape(shape)?;
            one(tile(shape.clone(), value.dtype()))
        }
        OpKind::Iota { shape, dtype } => {
            arity(operands, 0)?;
            check_shape(shape)?;
            if dtype.is_bool() {
                return Err("iota needs an integer or float dtype, found bool".into());
            }
            one(tile(shape.clone(), *dtype))
        }
        OpKind::Unary(op) => {
            arity(operands, 1)?;
            let ty = data(operands[0], "the operand")?;
            unary_dtype(*op, ty.dtype())?;
            one(ty.clone())
        }
        OpKind::Binary(op) => {
            arity(operands, 2)?;
            let ty = same_data(operands, "operands")?;
            binary_dtype(*op, ty.dtype())?;
            one(ty.clone())
        }
        OpKind::Cmp(pred) => {
            arity(operands, 2)?;
            let ty = same_data(operands, "operands")?;
            let d = ty.dtype();
            if !matches!(pred, CmpPred::Eq | CmpPred::Ne) && d.is_bool() {
                return Err(format!(
                    "cmp {pred} needs integer or float operands, found bool"
                ));
            }
            one(ty.with_dtype(DType::Bool))
        }
        OpKind::Select => {
            arity(operands, 3)?;
            let ty = same_data(&operands[1..], "the two choices")?;
            let want = ty.with_dtype(DType::Bool);
            if *operands[0] != want {
                return Err(format!(
                    "the condition must have type {want}, found {}",
                    operands[0]
                ));
            }
            one(ty.clone())
        }
        OpKind::Fma => {
            arity(operands, 3)?;
            let ty = same_data(operands, "operands")?;
            float(ty.dtype(), "fma")?;
            one(ty.clone())
        }
        OpKind::Cast { to } => {
            arity(operands, 1)?;
            let ty = data(operands[0], "the operand")?;
            one(ty.with_dtype(*to))
        }
        OpKind::Bitcast { to } => {
            arity(operands, 1)?;
            let ty = data(operands[0], "the operand")?;
            let from = ty.dtype();
            if from.is_bool() || to.is_bool() {
                return Err(format!(
                    "bitcast needs dtypes with a bit layout, found {from} to {to}"
                ));
            }
            if from.bits() != to.bits() {
                return Err(format!(
                    "bitcast needs dtypes of one width, found {from} ({} bits) to {to} ({} bits)",
                    from.bits(),
                    to.bits()
                ));
            }
            one(ty.with_dtype(*to))
        }
        other => Err(format!("`{}` is not an elementwise op", other.name())),
    }
}
