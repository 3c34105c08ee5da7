//! Narrow floats (f16, bf16, FP8, the MX formats) in integer registers, and
//! exact conversions between them, f32, f64 and integers.
//!
//! Registers of the narrow float dtypes hold their bits (`i16`, `i8`), so no
//! target needs half-precision hardware or a conversion library call; every
//! operation widens to f32 (exactly), computes, and narrows with one
//! round-to-nearest-even written here in integer operations. Narrowing rounds
//! once from the f32 or f64 source bits (so `f64 -> f16` is not rounded twice),
//! saturates into FP8 and the MX elements, and returns the dtype's canonical
//! NaN for a NaN (FP4 and FP6: their largest value). FP4 and FP6 sit in the
//! low bits of an `i8`; the scale `f8e8m0` has conversions of its own
//! (`scale.rs`).

use super::format::{Format, Kind};
use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::DType;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Whether the bits `bits` of `format` are a NaN.
    pub(crate) fn bits_are_nan(
        &self,
        bits: IntValue<'ctx>,
        format: Format,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let ty = bits.get_type();
        let magnitude =
            self.b
                .build_and(bits, ty.const_int(format.magnitude_mask(), false), "mag")?;
        let threshold = ty.const_int(format.nan_threshold(), false);
        Ok(self
            .b
            .build_int_compare(IntPredicate::UGT, magnitude, threshold, "isnan")?)
    }

    /// The narrow-format bits `bits` widened exactly to f32 by the
    /// target's own means, a NaN keeping its payload (quieted, for f16):
    /// bf16 (a format with f32's exponent) as the upper half of the f32,
    /// f16 with the conversion instruction where the target has one
    /// ([`crate::Target::converts_f16`]: PTX's `cvt.f32.f16`, AMDGPU's
    /// `v_cvt_f32_f16`, F16C's `vcvtph2ps`, AArch64's `fcvt`), subnormals
    /// and infinities included; `None` for the other formats and targets.
    pub(crate) fn widened_with_payload(
        &self,
        bits: IntValue<'ctx>,
        format: Format,
    ) -> Result<Option<FloatValue<'ctx>>, EmitError> {
        let b = &self.b;
        let f32t = self.ctx.f32_type();
        if format == Format::of(DType::BF16).expect("bf16 is a float format") {
            let i32t = self.ctx.i32_type();
            let wide = b.build_int_z_extend(bits, i32t, "wide")?;
            let upper = b.build_left_shift(wide, i32t.const_int(16, false), "upper")?;
            let value = b.build_bit_cast(upper, f32t, "value")?.into_float_value();
            return Ok(Some(value));
        }
        if self.converts_f16 && format == Format::of(DType::F16).expect("f16 is a float format") {
            let half = b.build_bit_cast(bits, self.ctx.f16_type(), "half")?;
            let value = b.build_float_ext(half.into_float_value(), f32t, "value")?;
            return Ok(Some(value));
        }
        Ok(None)
    }

    /// The narrow-format bits `bits` widened exactly to f32 (a NaN becomes
    /// the canonical f32 NaN).
    pub(crate) fn widen_to_f32(
        &self,
        bits: IntValue<'ctx>,
        format: Format,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        if format.kind == Kind::Scale {
            return self.widen_scale(bits);
        }
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let f32t = self.ctx.f32_type();
        let x = b.build_int_z_extend(bits, i32t, "wide")?;
        // FP4 and FP6 take the low bits of their byte.
        let x = if format.width < format.reg_width {
            b.build_and(x, i32t.const_int((1 << format.width) - 1, false), "low")?
        } else {
            x
        };
        let short = match self.widened_with_payload(bits, format)? {
            Some(value) => Some(value),
            None => self.widened_fp8(bits, format)?,
        };
        if let Some(value) = short {
            let nan = b.build_float_compare(FloatPredicate::UNO, value, value, "nan")?;
            let canonical = self.f32_bits(0x7fc0_0000)?;
            return Ok(b
                .build_select(nan, canonical, value, "widened")?
                .into_float_value());
        }
        let man_mask = i32t.const_int((1 << format.man_bits) - 1, false);
        let sign = b.build_right_shift(
            x,
            i32t.const_int(u64::from(format.width - 1), false),
            false,
            "sign",
        )?;
        let exp = b.build_and(
            b.build_right_shift(
                x,
                i32t.const_int(u64::from(format.man_bits), false),
                false,
                "e",
            )?,
            i32t.const_int((1 << format.exp_bits) - 1, false),
            "exp",
        )?;
        let man = b.build_and(x, man_mask, "man")?;
        let sign32 = b.build_left_shift(sign, i32t.const_int(31, false), "sign32")?;
        // Normal: rebias the exponent, move the mantissa up.
        let rebias = 127 - format.bias();
        let exp32 = b.build_int_add(exp, i32t.const_int(rebias as u64, true), "exp32")?;
        let normal = b.build_or(
            b.build_or(
                sign32,
                b.build_left_shift(exp32, i32t.const_int(23, false), "e32")?,
                "se",
            )?,
            b.build_left_shift(
                man,
                i32t.const_int(u64::from(23 - format.man_bits), false),
                "m32",
            )?,
            "normal",
        )?;
        let normal = b
            .build_bit_cast(normal, f32t, "normalf")?
            .into_float_value();
        // Zero and subnormal: mantissa × 2^(1 - bias - man_bits), exact in f32.
        let scale = (2f64).powi((1 - format.bias() - i64::from(format.man_bits)) as i32);
        let sub = b.build_float_mul(
            b.build_unsigned_int_to_float(man, f32t, "manf")?,
            f32t.const_float(scale),
            "subabs",
        )?;
        let sub_neg = b.build_float_neg(sub, "subneg")?;
        let is_neg = b.build_int_compare(IntPredicate::NE, sign, i32t.const_zero(), "neg")?;
        let sub = b
            .build_select(is_neg, sub_neg, sub, "sub")?
            .into_float_value();
        let is_sub = b.build_int_compare(IntPredicate::EQ, exp, i32t.const_zero(), "issub")?;
        let finite = b
            .build_select(is_sub, sub, normal, "finite")?
            .into_float_value();
        // Specials: infinities (IEEE) and NaN.
        let inf = b
            .build_bit_cast(
                b.build_or(sign32, i32t.const_int(0x7f80_0000, false), "infb")?,
                f32t,
                "inf",
            )?
            .into_float_value();
        let all_ones_exp = b.build_int_compare(
            IntPredicate::EQ,
            exp,
            i32t.const_int((1 << format.exp_bits) - 1, false),
            "special",
        )?;
        let value = if format.kind == Kind::Ieee {
            b.build_select(all_ones_exp, inf, finite, "value")?
                .into_float_value()
        } else {
            finite
        };
        let nan = self.bits_are_nan(bits, format)?;
        let canonical = self.f32_bits(0x7fc0_0000)?;
        Ok(b.build_select(nan, canonical, value, "widened")?
            .into_float_value())
    }

    /// The f32 constant with bits `bits`.
    pub(crate) fn f32_bits(&self, bits: u32) -> Result<FloatValue<'ctx>, EmitError> {
        let i = self.ctx.i32_type().const_int(u64::from(bits), false);
        Ok(self
            .b
            .build_bit_cast(i, self.ctx.f32_type(), "c")?
            .into_float_value())
    }

    /// The f64 constant with bits `bits`.
    pub(crate) fn f64_bits(&self, bits: u64) -> Result<FloatValue<'ctx>, EmitError> {
        let i = self.ctx.i64_type().const_int(bits, false);
        Ok(self
            .b
            .build_bit_cast(i, self.ctx.f64_type(), "c")?
            .into_float_value())
    }

    /// `x` (an f32 or f64 value) rounded once, to nearest even, to the narrow
    /// `format`, as its bits; NaN becomes the canonical NaN, overflow
    /// infinity (IEEE formats) or the largest finite value (saturating).
    /// Under [`Nans::AsComputed`] a NaN that a target's conversion
    /// instruction makes stays as it made it (the integer roundings always
    /// choose the canonical one: theirs of a NaN need not be one).
    pub(crate) fn narrow(
        &self,
        x: FloatValue<'ctx>,
        format: Format,
        nans: Nans,
    ) -> Result<IntValue<'ctx>, EmitError> {
        if format.kind == Kind::Scale {
            return self.narrow_to_scale(x);
        }
        let b = &self.b;
        if self.converts_f16
            && Format::of(DType::F16) == Some(format)
            && x.get_type() == self.ctx.f32_type()
        {
            return self.narrow_f32_to_f16(x, nans);
        }
        if Format::of(DType::BF16) == Some(format) && x.get_type() == self.ctx.f32_type() {
            return self.narrow_f32_to_bf16(x, nans);
        }
        let src = if x.get_type() == self.ctx.f64_type() {
            Format::of(DType::F64)
        } else {
            Format::of(DType::F32)
        }
        .ok_or_else(|| EmitError::internal("narrowing from a non-float"))?;
        let it = self.int_type(src.width);
        let c = |v: u64| it.const_int(v, false);
        let bits = b.build_bit_cast(x, it, "bits")?.into_int_value();
        let sign = b.build_right_shift(bits, c(u64::from(src.width - 1)), false, "sign")?;
        let abs = b.build_and(bits, c((1u64 << (src.width - 1)) - 1), "abs")?;
        let shift = u64::from(src.man_bits - format.man_bits);
        // Normal results: round the magnitude at bit `shift`, then rebias.
        let lsb = b.build_and(b.build_right_shift(abs, c(shift), false, "q")?, c(1), "lsb")?;
        let rounded = b.build_int_add(
            b.build_int_add(abs, c((1 << (shift - 1)) - 1), "r0")?,
            lsb,
            "r1",
        )?;
        let rebias = ((src.bias() - format.bias()) as u64) << format.man_bits;
        let normal = b.build_int_sub(
            b.build_right_shift(rounded, c(shift), false, "q1")?,
            c(rebias),
            "normal",
        )?;
        // Subnormal results: shift the significand right by a dynamic amount
        // with round-to-nearest-even.
        // A source subnormal (exponent field 0) has no implicit bit and the
        // exponent of the smallest normal.
        let exp = b.build_right_shift(abs, c(u64::from(src.man_bits)), false, "exp")?;
        let src_sub = b.build_int_compare(IntPredicate::EQ, exp, c(0), "srcsub")?;
        let implicit = b
            .build_select(src_sub, c(0), c(1 << src.man_bits), "implicit")?
            .into_int_value();
        let exp = b.build_select(src_sub, c(1), exp, "eexp")?.into_int_value();
        let sig = b.build_or(
            b.build_and(abs, c((1 << src.man_bits) - 1), "m")?,
            implicit,
            "sig",
        )?;
        // amount = man_bits(src) + 1 - bias(dst) - man_bits(dst) - (exp - bias(src))
        let base =
            i64::from(src.man_bits) + 1 - format.bias() - i64::from(format.man_bits) + src.bias();
        let amount = b.build_int_sub(c(base as u64), exp, "amount")?;
        let max_amount = c(u64::from(src.width - 1));
        let too_far = b.build_int_compare(IntPredicate::UGT, amount, max_amount, "far")?;
        let amount = b
            .build_select(too_far, max_amount, amount, "amt")?
            .into_int_value();
        let sub = self.shift_right_even(sig, amount)?;
        let min_normal = ((src.bias() + 1 - format.bias()) as u64) << src.man_bits;
        let is_sub = b.build_int_compare(IntPredicate::ULT, abs, c(min_normal), "issub")?;
        let code = b
            .build_select(is_sub, sub, normal, "code")?
            .into_int_value();
        // Overflow: infinity or saturation.
        let limit = c(if format.saturating {
            format.max_finite()
        } else {
            format.infinity()
        });
        let over = b.build_int_compare(IntPredicate::UGT, code, limit, "over")?;
        let code = b
            .build_select(over, limit, code, "clamped")?
            .into_int_value();
        let nt = self.int_type(format.reg_width);
        let code = b.build_int_truncate(code, nt, "code8")?;
        let sign = b.build_int_truncate(sign, nt, "s")?;
        let signed = b.build_or(
            b.build_left_shift(sign, nt.const_int(u64::from(format.width - 1), false), "sb")?,
            code,
            "signed",
        )?;
        let is_nan = b.build_int_compare(IntPredicate::UGT, abs, c(src.infinity()), "nan")?;
        Ok(b.build_select(
            is_nan,
            nt.const_int(format.canonical_nan(), false),
            signed,
            "narrow",
        )?
        .into_int_value())
    }

    /// [`Self::narrow`] of an f32 to f16 by the target's instruction
    /// ([`crate::Target::converts_f16`]): the same rounding, a third of the
    /// code (a 128×128 f16 matmul stores 128 results a thread), and the
    /// canonical NaN chosen here, since the instructions make other NaNs
    /// (PTX's is 0x7fff).
    fn narrow_f32_to_f16(
        &self,
        x: FloatValue<'ctx>,
        nans: Nans,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let i16t = self.ctx.i16_type();
        let half = b.build_float_trunc(x, self.ctx.f16_type(), "half")?;
        let bits = b.build_bit_cast(half, i16t, "hbits")?.into_int_value();
        if nans == Nans::AsComputed {
            return Ok(bits);
        }
        let is_nan = b.build_float_compare(FloatPredicate::UNO, x, x, "nan")?;
        let nan = Format::of(DType::F16)
            .ok_or_else(|| EmitError::internal("f16 has a format"))?
            .canonical_nan();
        Ok(
            b.build_select(is_nan, i16t.const_int(nan, false), bits, "narrow")?
                .into_int_value(),
        )
    }

    /// [`Self::narrow`] of an f32 to bf16, whose exponent range is f32's: the
    /// upper half of the bits rounded to nearest even on the lower half.
    /// Subnormals round as normals do, a carry out of the largest finite
    /// value makes the infinity, and NaNs become the canonical one: a
    /// handful of integer operations on every target where the general path
    /// takes some thirty (a 128×256 bf16 matmul rounds 128 results a thread),
    /// or the target's instruction ([`crate::Target::converts_bf16`]).
    fn narrow_f32_to_bf16(
        &self,
        x: FloatValue<'ctx>,
        nans: Nans,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let (i32t, i16t) = (self.ctx.i32_type(), self.ctx.i16_type());
        let code = if self.converts_bf16 {
            let asm = crate::gpu::Asm::CvtBf16;
            let fn_type = i16t.fn_type(&[self.ctx.f32_type().into()], false);
            let cvt = self.ctx.create_inline_asm(
                fn_type,
                asm.template(),
                asm.constraints(),
                false,
                false,
                Some(inkwell::InlineAsmDialect::ATT),
                false,
            );
            let call = b.build_indirect_call(fn_type, cvt, &[x.into()], "bf16")?;
            // A conversion, not an access: LLVM may move it as it would
            // arithmetic (and `crate::sink` sinks it).
            for (name, value) in [("nounwind", 0), ("willreturn", 0), ("memory", 0)] {
                let kind = inkwell::attributes::Attribute::get_named_enum_kind_id(name);
                call.add_attribute(
                    inkwell::attributes::AttributeLoc::Function,
                    self.ctx.create_enum_attribute(kind, value),
                );
            }
            let cvt_bits = call
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| EmitError::internal("cvt.rn.bf16.f32 returned nothing"))?
                .into_int_value();
            if nans == Nans::AsComputed {
                return Ok(cvt_bits);
            }
            cvt_bits
        } else {
            let c = |v: u64| i32t.const_int(v, false);
            let bits = b.build_bit_cast(x, i32t, "bits")?.into_int_value();
            let lsb = b.build_and(b.build_right_shift(bits, c(16), false, "hi")?, c(1), "lsb")?;
            let rounded = b.build_int_add(b.build_int_add(bits, c(0x7fff), "r0")?, lsb, "r1")?;
            b.build_int_truncate(
                b.build_right_shift(rounded, c(16), false, "q")?,
                i16t,
                "code",
            )?
        };
        let is_nan = b.build_float_compare(FloatPredicate::UNO, x, x, "nan")?;
        let nan = Format::of(DType::BF16)
            .ok_or_else(|| EmitError::internal("bf16 has a format"))?
            .canonical_nan();
        Ok(
            b.build_select(is_nan, i16t.const_int(nan, false), code, "narrow")?
                .into_int_value(),
        )
    }

    /// `x >> amount` rounded to nearest even on the bits shifted out
    /// (`0 < amount < width`).
    fn shift_right_even(
        &self,
        x: IntValue<'ctx>,
        amount: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let t = x.get_type();
        let one = t.const_int(1, false);
        let q = b.build_right_shift(x, amount, false, "q")?;
        let mask = b.build_int_sub(b.build_left_shift(one, amount, "p")?, one, "mask")?;
        let rem = b.build_and(x, mask, "rem")?;
        let half = b.build_left_shift(one, b.build_int_sub(amount, one, "a1")?, "half")?;
        let above = b.build_int_compare(IntPredicate::UGT, rem, half, "above")?;
        let tie = b.build_int_compare(IntPredicate::EQ, rem, half, "tie")?;
        let odd = b.build_int_compare(
            IntPredicate::NE,
            b.build_and(q, one, "o")?,
            t.const_zero(),
            "odd",
        )?;
        let up = b.build_or(above, b.build_and(tie, odd, "tieodd")?, "up")?;
        let up = b.build_int_z_extend(up, t, "up1")?;
        Ok(b.build_int_add(q, up, "rounded")?)
    }

    /// The integer `x` (of `from`, signed or unsigned) rounded once to the
    /// narrow `format`, as its bits.
    pub(crate) fn int_to_narrow(
        &self,
        x: IntValue<'ctx>,
        from: DType,
        format: Format,
    ) -> Result<IntValue<'ctx>, EmitError> {
        if format.kind == Kind::Scale {
            return self.int_to_scale(x, from);
        }
        let b = &self.b;
        let i64t = self.ctx.i64_type();
        let c = |v: u64| i64t.const_int(v, false);
        let wide = self.int_to_i64(x, from)?;
        let (neg, magnitude) = if from.is_signed_int() {
            let neg = b.build_int_compare(IntPredicate::SLT, wide, i64t.const_zero(), "neg")?;
            let negated = b.build_int_neg(wide, "negated")?;
            (
                neg,
                b.build_select(neg, negated, wide, "mag")?.into_int_value(),
            )
        } else {
            (self.ctx.bool_type().const_zero(), wide)
        };
        // Normalize: the leading one at bit 63, then round at bit
        // 63 - man_bits; the carry of rounding moves into the exponent.
        let lz = self.intrinsic_int(
            "llvm.ctlz",
            &[magnitude.into(), self.ctx.bool_type().const_zero().into()],
            i64t,
        )?;
        let sig = b.build_left_shift(magnitude, lz, "norm")?;
        let shift = c(u64::from(63 - format.man_bits));
        let rounded = self.shift_right_even(sig, shift)?;
        let exp = b.build_int_sub(c(63), lz, "e")?;
        let biased = b.build_int_add(exp, c((format.bias() - 1) as u64), "be")?;
        let code = b.build_int_add(
            b.build_left_shift(biased, c(u64::from(format.man_bits)), "eb")?,
            rounded,
            "code",
        )?;
        let limit = c(if format.saturating {
            format.max_finite()
        } else {
            format.infinity()
        });
        let over = b.build_int_compare(IntPredicate::UGT, code, limit, "over")?;
        let code = b
            .build_select(over, limit, code, "clamped")?
            .into_int_value();
        let zero = b.build_int_compare(IntPredicate::EQ, magnitude, i64t.const_zero(), "zero")?;
        let code = b
            .build_select(zero, i64t.const_zero(), code, "code0")?
            .into_int_value();
        let sign = b.build_left_shift(
            b.build_int_z_extend(neg, i64t, "s")?,
            c(u64::from(format.width - 1)),
            "sb",
        )?;
        let bits = b.build_or(code, sign, "bits")?;
        let nt = self.int_type(format.reg_width);
        Ok(b.build_int_truncate(bits, nt, "narrow")?)
    }

    /// The integer `x` of `from` as an `i64`, extended by `from`'s
    /// signedness.
    pub(super) fn int_to_i64(
        &self,
        x: IntValue<'ctx>,
        from: DType,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let i64t = self.ctx.i64_type();
        Ok(if from.bits() == 64 {
            x
        } else if from.is_signed_int() {
            self.b.build_int_s_extend(x, i64t, "sx")?
        } else {
            self.b.build_int_z_extend(x, i64t, "zx")?
        })
    }
}
