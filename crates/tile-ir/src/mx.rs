//! The element and scale formats of the OCP Microscaling (MX) specification:
//! FP4 E2M1, FP6 E2M3 and E3M2, and the E8M0 block scale.
//!
//! The element formats have no infinities and no NaN: every pattern is a
//! number. Conversions into them round to nearest, ties to even, and saturate
//! (a finite value past the largest, and an infinity, become the largest with
//! the input's sign, as PTX's `cvt.rn.satfinite` does); a NaN, which they
//! cannot hold, becomes the largest positive value. In memory and in
//! registers each value takes one byte, its bits in the low bits (the
//! `f8f6f4` tensor-core instructions read FP6 there and FP4 from bits 5..2,
//! where the GPU emitter moves it).
//!
//! E8M0 is an unsigned power of two, 2^(bits − 127) for bits 0..=254, with
//! 255 the NaN and no zero or infinity. Converting into it rounds toward
//! zero, so `x.cast::<f8e8m0>()` is 2^⌊log₂ x⌋, the shared scale OCP MX
//! computes from a block's largest magnitude; it saturates (zero and values
//! below 2^−127 become 2^−127, values from 2^128 and +∞ become 2^127), and a
//! NaN or a negative value becomes the NaN.

use crate::narrow::{exponent_of, narrow_float_type, Format, Specials};

const E2M1: Format = Format {
    width: 4,
    mantissa_bits: 1,
    bias: 1,
    max: 6.0,
    specials: Specials::Finite,
    nan_result: 0x7,
};

const E2M3: Format = Format {
    width: 6,
    mantissa_bits: 3,
    bias: 1,
    max: 7.5,
    specials: Specials::Finite,
    nan_result: 0x1f,
};

const E3M2: Format = Format {
    width: 6,
    mantissa_bits: 2,
    bias: 3,
    max: 28.0,
    specials: Specials::Finite,
    nan_result: 0x1f,
};

narrow_float_type!(
    F4E2M1,
    E2M1,
    "An OCP MX FP4 E2M1 value: 2 exponent bits (bias 1), 1 mantissa bit, largest 6; the values are ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}."
);
narrow_float_type!(
    F6E2M3,
    E2M3,
    "An OCP MX FP6 E2M3 value: 2 exponent bits (bias 1), 3 mantissa bits, largest 7.5."
);
narrow_float_type!(
    F6E3M2,
    E3M2,
    "An OCP MX FP6 E3M2 value: 3 exponent bits (bias 3), 2 mantissa bits, largest 28."
);

impl F4E2M1 {
    /// `values` packed two to a byte, as `pack_fp4` packs them along an
    /// axis: value `2i` in byte `i`'s low four bits, value `2i + 1` in its
    /// high four (PyTorch's `float4_e2m1fn_x2`); an odd count leaves the
    /// last byte's high bits zero.
    pub fn pack_pairs(values: &[F4E2M1]) -> Vec<u8> {
        values
            .chunks(2)
            .map(|pair| {
                let high = pair.get(1).map_or(0, |v| v.to_bits());
                pair[0].to_bits() | (high << 4)
            })
            .collect()
    }

    /// The two values of each byte of `bytes`, low four bits first: what
    /// `unpack_fp4` reads.
    pub fn unpack_pairs(bytes: &[u8]) -> Vec<F4E2M1> {
        bytes
            .iter()
            .flat_map(|&b| [F4E2M1::from_bits(b), F4E2M1::from_bits(b >> 4)])
            .collect()
    }
}

/// An OCP MX E8M0 scale: the power of two 2^(bits − 127), or NaN for 255.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F8E8M0(u8);

impl F8E8M0 {
    /// The bit pattern of NaN.
    pub const NAN_BITS: u8 = 0xff;
    /// The exponent bias.
    const BIAS: i32 = 127;

    /// The value with the given bit pattern.
    pub const fn from_bits(bits: u8) -> Self {
        F8E8M0(bits)
    }

    /// The bit pattern of this value.
    pub const fn to_bits(self) -> u8 {
        self.0
    }

    /// 2^⌊log₂ x⌋, saturated into 2^−127 ..= 2^127; NaN for a NaN or a
    /// negative `x` (see the module documentation).
    pub fn from_f64(x: f64) -> Self {
        if x.is_nan() || x < 0.0 {
            return F8E8M0(Self::NAN_BITS);
        }
        if x == 0.0 {
            return F8E8M0(0);
        }
        let exponent = if x.is_infinite() {
            Self::BIAS
        } else {
            exponent_of(x)
        };
        F8E8M0((exponent + Self::BIAS).clamp(0, 254) as u8)
    }

    /// Converts `x` as [`Self::from_f64`] does (`f32` widens to `f64` exactly).
    pub fn from_f32(x: f32) -> Self {
        Self::from_f64(f64::from(x))
    }

