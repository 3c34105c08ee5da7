//! Binary float formats by their fields: what the scalar emitter's narrow
//! conversions (`float.rs`, `scale.rs`) read of a dtype.

use tile_ir::DType;

/// What a format's all-ones exponent, and its sign, encode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// IEEE: infinities and NaNs under the all-ones exponent.
    Ieee,
    /// One NaN (all ones), no infinities (FP8 e4m3).
    OneNan,
    /// Every pattern a finite number (FP4, FP6): a NaN narrows to the
    /// largest positive value.
    Finite,
    /// An unsigned power of two with 255 the NaN (`f8e8m0`): see `scale.rs`.
    Scale,
}

/// A binary floating-point format described by its field widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Format {
    /// The width in bits of the format (4 for FP4, 6 for FP6).
    pub width: u32,
    /// The width of the register and memory word holding one value (8 for
    /// every format narrower than a byte).
    pub reg_width: u32,
    /// The exponent field's width.
    pub exp_bits: u32,
    /// The stored mantissa bits.
    pub man_bits: u32,
    /// What the specials are.
    pub kind: Kind,
    /// Whether rounding saturates to the largest finite value (FP8, MX).
    pub saturating: bool,
}

impl Format {
    /// The format of a float dtype.
    pub(crate) fn of(dtype: DType) -> Option<Format> {
        let (width, exp_bits, man_bits, kind, saturating) = match dtype {
            DType::F16 => (16, 5, 10, Kind::Ieee, false),
            DType::BF16 => (16, 8, 7, Kind::Ieee, false),
            DType::F32 => (32, 8, 23, Kind::Ieee, false),
            DType::F64 => (64, 11, 52, Kind::Ieee, false),
            DType::F8E4M3 => (8, 4, 3, Kind::OneNan, true),
            DType::F8E5M2 => (8, 5, 2, Kind::Ieee, true),
            DType::F4E2M1 => (4, 2, 1, Kind::Finite, true),
            DType::F6E2M3 => (6, 2, 3, Kind::Finite, true),
            DType::F6E3M2 => (6, 3, 2, Kind::Finite, true),
            DType::F8E8M0 => (8, 8, 0, Kind::Scale, true),
            _ => return None,
        };
        Some(Format {
            width,
            reg_width: dtype.bits(),
            exp_bits,
            man_bits,
            kind,
            saturating,
        })
    }

    /// The exponent bias.
    pub(crate) fn bias(self) -> i64 {
        (1 << (self.exp_bits - 1)) - 1
    }

    /// The magnitude bits of the largest finite value.
    pub(crate) fn max_finite(self) -> u64 {
        let all = (1u64 << (self.width - 1)) - 1;
        match self.kind {
            // Exponent all ones minus one, mantissa all ones.
            Kind::Ieee => {
                (((1 << self.exp_bits) - 2) << self.man_bits) | ((1 << self.man_bits) - 1)
            }
            Kind::OneNan => all - 1,
            Kind::Finite => all,
            Kind::Scale => 0xfe,
        }
    }

    /// The magnitude bits of infinity (IEEE formats).
    pub(crate) fn infinity(self) -> u64 {
        ((1 << self.exp_bits) - 1) << self.man_bits
    }

    /// What a NaN becomes: the canonical NaN (positive, quiet bit only; FP8:
    /// `0x7f`, e8m0: `0xff`), or in a format without NaN its largest
    /// positive value.
    pub(crate) fn canonical_nan(self) -> u64 {
        match self.kind {
            Kind::Finite => self.max_finite(),
            Kind::Scale => 0xff,
            _ if self.width == 8 => 0x7f,
            _ => self.infinity() | (1 << (self.man_bits - 1)),
        }
    }

    /// The magnitude above which bits are NaN (none above in FP4 and FP6).
    pub(crate) fn nan_threshold(self) -> u64 {
        match self.kind {
            Kind::Ieee => self.infinity(),
            _ => self.max_finite(),
        }
    }

    /// The mask of a magnitude's bits (every bit for the unsigned e8m0).
    pub(crate) fn magnitude_mask(self) -> u64 {
        if self.kind == Kind::Scale {
            0xff
        } else {
            (1 << (self.width - 1)) - 1
        }
    }
}
