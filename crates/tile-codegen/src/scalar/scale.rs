//! Conversions into and out of the OCP MX scale `f8e8m0` (an unsigned power
//! of two, 2^(bits − 127), 255 the NaN), with `tile_ir::mx`'s semantics:
//! into it toward zero and saturating, a NaN or a negative value the NaN.
//!
//! Its bias is f32's, so a normal f32's exponent field is already the code.

use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::DType;

/// The code of NaN.
const NAN: u64 = 0xff;
/// The code of the largest value, 2^127.
const MAX: u64 = 0xfe;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// The code `bits` as an f32, exactly: 2^-127 is the subnormal
    /// `0x0040_0000`, 255 the canonical NaN.
    pub(crate) fn widen_scale(&self, bits: IntValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let c = |v: u64| i32t.const_int(v, false);
        let code = b.build_int_z_extend(bits, i32t, "code")?;
        let normal = b.build_left_shift(code, c(23), "normal")?;
        let is_zero = b.build_int_compare(IntPredicate::EQ, code, c(0), "least")?;
        let is_nan = b.build_int_compare(IntPredicate::EQ, code, c(NAN), "nan")?;
        let v = b.build_select(is_zero, c(0x0040_0000), normal, "v")?;
        let v = b.build_select(is_nan, c(0x7fc0_0000), v.into_int_value(), "v")?;
        Ok(b.build_bit_cast(v, self.ctx.f32_type(), "scale")?
            .into_float_value())
    }

    /// `x` (an f32 or f64) as the code of 2^⌊log₂ x⌋, saturated to
    /// 2^-127 ..= 2^127; the NaN for a NaN or a negative `x`.
    pub(crate) fn narrow_to_scale(&self, x: FloatValue<'ctx>) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let wide = x.get_type() == self.ctx.f64_type();
        let (it, man_bits, exp_mask, rebias) = if wide {
            (self.ctx.i64_type(), 52, 0x7ff, 1023 - 127)
        } else {
            (self.ctx.i32_type(), 23, 0xff, 0)
        };
        let c = |v: u64| it.const_int(v, false);
        let bits = b.build_bit_cast(x, it, "bits")?.into_int_value();
        let field = b.build_and(
            b.build_right_shift(bits, c(man_bits), false, "e")?,
            c(exp_mask),
            "field",
        )?;
        // The unbiased exponent moved to e8m0's bias, clamped into 0 ..= 254
        // (a zero or a subnormal source, field 0, gives 0; an infinity 254).
        let code = b.build_int_sub(field, c(rebias), "code")?;
        let low = b.build_int_compare(IntPredicate::SLT, code, c(0), "low")?;
        let code = b.build_select(low, c(0), code, "c0")?.into_int_value();
        let high = b.build_int_compare(IntPredicate::SGT, code, c(MAX), "high")?;
        let code = b.build_select(high, c(MAX), code, "c1")?.into_int_value();
        let zero = x.get_type().const_zero();
        let nan = b.build_float_compare(FloatPredicate::ULT, x, zero, "nanorneg")?;
        let code = b.build_select(nan, c(NAN), code, "c2")?.into_int_value();
        Ok(b.build_int_truncate(code, self.ctx.i8_type(), "scale")?)
    }

    /// The integer `x` of `from` as the code of 2^⌊log₂ x⌋ (its highest set
    /// bit); 2^-127 for zero, the NaN for a negative `x`.
    pub(crate) fn int_to_scale(
        &self,
        x: IntValue<'ctx>,
        from: DType,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let i64t = self.ctx.i64_type();
        let c = |v: u64| i64t.const_int(v, false);
        let wide = self.int_to_i64(x, from)?;
        let lz = self.intrinsic_int(
            "llvm.ctlz",
            &[wide.into(), self.ctx.bool_type().const_zero().into()],
            i64t,
        )?;
        // 127 + (63 - lz): the highest set bit's exponent at e8m0's bias.
        let code = b.build_int_sub(c(127 + 63), lz, "code")?;
        let is_zero = b.build_int_compare(IntPredicate::EQ, wide, c(0), "zero")?;
        let code = b.build_select(is_zero, c(0), code, "c0")?.into_int_value();
        let code = if from.is_signed_int() {
            let neg = b.build_int_compare(IntPredicate::SLT, wide, c(0), "neg")?;
            b.build_select(neg, c(NAN), code, "c1")?.into_int_value()
        } else {
            code
        };
        Ok(b.build_int_truncate(code, self.ctx.i8_type(), "scale")?)
    }
}
