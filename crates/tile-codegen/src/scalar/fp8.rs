//! FP8 widened to f32 through f16, where that is shorter than decoding the
//! fields in integer arithmetic (`float.rs`): every E4M3 and E5M2 value is
//! an f16, so the f16 of the same value, widened by the target's `f16`
//! conversion, is exact.

use super::format::Format;
use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::{FloatValue, IntValue};
use tile_ir::DType;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// The FP8 bits `bits` (an `i8`) widened exactly to f32 through the f16
    /// of the same value, or `None` where the target has no short way:
    /// E5M2 is the upper byte of that f16 (NaNs and infinities included),
    /// on targets that convert f16; E4M3 takes PTX's `cvt.rn.f16x2.e4m3x2`
    /// ([`crate::Target::converts_e4m3`]), its byte in the low half. A NaN
    /// widens to some f32 NaN; the caller canonicalizes it.
    pub(crate) fn widened_fp8(
        &self,
        bits: IntValue<'ctx>,
        format: Format,
    ) -> Result<Option<FloatValue<'ctx>>, EmitError> {
        let b = &self.b;
        let (i16t, f16t) = (self.ctx.i16_type(), self.ctx.f16_type());
        let half = if format == fp8(DType::F8E5M2) && self.converts_f16 {
            let wide = b.build_int_z_extend(bits, i16t, "wide")?;
            let upper = b.build_left_shift(wide, i16t.const_int(8, false), "upper")?;
            b.build_bit_cast(upper, f16t, "half")?.into_float_value()
        } else if format == fp8(DType::F8E4M3) && self.converts_e4m3 {
            let wide = b.build_int_z_extend(bits, i16t, "wide")?;
            let pair = self.intrinsic("llvm.nvvm.e4m3x2.to.f16x2.rn", &[])?;
            let pair = b
                .build_call(pair, &[wide.into()], "pair")?
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| EmitError::internal("cvt.rn.f16x2.e4m3x2"))?
                .into_vector_value();
            let low = self.ctx.i32_type().const_zero();
            b.build_extract_element(pair, low, "half")?
                .into_float_value()
        } else {
            return Ok(None);
        };
        Ok(Some(b.build_float_ext(
            half,
            self.ctx.f32_type(),
            "value",
        )?))
    }
}

/// The format of an FP8 dtype.
fn fp8(dtype: DType) -> Format {
    Format::of(dtype).expect("FP8 dtypes are float formats")
}
