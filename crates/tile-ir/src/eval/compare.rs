//! Comparisons and `select`.

use super::{same_dtype, EvalError};
use crate::ops::CmpPred;
use crate::scalar::Scalar;
use std::cmp::Ordering;

/// `a <pred> b` for operands of one dtype: integers by value, floats by IEEE
/// comparison (`-0 == +0`; with a NaN only `ne` holds), `bool` by `eq`/`ne`
/// only.
pub fn compare(pred: CmpPred, a: Scalar, b: Scalar) -> Result<bool, EvalError> {
    let dtype = same_dtype(pred.name(), &[a.dtype(), b.dtype()])?;
    if dtype.is_bool() && !matches!(pred, CmpPred::Eq | CmpPred::Ne) {
        return Err(EvalError::Unsupported {
            op: pred.name(),
            dtype,
        });
    }
    let order = match (a.to_i128(), b.to_i128()) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.to_f64().partial_cmp(&b.to_f64()),
    };
    Ok(match order {
        None => pred == CmpPred::Ne,
        Some(o) => match pred {
            CmpPred::Eq => o == Ordering::Equal,
            CmpPred::Ne => o != Ordering::Equal,
            CmpPred::Lt => o == Ordering::Less,
            CmpPred::Le => o != Ordering::Greater,
            CmpPred::Gt => o == Ordering::Greater,
            CmpPred::Ge => o != Ordering::Less,
        },
    })
}

/// `cond ? a : b`, returning the chosen operand unchanged (bits included);
/// `cond` must be a `bool` and `a`, `b` of one dtype.
pub fn select(cond: Scalar, a: Scalar, b: Scalar) -> Result<Scalar, EvalError> {
    same_dtype("select", &[a.dtype(), b.dtype()])?;
    match cond {
        Scalar::Bool(c) => Ok(if c { a } else { b }),
        other => Err(EvalError::Unsupported {
            op: "select",
            dtype: other.dtype(),
        }),
    }
}