    /// The exact value.
    pub fn to_f64(self) -> f64 {
        if self.0 == Self::NAN_BITS {
            f64::NAN
        } else {
            2f64.powi(i32::from(self.0) - Self::BIAS)
        }
    }

    /// The exact value (2^−127 is an `f32` subnormal).
    pub fn to_f32(self) -> f32 {
        self.to_f64() as f32
    }

    /// Whether this is the NaN pattern.
    pub fn is_nan(self) -> bool {
        self.0 == Self::NAN_BITS
    }
}

impl std::fmt::Display for F8E8M0 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.to_f32(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2m1_holds_its_eight_magnitudes() {
        let magnitudes: Vec<f64> = (0..8).map(|b| F4E2M1::from_bits(b).to_f64()).collect();
        assert_eq!(magnitudes, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(F4E2M1::from_bits(0xf).to_f64(), -6.0);
    }

    #[test]
    fn pairs_pack_low_nibble_first_and_unpack_back() {
        let values: Vec<F4E2M1> = [1.0, -6.0, 0.5, 3.0, 2.0]
            .into_iter()
            .map(F4E2M1::from_f64)
            .collect();
        // 1.0 is 0b0010, -6.0 0b1111, 0.5 0b0001, 3.0 0b0101, 2.0 0b0100.
        assert_eq!(F4E2M1::pack_pairs(&values), [0xf2, 0x51, 0x04]);
        let back = F4E2M1::unpack_pairs(&F4E2M1::pack_pairs(&values));
        assert_eq!(back[..5], values[..]);
        assert_eq!(back[5].to_bits(), 0);
    }

    #[test]
    fn every_element_pattern_round_trips() {
        for bits in 0..16u8 {
            assert_eq!(
                F4E2M1::from_f64(F4E2M1::from_bits(bits).to_f64()).to_bits(),
                bits
            );
        }
        for bits in 0..64u8 {
            assert_eq!(
                F6E2M3::from_f64(F6E2M3::from_bits(bits).to_f64()).to_bits(),
                bits
            );
            assert_eq!(
                F6E3M2::from_f64(F6E3M2::from_bits(bits).to_f64()).to_bits(),
                bits
            );
        }
    }

    #[test]
    fn elements_round_to_nearest_even_and_saturate() {
        // 2.5 lies halfway between 2 and 3 in E2M1: ties go to the even 2.
        assert_eq!(F4E2M1::from_f64(2.5).to_f64(), 2.0);
        // 5 lies halfway between 4 and 6: ties go to the even 4.
        assert_eq!(F4E2M1::from_f64(5.0).to_f64(), 4.0);
        assert_eq!(F4E2M1::from_f64(5.0001).to_f64(), 6.0);
        // A quarter is halfway between 0 and the subnormal 0.5: the even 0.
        assert_eq!(F4E2M1::from_f64(-0.25).to_bits(), 0x8);
        assert_eq!(F4E2M1::from_f64(7.9).to_f64(), 6.0);
        assert_eq!(F4E2M1::from_f64(f64::NEG_INFINITY).to_f64(), -6.0);
        assert_eq!(F4E2M1::from_f64(f64::NAN).to_f64(), 6.0);
        assert_eq!(F6E2M3::from_f64(100.0).to_f64(), 7.5);
        assert_eq!(F6E2M3::from_bits(0x01).to_f64(), 0.125);
        assert_eq!(F6E3M2::from_f64(-1e9).to_f64(), -28.0);
        assert_eq!(F6E3M2::from_bits(0x01).to_f64(), 0.0625);
        assert_eq!(F6E3M2::from_f64(f64::NAN).to_bits(), 0x1f);
    }

    #[test]
    fn e8m0_is_the_floor_power_of_two_saturated() {
        assert_eq!(F8E8M0::from_f64(1.0).to_bits(), 127);
        assert_eq!(F8E8M0::from_f64(1.99).to_f64(), 1.0);
        assert_eq!(F8E8M0::from_f64(0.75).to_f64(), 0.5);
        assert_eq!(F8E8M0::from_f64(0.0).to_f64(), 2f64.powi(-127));
        assert_eq!(F8E8M0::from_f64(1e-300).to_bits(), 0);
        assert_eq!(F8E8M0::from_f64(f64::INFINITY).to_f64(), 2f64.powi(127));
        assert_eq!(F8E8M0::from_f64(1e300).to_bits(), 254);
        assert!(F8E8M0::from_f64(-1.0).is_nan());
        assert!(F8E8M0::from_f64(f64::NAN).is_nan());
        assert_eq!(F8E8M0::from_bits(0).to_f32(), 2f32.powi(-127));
        for bits in 0..255u8 {
            assert_eq!(
                F8E8M0::from_f64(F8E8M0::from_bits(bits).to_f64()).to_bits(),
                bits
            );
        }
    }
}
