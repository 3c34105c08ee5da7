//! Binary float formats narrower than f16, described by their fields, and the
//! exact decode and round-to-nearest-even encode the FP8 and MX element types
//! share (`f8.rs`, `mx.rs`).
//!
//! Encoding saturates: a finite value beyond the largest finite value, and an
//! infinity, become that largest value with the input's sign. A NaN becomes
//! the format's NaN, or in a format without one its [`Format::nan_result`].

/// How a format spends its all-ones exponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Specials {
    /// IEEE-like: the all-ones exponent holds the infinities and NaNs.
    Ieee,
    /// One NaN magnitude pattern (OCP E4M3: all ones); no infinities.
    OneNan(u8),
    /// Every pattern is a finite number (OCP FP6, FP4).
    Finite,
}

/// The parameters of a small binary float format with a sign bit.
pub(crate) struct Format {
    /// The total width in bits, sign included.
    pub width: u32,
    /// The stored mantissa bits.
    pub mantissa_bits: u32,
    /// The exponent bias.
    pub bias: i32,
    /// The largest finite magnitude.
    pub max: f64,
    /// What the all-ones exponent encodes.
    pub specials: Specials,
    /// The pattern a NaN encodes to: the canonical NaN, or in a
    /// [`Specials::Finite`] format the largest positive value.
    pub nan_result: u8,
}

impl Format {
    fn sign_bit(&self) -> u8 {
        1 << (self.width - 1)
    }

    fn magnitude_mask(&self) -> u8 {
        self.sign_bit() - 1
    }

    fn min_normal_exponent(&self) -> i32 {
        1 - self.bias
    }

    /// The exact value of the pattern `bits` (bits above the width ignored).
    pub fn decode(&self, bits: u8) -> f64 {
        let sign = if bits & self.sign_bit() != 0 {
            -1.0
        } else {
            1.0
        };
        let magnitude = bits & self.magnitude_mask();
        let exp_field = i32::from(magnitude >> self.mantissa_bits);
        let mantissa = f64::from(magnitude & ((1 << self.mantissa_bits) - 1));
        let exp_max = i32::from(self.magnitude_mask() >> self.mantissa_bits);
        let frac_scale = f64::from(1u32 << self.mantissa_bits);
        match self.specials {
            Specials::Ieee if exp_field == exp_max => {
                return if mantissa == 0.0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                };
            }
            Specials::OneNan(nan) if magnitude == nan => return f64::NAN,
            _ => {}
        }
        if exp_field == 0 {
            sign * mantissa / frac_scale * 2f64.powi(self.min_normal_exponent())
        } else {
            sign * (1.0 + mantissa / frac_scale) * 2f64.powi(exp_field - self.bias)
        }
    }

    /// `x` rounded to nearest, ties to even, saturating.
    pub fn encode(&self, x: f64) -> u8 {
        if x.is_nan() {
            return self.nan_result;
        }
        let sign = if x.is_sign_negative() {
            self.sign_bit()
        } else {
            0
        };
        let a = x.abs();
        if a == 0.0 {
            return sign;
        }
        // The spacing of representable values around `a`.
        let exponent = exponent_of(a).max(self.min_normal_exponent());
        let quantum = 2f64.powi(exponent - self.mantissa_bits as i32);
        let rounded = (a / quantum).round_ties_even() * quantum;
        let value = rounded.min(self.max);
        if value == 0.0 {
            return sign;
        }
        let exponent = exponent_of(value);
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
pub(crate) fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // A subnormal f64: below every narrow format's smallest value, so its
        // exact exponent matters only in being smaller than all of theirs.
        -1075
    } else {
        biased - 1023
    }
}

/// Declares a narrow float type over a [`Format`]: bits, conversions,
/// `Display`.
macro_rules! narrow_float_type {
    ($name:ident, $format:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name(u8);

        impl $name {
            /// The value with the bit pattern in the low bits of `bits` (bits
            /// above the format's width are dropped).
            pub const fn from_bits(bits: u8) -> Self {
                $name((bits as u16 & ((1u16 << $format.width) - 1)) as u8)
            }

            /// The bit pattern of this value.
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// Rounds `x` to nearest (ties to even), saturating to the largest
            /// finite value (see the module documentation for NaN).
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

            /// The exact value (every value of the format is an `f32`).
            pub fn to_f32(self) -> f32 {
                self.to_f64() as f32
            }

            /// Whether this is a NaN pattern.
            pub fn is_nan(self) -> bool {
                self.to_f64().is_nan()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    };
}

pub(crate) use narrow_float_type;
