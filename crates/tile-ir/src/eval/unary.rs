//! Elementwise ops of one operand.

use super::round::round_f64;
use super::EvalError;
use crate::dtype::DType;
use crate::ops::UnaryOp;
use crate::scalar::Scalar;

/// `op` applied to `x`.
///
/// Integers: `neg` and `abs` wrap (`abs(MIN) == MIN`), `not` is bitwise.
/// `bool`: only `not`. Floats: `neg` and `abs` flip or clear the sign bit
/// (so they keep infinities, even in FP8); otherwise the exact result
/// (`floor`, `ceil`), the correctly rounded `f64` result (`sqrt`), `1 / sqrt(x)` in
/// `f64` (`rsqrt`), or the math library's `f64` value ([`math_f64`]) on the
/// exactly widened operand, rounded once to the dtype; a NaN result is the
/// canonical NaN.
pub fn unary(op: UnaryOp, x: Scalar) -> Result<Scalar, EvalError> {
    let dtype = x.dtype();
    let unsupported = Err(EvalError::Unsupported {
        op: op.name(),
        dtype,
    });
    if let Some(v) = x.to_i128() {
        let result = match op {
            UnaryOp::Not if dtype.is_bool() => return Ok(Scalar::Bool(v == 0)),
            _ if dtype.is_bool() => return unsupported,
            UnaryOp::Not => Scalar::from_bits(dtype, !x.to_bits()),
            UnaryOp::Neg => Scalar::wrapping_from_i128(dtype, -v).unwrap_or(x),
            UnaryOp::Abs if dtype.is_signed_int() => {
                Scalar::wrapping_from_i128(dtype, v.abs()).unwrap_or(x)
            }
            _ => return unsupported,
        };
        return Ok(result);
    }
    if dtype == DType::F8E8M0 {
        // A scale, not an operand of arithmetic (`rules::unary_dtype`).
        return unsupported;
    }
    if op == UnaryOp::RoundTf32 {
        return match x {
            Scalar::F32(v) => Ok(Scalar::F32(round_tf32(v))),
            _ => unsupported,
        };
    }
    let v = x.to_f64();
    match (op, dtype.sign_bit()) {
        (UnaryOp::Not | UnaryOp::RoundTf32, _) => return unsupported,
        // Sign operations: exact, so infinities stay infinite even in FP8.
        (UnaryOp::Neg, Some(sign)) if !v.is_nan() => {
            return Ok(Scalar::from_bits(dtype, x.to_bits() ^ sign))
        }
        (UnaryOp::Abs, Some(sign)) if !v.is_nan() => {
            return Ok(Scalar::from_bits(dtype, x.to_bits() & !sign))
        }
        // `f8e8m0` has no sign: every value is its own magnitude.
        (UnaryOp::Abs, None) => return Ok(x),
        _ => {}
    }
    let exact = match op {
        UnaryOp::Neg | UnaryOp::Abs => f64::NAN,
        UnaryOp::Floor => v.floor(),
        UnaryOp::Ceil => v.ceil(),
        UnaryOp::Round => v.round(),
        UnaryOp::RoundTiesEven => v.round_ties_even(),
        UnaryOp::Sqrt => v.sqrt(),
        UnaryOp::Rsqrt => 1.0 / v.sqrt(),
        _ => math_f64(op, v).ok_or(EvalError::Unsupported {
            op: op.name(),
            dtype,
        })?,
    };
    round_f64(exact, dtype).ok_or(EvalError::Unsupported {
        op: op.name(),
        dtype,
    })
}

/// The `f64` value of the math-library function `op` ([`UnaryOp::MATH`])
/// at `v`: `libm`'s function (each within an ulp of the exact value; NaN
/// for `acosh` below 1, where `libm` is not), and for `sigmoid` the `f64`
/// formula `1 / (1 + e^−v)` with `libm`'s `exp` (Triton's `tl.sigmoid`),
/// written `e^v / (1 + e^v)` for a negative `v` so that no `exp` overflows
/// where the result is a subnormal. `None` for an op outside the
/// math library.
pub fn math_f64(op: UnaryOp, v: f64) -> Option<f64> {
    Some(match op {
        UnaryOp::Exp => libm::exp(v),
        UnaryOp::Exp2 => libm::exp2(v),
        UnaryOp::Log => libm::log(v),
        UnaryOp::Log2 => libm::log2(v),
        UnaryOp::Sin => libm::sin(v),
        UnaryOp::Cos => libm::cos(v),
        UnaryOp::Tan => libm::tan(v),
        UnaryOp::Tanh => libm::tanh(v),
        UnaryOp::Erf => libm::erf(v),
        UnaryOp::Erfc => libm::erfc(v),
        UnaryOp::Asin => libm::asin(v),
        UnaryOp::Acos => libm::acos(v),
        UnaryOp::Atan => libm::atan(v),
        UnaryOp::Sinh => libm::sinh(v),
        UnaryOp::Cosh => libm::cosh(v),
        UnaryOp::Asinh => libm::asinh(v),
        // `libm`'s acosh answers finite garbage for x in (−2²⁶, −2].
        UnaryOp::Acosh if v < 1.0 => f64::NAN,
        UnaryOp::Acosh => libm::acosh(v),
        UnaryOp::Atanh => libm::atanh(v),
        UnaryOp::Sigmoid if v < 0.0 => {
            let e = libm::exp(v);
            e / (1.0 + e)
        }
        UnaryOp::Sigmoid => 1.0 / (1.0 + libm::exp(-v)),
        UnaryOp::Log1p => libm::log1p(v),
        UnaryOp::Expm1 => libm::expm1(v),
        UnaryOp::Cbrt => libm::cbrt(v),
        UnaryOp::Neg
        | UnaryOp::Not
        | UnaryOp::Sqrt
        | UnaryOp::Rsqrt
        | UnaryOp::Abs
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round
        | UnaryOp::RoundTiesEven
        | UnaryOp::RoundTf32 => return None,
    })
}

/// `v` rounded to TF32 (10 fraction bits) to nearest, ties away from zero,
/// as PTX `cvt.rna.tf32.f32` rounds: half of the dropped unit is added to
/// the magnitude's bits and the 13 low bits cleared, which carries into the
/// exponent when the fraction overflows (to infinity above the largest
/// TF32). A NaN is the canonical NaN.
pub fn round_tf32(v: f32) -> f32 {
    if v.is_nan() {
        return f32::NAN;
    }
    f32::from_bits(v.to_bits().wrapping_add(0x1000) & !0x1fff)
}
