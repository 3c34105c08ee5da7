//! `cast`: conversion between any two dtypes.

use super::round::{int_to_float, round_f64};
use super::EvalError;
use crate::dtype::DType;
use crate::scalar::Scalar;

/// `x`'s bits read as a value of `to`, a dtype of the same width (neither
/// `bool`); NaN payloads are kept. `Unsupported` for dtypes of different
/// widths.
pub fn bitcast(x: Scalar, to: DType) -> Result<Scalar, EvalError> {
    let from = x.dtype();
    if from.bits() != to.bits() || from.is_bool() || to.is_bool() {
        return Err(EvalError::Unsupported {
            op: "bitcast",
            dtype: from,
        });
    }
    Ok(Scalar::from_bits(to, x.to_bits()))
}

/// `x` converted to `to`. Total: every pair of dtypes is defined.
///
/// - to `bool`: `x != 0` (a NaN is `true`, `-0.0` is `false`);
/// - `bool` or integer to integer: two's complement wrap-around (truncation,
///   or sign / zero extension by the source's signedness); `bool` is 0 or 1;
/// - float to integer: rounds toward zero and saturates to the target's
///   range; NaN gives 0 (Rust's `as`, PTX `cvt.rzi.sat`);
/// - integer or float to float: rounded once to nearest, ties to even (FP8
///   saturates to its largest finite value), NaN to the canonical NaN;
///   casting a float to its own dtype returns it unchanged, NaN payload
///   included.
pub fn cast(x: Scalar, to: DType) -> Scalar {
    let from = x.dtype();
    if from == to {
        return x;
    }
    if to == DType::Bool {
        return Scalar::Bool(match x.to_i128() {
            Some(v) => v != 0,
            None => x.to_f64() != 0.0,
        });
    }
    let converted = match x.to_i128() {
        Some(v) if to.is_float() => int_to_float(v, to),
        Some(v) => Scalar::wrapping_from_i128(to, v),
        None if to.is_float() => round_f64(x.to_f64(), to),
        None => float_to_int(x.to_f64(), to),
    };
    // Each arm above matched `to`'s class, so `converted` is always `Some`.
    converted.unwrap_or(x)
}

/// Rust's saturating `as` from a float (exact in `f64`) to an integer dtype,
/// or `None` for a non-integer target.
fn float_to_int(v: f64, to: DType) -> Option<Scalar> {
    Some(match to {
        DType::I8 => Scalar::I8(v as i8),
        DType::I16 => Scalar::I16(v as i16),
        DType::I32 => Scalar::I32(v as i32),
        DType::I64 => Scalar::I64(v as i64),
        DType::U8 => Scalar::U8(v as u8),
        DType::U16 => Scalar::U16(v as u16),
        DType::U32 => Scalar::U32(v as u32),
        DType::U64 => Scalar::U64(v as u64),
        _ => return None,
    })
}
