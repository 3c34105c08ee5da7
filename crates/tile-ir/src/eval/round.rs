//! Rounding exactly once to a float dtype.
//!
//! `half`'s own `f64 -> f16` and `f64 -> bf16` conversions round twice (via
//! `f32`, or by truncating the low mantissa bits), which can turn a value just
//! above a tie into a tie. Here a value is first rounded *to odd* into a
//! format with at least two more bits than the target (`f32` for `f16` and
//! `bf16`), which is known to make the final round-to-nearest-even exact:
//! round-to-odd keeps a sticky bit in the last place, so no tie is created.

use crate::dtype::DType;
use crate::f8::{F8E4M3, F8E5M2};
use crate::mx::{F4E2M1, F6E2M3, F6E3M2, F8E8M0};
use crate::scalar::Scalar;
use half::{bf16, f16};

/// What a NaN becomes in a float dtype: its canonical quiet NaN (positive,
/// only the quiet bit of the mantissa set; `0x7f` for both FP8 formats,
/// `0xff` for `f8e8m0`), or for FP4 and FP6, which hold no NaN, their largest
/// positive value (see [`crate::mx`]); `None` for a non-float.
pub fn canonical_nan(dtype: DType) -> Option<Scalar> {
    Some(match dtype {
        DType::F16 => Scalar::F16(f16::from_bits(0x7e00)),
        DType::BF16 => Scalar::BF16(bf16::from_bits(0x7fc0)),
        DType::F32 => Scalar::F32(f32::from_bits(0x7fc0_0000)),
        DType::F64 => Scalar::F64(f64::from_bits(0x7ff8_0000_0000_0000)),
        DType::F8E4M3 => Scalar::F8E4M3(F8E4M3::from_bits(0x7f)),
        DType::F8E5M2 => Scalar::F8E5M2(F8E5M2::from_bits(0x7f)),
        DType::F4E2M1 => Scalar::F4E2M1(F4E2M1::from_f64(f64::NAN)),
        DType::F6E2M3 => Scalar::F6E2M3(F6E2M3::from_f64(f64::NAN)),
        DType::F6E3M2 => Scalar::F6E3M2(F6E3M2::from_f64(f64::NAN)),
        DType::F8E8M0 => Scalar::F8E8M0(F8E8M0::from_bits(F8E8M0::NAN_BITS)),
        _ => return None,
    })
}

/// `x` rounded once to the float `dtype`: to nearest, ties to even; FP8 and
/// the MX elements saturate to their largest finite value (see [`crate::f8`],
/// [`crate::mx`]); into `f8e8m0`, toward zero (its own rules, in
/// [`crate::mx`]); a NaN becomes [`canonical_nan`]. `None` when `dtype` is
/// not a float.
pub fn round_f64(x: f64, dtype: DType) -> Option<Scalar> {
    if x.is_nan() {
        return canonical_nan(dtype);
    }
    Some(match dtype {
        DType::F64 => Scalar::F64(x),
        DType::F32 => Scalar::F32(x as f32),
        DType::F16 => Scalar::F16(f16::from_f32(f64_to_f32_odd(x))),
        DType::BF16 => Scalar::BF16(bf16::from_f32(f64_to_f32_odd(x))),
        DType::F8E4M3 => Scalar::F8E4M3(F8E4M3::from_f64(x)),
        DType::F8E5M2 => Scalar::F8E5M2(F8E5M2::from_f64(x)),
        DType::F4E2M1 => Scalar::F4E2M1(F4E2M1::from_f64(x)),
        DType::F6E2M3 => Scalar::F6E2M3(F6E2M3::from_f64(x)),
        DType::F6E3M2 => Scalar::F6E3M2(F6E3M2::from_f64(x)),
        DType::F8E8M0 => Scalar::F8E8M0(F8E8M0::from_f64(x)),
        _ => return None,
    })
}

/// The integer `v` rounded once to the float `dtype` (as [`round_f64`]), or
/// `None` when `dtype` is not a float.
pub(crate) fn int_to_float(v: i128, dtype: DType) -> Option<Scalar> {
    match dtype {
        // Rust's integer-to-float `as` conversions round to nearest, ties to even.
        DType::F64 => Some(Scalar::F64(v as f64)),
        DType::F32 => Some(Scalar::F32(v as f32)),
        _ => round_f64(f64::from(int_to_f32_odd(v)), dtype),
    }
}

/// `x` rounded to odd into `f32`: `x` itself when representable, otherwise
/// whichever of its two `f32` neighbours has an odd last mantissa bit (beyond
/// the largest finite value, `±f32::MAX`).
fn f64_to_f32_odd(x: f64) -> f32 {
    let nearest = x as f32;
    if x.is_nan() || f64::from(nearest) == x || nearest.to_bits() & 1 == 1 {
        return nearest;
    }
    // The nearest value is even and inexact: the other neighbour is odd.
    let bits = nearest.to_bits();
    if f64::from(nearest).abs() < x.abs() {
        f32::from_bits(bits + 1)
    } else {
        f32::from_bits(bits - 1)
    }
}

/// The integer `v` rounded to odd into `f32` (at most 2^127 in magnitude, so
/// never infinite).
fn int_to_f32_odd(v: i128) -> f32 {
    let magnitude = v.unsigned_abs();
    let width = 128 - magnitude.leading_zeros();
    let shift = width.saturating_sub(24);
    let mut kept = magnitude >> shift;
    if shift > 0 && magnitude & ((1u128 << shift) - 1) != 0 {
        kept |= 1;
    }
    // `kept` has at most 24 bits and the scale is a power of two: exact.
    let value = kept as f32 * 2f32.powi(shift as i32);
    if v < 0 {
        -value
    } else {
        value
    }
}

/// `x + y` rounded to odd into `f64` (for finite `x` and `y`): the sum is
/// split exactly into `s + e` (Knuth's TwoSum); when `e != 0` and `s` is even,
/// `s` moves one ulp towards `e`.
pub(crate) fn sum_to_odd(x: f64, y: f64) -> f64 {
    let s = x + y;
    if !s.is_finite() {
        return s;
    }
    let bp = s - x;
    let e = (x - (s - bp)) + (y - bp);
    if e == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    let bits = s.to_bits();
    // A non-zero error means s != 0; move away from zero when e has s's sign.
    if (e > 0.0) == (s > 0.0) {
        f64::from_bits(bits + 1)
    } else {
        f64::from_bits(bits - 1)
    }
}
