//! The checks the typing rules are made of: arity, dtype classes, shapes,
//! axes, broadcasting, and the operands of accesses.

use super::RuleResult;
use crate::dtype::DType;
use crate::ops::{BinaryOp, Padding, UnaryOp};
use crate::types::{PartitionViewType, Shape, TileType, Type};

pub(super) fn tile(shape: Shape, dtype: DType) -> Type {
    Type::Tile(TileType { shape, dtype })
}

pub(super) fn arity(operands: &[&Type], n: usize) -> RuleResult<()> {
    if operands.len() == n {
        Ok(())
    } else {
        Err(format!("expected {n} operand(s), found {}", operands.len()))
    }
}

pub(super) fn data<'t>(ty: &'t Type, what: &str) -> RuleResult<&'t Type> {
    if ty.is_data() {
        Ok(ty)
    } else {
        Err(format!("{what} must be a scalar or a tile, found {ty}"))
    }
}

pub(super) fn same_data<'t>(operands: &[&'t Type], what: &str) -> RuleResult<&'t Type> {
    let first = data(operands[0], what)?;
    for other in &operands[1..] {
        if *other != first {
            return Err(format!(
                "{what} must have one type (broadcasts are explicit), found {first} and {other}"
            ));
        }
    }
    Ok(first)
}

pub(super) fn tile_operand(ty: &Type) -> RuleResult<&TileType> {
    match ty {
        Type::Tile(t) => Ok(t),
        other => Err(format!("the operand must be a tile, found {other}")),
    }
}

/// `f8e8m0` is a scale, not an operand of arithmetic: its results would round
/// toward zero, and a difference of two scales is no scale.
fn arithmetic_on_scale(dtype: DType, op: &str) -> RuleResult<()> {
    if dtype == DType::F8E8M0 {
        Err(format!(
            "{op} does not take f8e8m0, a block scale: cast it to f32 to compute with it"
        ))
    } else {
        Ok(())
    }
}

pub(super) fn float(dtype: DType, op: &str) -> RuleResult<()> {
    arithmetic_on_scale(dtype, op)?;
    if dtype.is_float() {
        Ok(())
    } else {
        Err(format!("{op} needs a float dtype, found {dtype}"))
    }
}

pub(super) fn numeric(dtype: DType, op: &str) -> RuleResult<()> {
    arithmetic_on_scale(dtype, op)?;
    if dtype.is_bool() {
        Err(format!("{op} needs an integer or float dtype, found bool"))
    } else {
        Ok(())
    }
}

pub(super) fn unary_dtype(op: UnaryOp, dtype: DType) -> RuleResult<()> {
    use UnaryOp::*;
    match op {
        Neg => numeric(dtype, op.name()),
        Not if dtype.is_float() => Err(format!("not needs a bool or integer dtype, found {dtype}")),
        Not => Ok(()),
        Abs if dtype.is_unsigned_int() || dtype.is_bool() => Err(format!(
            "abs needs a signed integer or float dtype, found {dtype}"
        )),
        Abs => arithmetic_on_scale(dtype, op.name()),
        Exp | Exp2 | Log | Log2 | Sqrt | Rsqrt | Sin | Cos | Tan | Tanh | Erf | Erfc | Floor
        | Ceil | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh | Sigmoid | Log1p
        | Expm1 | Cbrt | Round | RoundTiesEven => float(dtype, op.name()),
        RoundTf32 if dtype != DType::F32 => Err(format!("round_tf32 needs f32, found {dtype}")),
        RoundTf32 => Ok(()),
    }
}

pub(super) fn binary_dtype(op: BinaryOp, dtype: DType) -> RuleResult<()> {
    use BinaryOp::*;
    match op {
        Add | Sub | Mul | Div | Rem | Min | Max => numeric(dtype, op.name()),
        Pow | Atan2 | Hypot => float(dtype, op.name()),
        And | Or | Xor if dtype.is_float() => {
            Err(format!("{op} needs a bool or integer dtype, found {dtype}"))
        }
        And | Or | Xor => Ok(()),
        Shl | Shr if !dtype.is_int() => Err(format!("{op} needs an integer dtype, found {dtype}")),
        Shl | Shr => Ok(()),
    }
}

