//! Element types of scalars, tiles and tensors.

use std::fmt;
use std::str::FromStr;

/// The element type of a scalar, tile or tensor.
///
/// Text names are the lower-case variant names: `bool`, `i8` … `u64`, `f16`,
/// `bf16`, `f32`, `f64`, `f8e4m3`, `f8e5m2`, `f4e2m1`, `f6e2m3`, `f6e3m2`,
/// `f8e8m0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// A truth value, stored as one byte (0 or 1).
    Bool,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE 754 binary16.
    F16,
    /// bfloat16: the upper half of an IEEE binary32.
    BF16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// OCP FP8 E4M3 (the "fn" variant: no infinities, one NaN pattern, max 448).
    F8E4M3,
    /// OCP FP8 E5M2 (IEEE-like: infinities and NaNs, max 57344).
    F8E5M2,
    /// OCP MX FP4 E2M1 (no infinities or NaN, max 6), one per byte.
    F4E2M1,
    /// OCP MX FP6 E2M3 (no infinities or NaN, max 7.5), one per byte.
    F6E2M3,
    /// OCP MX FP6 E3M2 (no infinities or NaN, max 28), one per byte.
    F6E3M2,
    /// OCP MX E8M0 scale: an unsigned power of two 2^-127 ..= 2^127, or NaN.
    F8E8M0,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 19] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::F8E4M3,
        DType::F8E5M2,
        DType::F4E2M1,
        DType::F6E2M3,
        DType::F6E3M2,
        DType::F8E8M0,
    ];

    /// The text name of this dtype.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
            DType::F4E2M1 => "f4e2m1",
            DType::F6E2M3 => "f6e2m3",
            DType::F6E3M2 => "f6e3m2",
            DType::F8E8M0 => "f8e8m0",
        }
    }

    /// The storage size of one element in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::F8E4M3 | DType::F8E5M2 => 1,
            DType::F4E2M1 | DType::F6E2M3 | DType::F6E3M2 | DType::F8E8M0 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// The width in bits of one element's register and storage (1 for
    /// `bool`; 8 for the narrow floats, whose values sit in the low
    /// [`Self::value_bits`]).
    pub fn bits(self) -> u32 {
        match self {
            DType::Bool => 1,
            other => other.size_bytes() as u32 * 8,
        }
    }

    /// The width in bits of the format itself: 4 for `f4e2m1`, 6 for the
    /// FP6 formats, [`Self::bits`] otherwise.
    pub fn value_bits(self) -> u32 {
        match self {
            DType::F4E2M1 => 4,
            DType::F6E2M3 | DType::F6E3M2 => 6,
            other => other.bits(),
        }
    }

    /// The sign bit of a float dtype's pattern; `None` for the unsigned
    /// `f8e8m0` and for non-floats.
    pub fn sign_bit(self) -> Option<u64> {
        (self.is_float() && self != DType::F8E8M0).then(|| 1 << (self.value_bits() - 1))
    }

    /// The largest finite value of a float dtype.
    pub fn max_finite(self) -> Option<f64> {
        Some(match self {
            DType::F16 => 65504.0,
            DType::BF16 => 3.3895313892515355e38,
            DType::F32 => f64::from(f32::MAX),
            DType::F64 => f64::MAX,
            DType::F8E4M3 => 448.0,
            DType::F8E5M2 => 57344.0,
            DType::F4E2M1 => 6.0,
            DType::F6E2M3 => 7.5,
            DType::F6E3M2 => 28.0,
            DType::F8E8M0 => 2f64.powi(127),
            _ => return None,
        })
    }

    /// Whether this float dtype holds infinities.
    pub fn has_infinity(self) -> bool {
        self.is_float() && !matches!(self, DType::F8E4M3) && !self.is_mx()
    }

    /// Whether this is a floating-point dtype.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64) || self.is_narrow_float()
    }

    /// Whether this is an integer dtype (signed or unsigned; not `bool`).
    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Whether this is a signed integer dtype.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// Whether this is an unsigned integer dtype.
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// Whether this is `bool`.
    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }

    /// Whether this is one of the two FP8 formats.
    pub fn is_f8(self) -> bool {
        matches!(self, DType::F8E4M3 | DType::F8E5M2)
    }

    /// Whether this is one of the four OCP MX formats (elements and scale).
    pub fn is_mx(self) -> bool {
        matches!(
            self,
            DType::F4E2M1 | DType::F6E2M3 | DType::F6E3M2 | DType::F8E8M0
        )
    }

    /// Whether this is a float narrower than 16 bits (FP8 or MX): one byte
    /// per value, conversions into it saturating.
    pub fn is_narrow_float(self) -> bool {
        self.is_f8() || self.is_mx()
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown dtype name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown dtype `{0}`; expected one of bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2, f4e2m1, f6e2m3, f6e3m2, f8e8m0")]
pub struct UnknownDType(pub String);

impl FromStr for DType {
    type Err = UnknownDType;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDType(s.to_string()))
    }
}
