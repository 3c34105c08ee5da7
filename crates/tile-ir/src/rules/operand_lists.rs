//! The typing rules of the ops whose operands are a list of their own
//! shape: the combines (`reduce_with`, `scan_with`), `assert` and `print`
//! with their values, `multiple_of`, `gather` and `scatter` with an index per axis, and the atomics.

use super::checks::*;
use super::RuleResult;
use crate::dtype::DType;
use crate::ops::AtomicOp;
use crate::types::{Shape, TensorType, Type};

/// The results of `reduce_with` (`keepdim` given) or `scan_with`: tiles of
/// one shape, each reduced along `axis` (or kept, for a scan).
pub(super) fn combined(
    operands: &[&Type],
    axis: usize,
    keepdim: Option<bool>,
) -> RuleResult<Option<Vec<Type>>> {
    let Some(first) = operands.first() else {
        return Err("a combine needs at least one operand".into());
    };
    let shape = &tile_operand(first)?.shape;
    let mut results = Vec::with_capacity(operands.len());
    for operand in operands {
        let t = tile_operand(operand)?;
        if t.shape != *shape {
            return Err(format!(
                "the operands must have one shape, found {} and {}",
                first, operand
            ));
        }
        axis_in(axis, t.shape.rank())?;
        results.push(match keepdim {
            Some(keepdim) => reduced(t, axis, keepdim, t.dtype)?,
            None => Type::Tile(t.clone()),
        });
    }
    Ok(Some(results))
}

/// A `multiple_of`: one integer scalar, the result of its type; the
/// divisor at least 1.
pub(super) fn multiple_of(divisor: u32, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let [x] = operands else {
        return Err(format!(
            "multiple_of takes one operand, found {}",
            operands.len()
        ));
    };
    let Type::Scalar(dtype) = x else {
        return Err(format!("the operand must be an integer scalar, found {x}"));
    };
    if !dtype.is_int() {
        return Err(format!("the operand must be an integer scalar, found {x}"));
    }
    let fits = crate::scalar::Scalar::wrapping_from_i128(*dtype, divisor.into())
        .and_then(crate::scalar::Scalar::to_i128)
        == Some(divisor.into());
    if divisor == 0 || !fits {
        return Err(format!(
            "the divisor must be at least 1 and fit {dtype}, found {divisor}"
        ));
    }
    Ok(Some(vec![(*x).clone()]))
}

/// An `assert`: a `bool` condition, then one scalar per placeholder of
/// the message; no results.
pub(super) fn assertion(message: &str, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let Some((cond, values)) = operands.split_first() else {
        return Err("assert needs a condition".into());
    };
    if !matches!(cond, Type::Scalar(DType::Bool))
        && !matches!(cond, Type::Tile(t) if t.dtype == DType::Bool)
    {
        return Err(format!(
            "the condition must be a bool scalar or tile, found {cond}"
        ));
    }
    let wanted = crate::assertion::placeholders(message)?;
    if values.len() != wanted {
        return Err(format!(
            "the message formats {wanted} value(s), found {}",
            values.len()
        ));
    }
    if values.len() > crate::assertion::MAX_VALUES {
        return Err(format!(
            "an assertion formats at most {} values, found {}",
            crate::assertion::MAX_VALUES,
            values.len()
        ));
    }
    if let Some(tile) = values.iter().find(|t| !matches!(t, Type::Scalar(_))) {
        return Err(format!(
            "the formatted values must be scalars, found {tile}"
        ));
    }
    Ok(Some(Vec::new()))
}

/// A `print`: one scalar or tile per placeholder of the message, the tiles
/// of one shape; no results.
pub(super) fn print(message: &str, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let wanted = crate::assertion::placeholders(message)?;
    if operands.len() != wanted {
        return Err(format!(
            "the message formats {wanted} value(s), found {}",
            operands.len()
        ));
    }
    if operands.len() > crate::device_print::MAX_VALUES {
        return Err(format!(
            "a print formats at most {} values, found {}",
            crate::device_print::MAX_VALUES,
            operands.len()
        ));
    }
    let mut shape: Option<&Shape> = None;
    for t in operands {
        match t {
            Type::Scalar(_) => {}
            Type::Tile(tile) => match shape {
                Some(s) if *s != tile.shape => {
                    return Err(format!(
                        "the printed tiles must have one shape, found {s} and {}",
                        tile.shape
                    ))
                }
                _ => shape = Some(&tile.shape),
            },
            other => return Err(format!("a print formats scalars and tiles, found {other}")),
        }
    }
    Ok(Some(Vec::new()))
}

