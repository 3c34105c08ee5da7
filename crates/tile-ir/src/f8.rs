//! The two 8-bit float formats of the OCP FP8 specification.
//!
//! Conversions into FP8 round to nearest, ties to even, and saturate: a finite
//! value beyond the largest finite FP8 value, and an infinity, become that
//! largest value with the input's sign (PTX's `cvt.rn.satfinite`). NaN stays
//! NaN. Conversions out of FP8 are exact.

use std::fmt;

/// The parameters of a small binary float format.
struct Format {
    mantissa_bits: u32,
    bias: i32,
    /// The largest finite magnitude.
    max: f64,
    /// The bit pattern (without sign) of the canonical NaN.
    nan: u8,
    /// Whether the all-ones exponent encodes infinities and NaNs (IEEE-like).
    ieee_specials: bool,
}

const E4M3: Format = Format {
    mantissa_bits: 3,
    bias: 7,
    max: 448.0,
    nan: 0x7f,
    ieee_specials: false,
};

const E5M2: Format = Format {
    mantissa_bits: 2,
    bias: 15,
    max: 57344.0,
    nan: 0x7f,
    ieee_specials: true,
};

impl Format {
    fn min_normal_exponent(&self) -> i32 {
        1 - self.bias
    }

    fn decode(&self, bits: u8) -> f64 {
        let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
        let exp_field = i32::from((bits & 0x7f) >> self.mantissa_bits);
        let mantissa = f64::from(bits & ((1 << self.mantissa_bits) - 1));
        let exp_max: i32 = 0x7f >> self.mantissa_bits;
        let frac_scale = f64::from(1u32 << self.mantissa_bits);
        if self.ieee_specials && exp_field == exp_max {
            return if mantissa == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        if !self.ieee_specials && bits & 0x7f == self.nan {
            return f64::NAN;
        }
        if exp_field == 0 {
            sign * mantissa / frac_scale * 2f64.powi(self.min_normal_exponent())
        } else {
            sign * (1.0 + mantissa / frac_scale) * 2f64.powi(exp_field - self.bias)
        }
    }

    fn encode(&self, x: f64) -> u8 {
        if x.is_nan() {
            return self.nan;
        }
        let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = x.abs();
        if a == 0.0 {
            return sign;
        }
        // The spacing of representable values around `a`.
        let exponent = exponent_of(a).max(self.min_normal_exponent());
        let quantum = 2f64.powi(exponent - self.mantissa_bits as i32);
        let rounded = (a / quantum).round_ties_even() * quantum;
        let value = rounded.min(self.max);
        let exponent = exponent_of(value);
        if value == 0.0 {
            return sign;
        }
        let frac_scale = f64::from(1u32 << self.mantissa_bits);
        if exponent < self.min_normal_exponent() {
            let mantissa = value / 2f64.powi(self.min_normal_exponent()) * frac_scale;
            return sign | mantissa as u8;
        }
        let mantissa = (value / 2f64.powi(exponent) - 1.0) * frac_scale;
        let exp_field = (exponent + self.bias) as u8;
        sign | (exp_field << self.mantissa_bits) | mantissa as u8
    }
}

/// `floor(log2(a))` for a positive finite `a`, exact (read from the bits).
fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal f64: far below any FP8 value; its exact exponent is not needed
        // beyond being smaller than every FP8 exponent.
        -1075
    } else {
        biased - 1023
    }
}

