//! Elementwise ops of two operands, and `fma`.

use super::round::{round_f64, sum_to_odd};
use super::{same_dtype, EvalError};
use crate::dtype::DType;
use crate::ops::BinaryOp;
use crate::scalar::Scalar;

/// `op` applied to `a` and `b`, which must have one dtype.
///
/// Floats: `add`, `sub`, `mul`, `div` and `rem` (C's `fmod`, exact) are
/// computed in `f64` and rounded once to the dtype, which for every dtype
/// narrower than `f64` equals the native IEEE operation (see
/// `docs/semantics.md`); `min`/`max` are IEEE 754-2019 `minimum`/`maximum`
/// (a NaN operand gives NaN, `-0 < +0`); `pow` is the `libm` crate's f64
/// `pow` (C99's special values) rounded once, like the unary math functions.
/// Integers wrap; `x / 0 == 0`,
/// `x % 0 == x`; shift amounts at or beyond the width, or negative, shift
/// every bit out. `bool`: only `and`, `or`, `xor`.
pub fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Result<Scalar, EvalError> {
    let dtype = same_dtype(op.name(), &[a.dtype(), b.dtype()])?;
    let unsupported = EvalError::Unsupported {
        op: op.name(),
        dtype,
    };
    match (a.to_i128(), b.to_i128()) {
        (Some(x), Some(y)) => integer(op, dtype, a, b, x, y).ok_or(unsupported),
        _ => float(op, dtype, a, b).ok_or(unsupported),
    }
}

/// `a * b + c` rounded once, for floats of one dtype.
///
/// `f32` and `f64` use the correctly rounded `mul_add`. For the narrower
/// dtypes the product is exact in `f64` (at most 2 × 11 significant bits);
/// the sum is rounded to odd into `f64`, then to the dtype, which is again a
/// single correct rounding.
pub fn fma(a: Scalar, b: Scalar, c: Scalar) -> Result<Scalar, EvalError> {
    let dtype = same_dtype("fma", &[a.dtype(), b.dtype(), c.dtype()])?;
    let (x, y, z) = (a.to_f64(), b.to_f64(), c.to_f64());
    let exact = match dtype {
        DType::F64 => x.mul_add(y, z),
        DType::F32 => f64::from((x as f32).mul_add(y as f32, z as f32)),
        d if d.is_float() => sum_to_odd(x * y, z),
        _ => f64::NAN,
    };
    let unsupported = EvalError::Unsupported { op: "fma", dtype };
    if dtype == DType::F8E8M0 {
        return Err(unsupported);
    }
    round_f64(exact, dtype).ok_or(unsupported)
}

/// Integer and `bool` semantics; `None` for an op not defined on `dtype`.
fn integer(op: BinaryOp, dtype: DType, a: Scalar, b: Scalar, x: i128, y: i128) -> Option<Scalar> {
    let bits = |v: u64| Some(Scalar::from_bits(dtype, v));
    match op {
        BinaryOp::And => return bits(a.to_bits() & b.to_bits()),
        BinaryOp::Or => return bits(a.to_bits() | b.to_bits()),
        BinaryOp::Xor => return bits(a.to_bits() ^ b.to_bits()),
        _ if dtype.is_bool() => return None,
        _ => {}
    }
    let width = dtype.bits();
    // A shift amount is meaningful in 0..width; anything else shifts all out.
    let amount = u32::try_from(y).ok().filter(|&s| s < width);
    let wide = match op {
        BinaryOp::Add => x.wrapping_add(y),
        BinaryOp::Sub => x.wrapping_sub(y),
        BinaryOp::Mul => x.wrapping_mul(y),
        BinaryOp::Div if y == 0 => 0,
        BinaryOp::Div => x / y,
        BinaryOp::Rem if y == 0 => x,
        BinaryOp::Rem => x % y,
        BinaryOp::Min => x.min(y),
        BinaryOp::Max => x.max(y),
        BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Hypot => return None,
        BinaryOp::Shl => return bits(amount.map_or(0, |s| a.to_bits() << s)),
        BinaryOp::Shr if dtype.is_signed_int() => x >> amount.unwrap_or(width - 1),
        BinaryOp::Shr => return bits(amount.map_or(0, |s| a.to_bits() >> s)),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => return None,
    };
    Scalar::wrapping_from_i128(dtype, wide)
}

/// Float semantics; `None` for an op not defined on floats.
fn float(op: BinaryOp, dtype: DType, a: Scalar, b: Scalar) -> Option<Scalar> {
    if dtype == DType::F8E8M0 {
        // A scale, not an operand of arithmetic (`rules::binary_dtype`).
        return None;
    }
    let (x, y) = (a.to_f64(), b.to_f64());
    let exact = match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x / y,
        BinaryOp::Rem => x % y,
        BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Hypot => math2_f64(op, x, y)?,
        BinaryOp::Min | BinaryOp::Max if x.is_nan() || y.is_nan() => f64::NAN,
        BinaryOp::Min => return Some(if is_below(x, y) { a } else { b }),
        BinaryOp::Max => return Some(if is_below(x, y) { b } else { a }),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Shl | BinaryOp::Shr => {
            return None
        }
    };
    round_f64(exact, dtype)
}

/// The `f64` value of the two-operand math-library function `op`
/// ([`BinaryOp::MATH`]) at `(x, y)`: `libm`'s `pow`, `atan2` (of the
/// ordinate `x` and the abscissa `y`) and `hypot`. `None` for an op outside
/// the math library.
pub fn math2_f64(op: BinaryOp, x: f64, y: f64) -> Option<f64> {
    Some(match op {
        BinaryOp::Pow => libm::pow(x, y),
        BinaryOp::Atan2 => libm::atan2(x, y),
        BinaryOp::Hypot => libm::hypot(x, y),
        _ => return None,
    })
}

/// Whether `x` precedes `y` in the order of IEEE `minimum`: numeric, with
/// `-0 < +0`; ties (equal values) keep `x` first.
fn is_below(x: f64, y: f64) -> bool {
    x < y || (x == y && x.is_sign_negative() && y.is_sign_positive())
}
