//! Typed scalar values: constants in the IR and elements in the interpreter.

use crate::dtype::DType;
use crate::f8::{F8E4M3, F8E5M2};
use crate::mx::{F4E2M1, F6E2M3, F6E3M2, F8E8M0};
use half::{bf16, f16};
use std::fmt;

/// One value of one [`DType`].
///
/// Equality and hashing are *bitwise* (`dtype` and bit pattern): two NaNs with
/// the same payload are equal and `0.0 != -0.0`. That is the identity an IR
/// attribute needs (CSE, round trips); numeric comparison is an op's business.
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    /// A `bool`.
    Bool(bool),
    /// An `i8`.
    I8(i8),
    /// An `i16`.
    I16(i16),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// A `u8`.
    U8(u8),
    /// A `u16`.
    U16(u16),
    /// A `u32`.
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// An `f16`.
    F16(f16),
    /// A `bf16`.
    BF16(bf16),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// An `f8e4m3`.
    F8E4M3(F8E4M3),
    /// An `f8e5m2`.
    F8E5M2(F8E5M2),
    /// An `f4e2m1`.
    F4E2M1(F4E2M1),
    /// An `f6e2m3`.
    F6E2M3(F6E2M3),
    /// An `f6e3m2`.
    F6E3M2(F6E3M2),
    /// An `f8e8m0`.
    F8E8M0(F8E8M0),
}

impl Scalar {
    /// The dtype of this value.
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::I8(_) => DType::I8,
            Scalar::I16(_) => DType::I16,
            Scalar::I32(_) => DType::I32,
            Scalar::I64(_) => DType::I64,
            Scalar::U8(_) => DType::U8,
            Scalar::U16(_) => DType::U16,
            Scalar::U32(_) => DType::U32,
            Scalar::U64(_) => DType::U64,
            Scalar::F16(_) => DType::F16,
            Scalar::BF16(_) => DType::BF16,
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
            Scalar::F8E4M3(_) => DType::F8E4M3,
            Scalar::F8E5M2(_) => DType::F8E5M2,
            Scalar::F4E2M1(_) => DType::F4E2M1,
            Scalar::F6E2M3(_) => DType::F6E2M3,
            Scalar::F6E3M2(_) => DType::F6E3M2,
            Scalar::F8E8M0(_) => DType::F8E8M0,
        }
    }

    /// The bit pattern, zero-extended to 64 bits (`bool` is 0 or 1).
    pub fn to_bits(self) -> u64 {
        match self {
            Scalar::Bool(v) => u64::from(v),
            Scalar::I8(v) => u64::from(v as u8),
            Scalar::I16(v) => u64::from(v as u16),
            Scalar::I32(v) => u64::from(v as u32),
            Scalar::I64(v) => v as u64,
            Scalar::U8(v) => u64::from(v),
            Scalar::U16(v) => u64::from(v),
            Scalar::U32(v) => u64::from(v),
            Scalar::U64(v) => v,
            Scalar::F16(v) => u64::from(v.to_bits()),
            Scalar::BF16(v) => u64::from(v.to_bits()),
            Scalar::F32(v) => u64::from(v.to_bits()),
            Scalar::F64(v) => v.to_bits(),
            Scalar::F8E4M3(v) => u64::from(v.to_bits()),
            Scalar::F8E5M2(v) => u64::from(v.to_bits()),
            Scalar::F4E2M1(v) => u64::from(v.to_bits()),
            Scalar::F6E2M3(v) => u64::from(v.to_bits()),
            Scalar::F6E3M2(v) => u64::from(v.to_bits()),
            Scalar::F8E8M0(v) => u64::from(v.to_bits()),
        }
    }

    /// The value of `dtype` whose bit pattern is the low bits of `bits`
    /// (for `bool`, any non-zero pattern is `true`; for FP4 and FP6, the low
    /// [`DType::value_bits`] of the byte).
    pub fn from_bits(dtype: DType, bits: u64) -> Scalar {
        match dtype {
            DType::Bool => Scalar::Bool(bits != 0),
            DType::I8 => Scalar::I8(bits as u8 as i8),
            DType::I16 => Scalar::I16(bits as u16 as i16),
            DType::I32 => Scalar::I32(bits as u32 as i32),
            DType::I64 => Scalar::I64(bits as i64),
            DType::U8 => Scalar::U8(bits as u8),
            DType::U16 => Scalar::U16(bits as u16),
            DType::U32 => Scalar::U32(bits as u32),
            DType::U64 => Scalar::U64(bits),
            DType::F16 => Scalar::F16(f16::from_bits(bits as u16)),
            DType::BF16 => Scalar::BF16(bf16::from_bits(bits as u16)),
            DType::F32 => Scalar::F32(f32::from_bits(bits as u32)),
            DType::F64 => Scalar::F64(f64::from_bits(bits)),
            DType::F8E4M3 => Scalar::F8E4M3(F8E4M3::from_bits(bits as u8)),
            DType::F8E5M2 => Scalar::F8E5M2(F8E5M2::from_bits(bits as u8)),
            DType::F4E2M1 => Scalar::F4E2M1(F4E2M1::from_bits(bits as u8)),
            DType::F6E2M3 => Scalar::F6E2M3(F6E2M3::from_bits(bits as u8)),
            DType::F6E3M2 => Scalar::F6E3M2(F6E3M2::from_bits(bits as u8)),
            DType::F8E8M0 => Scalar::F8E8M0(F8E8M0::from_bits(bits as u8)),
        }
    }

    /// The zero of `dtype` (`false` for `bool`, `+0.0` for floats): the
    /// all-zeros pattern, which in `f8e8m0` (no zero) is 2^-127.
    pub fn zero(dtype: DType) -> Scalar {
        Scalar::from_bits(dtype, 0)
    }

    /// Reads one little-endian element of `dtype` from the start of `bytes`,
    /// or `None` when `bytes` is shorter than one element.
    pub fn read_le(dtype: DType, bytes: &[u8]) -> Option<Scalar> {
        let size = dtype.size_bytes();
        let chunk = bytes.get(..size)?;
        let mut word = [0u8; 8];
        word[..size].copy_from_slice(chunk);
        Some(Scalar::from_bits(dtype, u64::from_le_bytes(word)))
    }

    /// Writes this value little-endian into the start of `bytes`, or returns
    /// `None` when `bytes` is shorter than one element.
    pub fn write_le(self, bytes: &mut [u8]) -> Option<()> {
        let size = self.dtype().size_bytes();
        let chunk = bytes.get_mut(..size)?;
        chunk.copy_from_slice(&self.to_bits().to_le_bytes()[..size]);
        Some(())
    }

    /// The value as an `f64`: exact for every float dtype, for `bool` (0 or 1)
    /// and for integers up to 2^53 in magnitude (larger ones round to nearest).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(v) => f64::from(u8::from(v)),
            Scalar::I8(v) => f64::from(v),
            Scalar::I16(v) => f64::from(v),
            Scalar::I32(v) => f64::from(v),
            Scalar::I64(v) => v as f64,
            Scalar::U8(v) => f64::from(v),
            Scalar::U16(v) => f64::from(v),
            Scalar::U32(v) => f64::from(v),
            Scalar::U64(v) => v as f64,
            Scalar::F16(v) => v.to_f64(),
            Scalar::BF16(v) => v.to_f64(),
            Scalar::F32(v) => f64::from(v),
            Scalar::F64(v) => v,
            Scalar::F8E4M3(v) => v.to_f64(),
            Scalar::F8E5M2(v) => v.to_f64(),
            Scalar::F4E2M1(v) => v.to_f64(),
            Scalar::F6E2M3(v) => v.to_f64(),
            Scalar::F6E3M2(v) => v.to_f64(),
            Scalar::F8E8M0(v) => v.to_f64(),
        }
    }

    /// The value of an integer or `bool` scalar as an `i128` (exact), or `None`
    /// for a float.
    pub fn to_i128(self) -> Option<i128> {
        Some(match self {
            Scalar::Bool(v) => i128::from(v),
            Scalar::I8(v) => i128::from(v),
            Scalar::I16(v) => i128::from(v),
            Scalar::I32(v) => i128::from(v),
            Scalar::I64(v) => i128::from(v),
            Scalar::U8(v) => i128::from(v),
            Scalar::U16(v) => i128::from(v),
            Scalar::U32(v) => i128::from(v),
            Scalar::U64(v) => i128::from(v),
            _ => return None,
        })
    }

    /// The integer of `dtype` that is `value` modulo 2^bits (two's complement
    /// wrap-around), `value != 0` for `bool`, or `None` when `dtype` is a float.
    pub fn wrapping_from_i128(dtype: DType, value: i128) -> Option<Scalar> {
        if dtype.is_float() {
            return None;
        }
        if dtype == DType::Bool {
            return Some(Scalar::Bool(value != 0));
        }
        Some(Scalar::from_bits(dtype, value as u64))
    }

    /// Whether this is a float NaN.
    pub fn is_nan(self) -> bool {
        self.dtype().is_float() && self.to_f64().is_nan()
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Self) -> bool {
        self.dtype() == other.dtype() && self.to_bits() == other.to_bits()
    }
}