/// The result of a `gather`: a tile of the tensor's dtype, of the index
/// tiles' shape.
pub(super) fn gather(operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let t = tensor_first(operands)?;
    let want = 1 + t.rank + 2;
    if operands.len() != want {
        return Err(format!(
            "gather from a tensor of rank {} needs {want} operands (the tensor, {} index tile(s), the mask and the other values), found {}",
            t.rank,
            t.rank,
            operands.len()
        ));
    }
    let other = operands[want - 1];
    let shape = match other {
        Type::Tile(o) if o.dtype == t.dtype => Some(o.shape.clone()),
        Type::Scalar(d) if *d == t.dtype => None,
        _ => {
            return Err(format!(
                "the other values must be a tile or scalar of {}, found {other}",
                t.dtype
            ))
        }
    };
    // A read of one element has scalars throughout, else tiles of one shape.
    let like = |dtype: DType| match &shape {
        Some(s) => tile(s.clone(), dtype),
        None => Type::Scalar(dtype),
    };
    let mask = like(DType::Bool);
    if *operands[want - 2] != mask {
        return Err(format!(
            "the mask must have type {mask}, found {}",
            operands[want - 2]
        ));
    }
    for (axis, index) in operands[1..=t.rank].iter().enumerate() {
        let ok = match (index, &shape) {
            (Type::Tile(i), Some(s)) => i.shape == *s && i.dtype.is_int(),
            (Type::Scalar(d), None) => d.is_int(),
            _ => false,
        };
        if !ok {
            let want = match &shape {
                Some(s) => format!("an integer tile of shape {s}"),
                None => "an integer scalar".to_string(),
            };
            return Err(format!("index {axis} must be {want}, found {index}"));
        }
    }
    Ok(Some(vec![other.clone()]))
}

/// The result of an `atomic`: the old values, a tile like the value.
pub(super) fn atomic(op: AtomicOp, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let t = tensor_first(operands)?;
    let trailing = if op == AtomicOp::Cas { 3 } else { 2 };
    let want = 1 + t.rank + trailing;
    if operands.len() != want {
        return Err(format!(
            "atomic {op} on a tensor of rank {} needs {want} operands (the tensor, {} index tile(s), {}the value and the mask), found {}",
            t.rank,
            t.rank,
            if op == AtomicOp::Cas { "the compared value, " } else { "" },
            operands.len()
        ));
    }
    if !op.supports(t.dtype) {
        return Err(format!(
            "atomic {op} supports {}, the tensor is {}",
            op.supported_text(),
            t.dtype
        ));
    }
    let result = update_operands(t, operands)?;
    if op == AtomicOp::Cas && *operands[want - 3] != result {
        return Err(format!(
            "the compared value must have type {result}, found {}",
            operands[want - 3]
        ));
    }
    Ok(Some(vec![result]))
}

/// A `scatter`: the tensor, one integer index tile per axis, the value and
/// the mask; no results.
pub(super) fn scatter(operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let t = tensor_first(operands)?;
    let want = 1 + t.rank + 2;
    if operands.len() != want {
        return Err(format!(
            "scatter into a tensor of rank {} needs {want} operands (the tensor, {} index tile(s), the value and the mask), found {}",
            t.rank,
            t.rank,
            operands.len()
        ));
    }
    update_operands(t, operands)?;
    Ok(Some(Vec::new()))
}

/// Operand 0 of an access at index tiles: a tensor.
fn tensor_first<'t>(operands: &[&'t Type]) -> RuleResult<&'t TensorType> {
    match operands.first() {
        Some(Type::Tensor(t)) => Ok(t),
        Some(other) => Err(format!("operand 0 must be a tensor, found {other}")),
        None => Err("expected a tensor as operand 0".into()),
    }
}

/// What an update of tensor `t` at index tiles (`atomic`, `scatter`)
/// requires of its operands, which end with the value and the mask: the
/// value a tile of the tensor's dtype, the mask a `bool` tile of its shape,
/// and the index tiles after the tensor integer tiles of that shape.
/// Returns the value's type.
fn update_operands(t: &TensorType, operands: &[&Type]) -> RuleResult<Type> {
    let [.., value, mask] = operands else {
        return Err("expected a value and a mask".into());
    };
    let shape = tile_operand(value)
        .map_err(|_| format!("the value must be a tile of {}, found {value}", t.dtype))?
        .shape
        .clone();
    let want = tile(shape.clone(), t.dtype);
    if **value != want {
        return Err(format!(
            "the value must have type {want} (the tensor's dtype), found {value}"
        ));
    }
    let bools = tile(shape.clone(), DType::Bool);
    if **mask != bools {
        return Err(format!("the mask must have type {bools}, found {mask}"));
    }
    for (axis, index) in operands[1..=t.rank].iter().enumerate() {
        let ok = matches!(index, Type::Tile(i) if i.shape == shape && i.dtype.is_int());
        if !ok {
            return Err(format!(
                "index {axis} must be an integer tile of shape {shape}, found {index}"
            ));
        }
    }
    Ok(want)
}