pub(super) fn broadcastable(from: &Shape, to: &Shape) -> RuleResult<()> {
    let offset = to
        .rank()
        .checked_sub(from.rank())
        .ok_or_else(|| format!("cannot broadcast {from} to {to}: the target has fewer axes"))?;
    for (axis, &d) in from.dims().iter().enumerate() {
        let target = to.dims()[axis + offset];
        if d != target && d != 1 {
            return Err(format!(
                "cannot broadcast {from} to {to}: axis {axis} has extent {d}, which is neither 1 nor {target}"
            ));
        }
    }
    Ok(())
}

pub(super) fn same_rank(from: &Shape, to: &Shape, op: &str) -> RuleResult<()> {
    if from.rank() == to.rank() {
        Ok(())
    } else {
        Err(format!(
            "{op} keeps the rank: {from} has {} axes, {to} has {}",
            from.rank(),
            to.rank()
        ))
    }
}

pub(super) fn axis_in(axis: usize, rank: usize) -> RuleResult<()> {
    if axis < rank {
        Ok(())
    } else {
        Err(format!("axis {axis} is out of range for rank {rank}"))
    }
}

pub(super) fn distinct_axes(axes: &[usize], rank: usize) -> RuleResult<()> {
    let mut seen = vec![false; rank];
    for &axis in axes {
        axis_in(axis, rank)?;
        if std::mem::replace(&mut seen[axis], true) {
            return Err(format!("axis {axis} is listed twice"));
        }
    }
    Ok(())
}

pub(super) fn reduced(t: &TileType, axis: usize, keepdim: bool, dtype: DType) -> RuleResult<Type> {
    axis_in(axis, t.shape.rank())?;
    let mut dims = t.shape.dims().to_vec();
    if keepdim {
        dims[axis] = 1;
    } else {
        dims.remove(axis);
    }
    Ok(if dims.is_empty() {
        Type::Scalar(dtype)
    } else {
        tile(Shape(dims), dtype)
    })
}

pub(super) fn view_access<'t>(
    operands: &[&'t Type],
    at: usize,
) -> RuleResult<&'t PartitionViewType> {
    let view = match operands.get(at) {
        Some(Type::PartitionView(v)) => v,
        Some(other) => {
            return Err(format!(
                "operand {at} must be a partition view, found {other}"
            ))
        }
        None => return Err(format!("expected a partition view as operand {at}")),
    };
    let indices = &operands[at + 1..];
    if indices.len() != view.tile.rank() {
        return Err(format!(
            "a view of rank {} needs {} partition indices, found {}",
            view.tile.rank(),
            view.tile.rank(),
            indices.len()
        ));
    }
    for (i, index) in indices.iter().enumerate() {
        if !matches!(index, Type::Scalar(d) if d.is_int()) {
            return Err(format!(
                "partition index {i} must be an integer scalar, found {index}"
            ));
        }
    }
    Ok(view)
}

/// Checks that `padding` is a value of `dtype` (the padding of a masked load).
pub fn check_padding(padding: Padding, dtype: DType) -> RuleResult<()> {
    match padding {
        Padding::Zero => Ok(()),
        Padding::Nan if !dtype.is_float() => Err(format!(
            "padding nan needs a float dtype, the view is {dtype}"
        )),
        Padding::Nan if Padding::Nan.value(dtype).is_none() => Err(format!(
            "padding nan needs a float dtype with a NaN, the view is {dtype}"
        )),
        Padding::PosInf | Padding::NegInf if !dtype.has_infinity() => Err(format!(
            "infinite padding needs a float dtype with infinities, the view is {dtype}"
        )),
        Padding::Value(v) if v.dtype() != dtype => Err(format!(
            "the padding value {v} is {}, the view is {dtype}",
            v.dtype()
        )),
        _ => Ok(()),
    }
}
