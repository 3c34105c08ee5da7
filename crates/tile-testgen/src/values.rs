//! Random values of every dtype: numerically tame ones most of the time,
//! the interesting edges (wrap-around, NaN, infinities, signed zeros,
//! subnormals, the largest finite value) some of the time.

use crate::rng::SplitMix64;
use rand::RngCore;
use tile_ir::eval::{canonical_nan, round_f64};
use tile_ir::{DType, Scalar};

/// Where a value goes: memory may hold any bit pattern, IR constants print
/// every NaN as `nan`, so they only use the canonical NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// An element of a tensor argument.
    Memory,
    /// A constant written in the IR.
    Constant,
}

/// A random value of `dtype`; `special` is the probability of an edge value.
pub(crate) fn random_scalar(
    rng: &mut SplitMix64,
    dtype: DType,
    special: f64,
    place: Place,
) -> Scalar {
    if dtype == DType::Bool {
        return Scalar::Bool(rng.chance(0.5));
    }
    if !dtype.is_float() {
        let value = if rng.chance(special.max(0.05)) {
            i128::from(rng.next_u64() as i64)
        } else if dtype.is_signed_int() {
            rng.range(0, 16) as i128 - 8
        } else {
            rng.range(0, 16) as i128
        };
        return Scalar::wrapping_from_i128(dtype, value).unwrap_or(Scalar::zero(dtype));
    }
    if rng.chance(special) {
        return special_float(rng, dtype, place);
    }
    let value = if place == Place::Constant && rng.chance(0.5) {
        // Values the canonicalizer has identities for, and their neighbours.
        rng.pick(&[0.0, -0.0, 1.0, -1.0, 2.0, 0.5])
    } else if rng.chance(0.6) {
        (rng.range(0, 24) as f64 - 12.0) / 4.0
    } else {
        rng.unit() * 6.0 - 3.0
    };
    // The scale holds no negative values (they would all be its NaN).
    let value = if dtype == DType::F8E8M0 {
        value.abs()
    } else {
        value
    };
    round_f64(value, dtype).unwrap_or(Scalar::zero(dtype))
}

/// A special float of `dtype`.
fn special_float(rng: &mut SplitMix64, dtype: DType, place: Place) -> Scalar {
    let value = match rng.range(0, 5) {
        0 => return nan(rng, dtype, place),
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => -0.0,
        4 => return largest(dtype),
        _ => return Scalar::from_bits(dtype, 1),
    };
    // e4m3 and the MX formats have no infinity: rounding saturates to
    // their largest value.
    round_f64(value, dtype).unwrap_or(Scalar::zero(dtype))
}

/// A NaN: in memory with a random sign and payload, in the IR the canonical one.
fn nan(rng: &mut SplitMix64, dtype: DType, place: Place) -> Scalar {
    let canonical = canonical_nan(dtype).unwrap_or(Scalar::zero(dtype));
    if place == Place::Constant {
        return canonical;
    }
    let (exponent, mantissa) = match dtype {
        DType::F16 => (5, 10),
        DType::BF16 => (8, 7),
        DType::F32 => (8, 23),
        DType::F64 => (11, 52),
        DType::F8E5M2 => (5, 2),
        // e4m3's only NaNs are S.1111.111, e8m0's is 0xff; FP4 and FP6 have
        // none (the canonical "NaN" is the largest value, the sign bit
        // beyond their width).
        _ => return Scalar::from_bits(dtype, canonical.to_bits() | (rng.next_u64() & 0x80)),
    };
    let payload = (rng.next_u64() % ((1u64 << mantissa) - 1)) + 1;
    let sign = rng.next_u64() & 1;
    let bits = (sign << (exponent + mantissa)) | (((1u64 << exponent) - 1) << mantissa) | payload;
    Scalar::from_bits(dtype, bits)
}

/// The largest finite value of a float dtype.
fn largest(dtype: DType) -> Scalar {
    dtype
        .max_finite()
        .and_then(|max| round_f64(max, dtype))
        .unwrap_or(Scalar::zero(dtype))
}