impl Eq for Scalar {}

impl std::hash::Hash for Scalar {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.dtype().hash(state);
        self.to_bits().hash(state);
    }
}

/// The text form of the value alone (its dtype is printed elsewhere): `true`,
/// `-3`, and floats in the shortest form that reads back to the same value
/// (`1.5`, `1e-8`, `nan`, `inf`, `-inf`). A float always shows a `.`, an
/// exponent or a special name, so it never reads back as an integer.
impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Bool(v) => write!(f, "{v}"),
            Scalar::F64(v) => write_float(f, v),
            // Rounding into E8M0 is toward zero: a shorter f32 text could
            // read back just below the power of two.
            Scalar::F8E8M0(v) => write_float(f, v.to_f64()),
            other if other.dtype().is_float() => write_float(f, other.to_f64() as f32),
            other => match other.to_i128() {
                Some(v) => write!(f, "{v}"),
                None => unreachable!("every non-float scalar is an integer or bool"),
            },
        }
    }
}

fn write_float<T: fmt::Debug + Into<f64> + Copy>(f: &mut fmt::Formatter<'_>, v: T) -> fmt::Result {
    let wide: f64 = v.into();
    if wide.is_nan() {
        f.write_str("nan")
    } else if wide.is_infinite() {
        f.write_str(if wide > 0.0 { "inf" } else { "-inf" })
    } else {
        // Rust's Debug for floats prints the shortest text that reads back to
        // the same value, with a `.0` or an exponent.
        write!(f, "{v:?}")
    }
}
