//! The two 8-bit float formats of the OCP FP8 specification.
//!
//! Conversions into FP8 round to nearest, ties to even, and saturate: a finite
//! value beyond the largest finite FP8 value, and an infinity, become that
//! largest value with the input's sign (PTX's `cvt.rn.satfinite`). NaN stays
//! NaN. Conversions out of FP8 are exact.

use crate::narrow::{narrow_float_type, Format, Specials};

const E4M3: Format = Format {
    width: 8,
    mantissa_bits: 3,
    bias: 7,
    max: 448.0,
    specials: Specials::OneNan(0x7f),
    nan_result: 0x7f,
};

const E5M2: Format = Format {
    width: 8,
    mantissa_bits: 2,
    bias: 15,
    max: 57344.0,
    specials: Specials::Ieee,
    nan_result: 0x7f,
};

narrow_float_type!(
    F8E4M3,
    E4M3,
    "An OCP FP8 E4M3 value: 4 exponent bits (bias 7), 3 mantissa bits, no infinities, largest finite 448."
);
narrow_float_type!(
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