macro_rules! f8_type {
    ($name:ident, $format:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name(u8);

        impl $name {
            /// The value with the given bit pattern.
            pub const fn from_bits(bits: u8) -> Self {
                $name(bits)
            }

            /// The bit pattern of this value.
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// Rounds `x` to nearest (ties to even), saturating to the largest
            /// finite value; NaN maps to NaN.
            pub fn from_f64(x: f64) -> Self {
                $name($format.encode(x))
            }

            /// Rounds `x` as [`Self::from_f64`] does (`f32` widens to `f64` exactly).
            pub fn from_f32(x: f32) -> Self {
                Self::from_f64(f64::from(x))
            }

            /// The exact value.
            pub fn to_f64(self) -> f64 {
                $format.decode(self.0)
            }

            /// The exact value (every FP8 value is an `f32`).
            pub fn to_f32(self) -> f32 {
                self.to_f64() as f32
            }

            /// Whether this is a NaN pattern.
            pub fn is_nan(self) -> bool {
                self.to_f64().is_nan()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    };
}

f8_type!(
    F8E4M3,
    E4M3,
    "An OCP FP8 E4M3 value: 4 exponent bits (bias 7), 3 mantissa bits, no infinities, largest finite 448."
);
f8_type!(
    F8E5M2,
    E5M2,
    "An OCP FP8 E5M2 value: 5 exponent bits (bias 15), 2 mantissa bits, with infinities, largest finite 57344."
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_e4m3_pattern_round_trips() {
        for bits in 0..=255u8 {
            let v = F8E4M3::from_bits(bits);
            if v.is_nan() {
                assert!(F8E4M3::from_f64(v.to_f64()).is_nan());
            } else {
                assert_eq!(F8E4M3::from_f64(v.to_f64()).to_bits(), bits, "{bits:#04x}");
            }
        }
    }

    #[test]
    fn every_e5m2_pattern_round_trips() {
        for bits in 0..=255u8 {
            let v = F8E5M2::from_bits(bits);
            if v.is_nan() {
                assert!(F8E5M2::from_f64(v.to_f64()).is_nan());
            } else if v.to_f64().is_infinite() {
                // Saturating conversion: infinity becomes the largest finite value.
                assert_eq!(F8E5M2::from_f64(v.to_f64()).to_f64().abs(), 57344.0);
            } else {
                assert_eq!(F8E5M2::from_f64(v.to_f64()).to_bits(), bits, "{bits:#04x}");
            }
        }
    }

    #[test]
    fn known_values() {
        assert_eq!(F8E4M3::from_f64(448.0).to_bits(), 0x7e);
        assert_eq!(F8E4M3::from_f64(1e6).to_f64(), 448.0);
        assert_eq!(F8E4M3::from_f64(f64::NEG_INFINITY).to_f64(), -448.0);
        assert_eq!(F8E4M3::from_f64(1.0).to_bits(), 0x38);
        assert_eq!(F8E4M3::from_bits(0x01).to_f64(), 2f64.powi(-9));
        assert_eq!(F8E5M2::from_f64(1.0).to_bits(), 0x3c);
        assert_eq!(F8E5M2::from_bits(0x7c).to_f64(), f64::INFINITY);
        assert_eq!(F8E5M2::from_bits(0x01).to_f64(), 2f64.powi(-16));
        assert_eq!(F8E5M2::from_f64(1e9).to_f64(), 57344.0);
    }

    #[test]
    fn rounds_to_nearest_even() {
        // 1.0625 lies halfway between 1.0 and 1.125 in E4M3: ties go to the even 1.0.
        assert_eq!(F8E4M3::from_f64(1.0625).to_f64(), 1.0);
        // 1.1875 lies halfway between 1.125 and 1.25: ties go to the even 1.25.
        assert_eq!(F8E4M3::from_f64(1.1875).to_f64(), 1.25);
        // Just above the halfway point rounds up.
        assert_eq!(F8E4M3::from_f64(1.0625 + 1e-9).to_f64(), 1.125);
        // Halfway between the largest subnormal pair rounds to even.
        assert_eq!(F8E4M3::from_f64(1.5 * 2f64.powi(-9)).to_bits(), 0x02);
        // Below half the smallest subnormal flushes to a signed zero.
        assert_eq!(F8E4M3::from_f64(-2f64.powi(-11)).to_bits(), 0x80);
    }
}
