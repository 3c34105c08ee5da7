//! `add`, `sub` and `mul` of f16 and bf16 in their own LLVM types
//! (`half`, `bfloat`) on targets that have the instructions
//! ([`crate::Target::adds_16_bit_floats`]): one rounding to the dtype, as
//! the f32 operation rounded to it gives (f32's 24 bits are at least twice
//! the dtype's 11 or 8, plus two, so rounding twice cannot differ from
//! rounding once), with the values kept in 16-bit registers that the
//! back end pairs into packed instructions (`fma.rn.bf16x2`,
//! `add.rn.f16x2`). LLVM does not contract them: a product stays rounded
//! before the sum that uses it.

use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue};
use tile_ir::{BinaryOp, DType};

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Whether `op` on `dtype` with NaN policy `nans` is computed in its own
    /// type here: where the target has the instruction and no use observes
    /// a NaN result's bits. A result whose NaN must be canonical stays in
    /// f32, where the test is one compare of the value already at hand
    /// (measured: testing the 16-bit result's bits instead made ptxas
    /// unpack the packed pairs, and SwiGLU and GEGLU took 40 registers for
    /// 32).
    pub(super) fn in_own_type(&self, op: BinaryOp, dtype: DType, nans: Nans) -> bool {
        let native = match dtype {
            DType::F16 => self.native_16_bit[0],
            DType::BF16 => self.native_16_bit[1],
            _ => false,
        };
        native
            && nans == Nans::AsComputed
            && matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul)
    }

    /// `a op b` on the bits of two f16 or bf16 values, in their own type,
    /// its NaN whatever the instruction gives.
    pub(super) fn half_binary(
        &self,
        op: BinaryOp,
        dtype: DType,
        (a, b_): (BasicValueEnum<'ctx>, BasicValueEnum<'ctx>),
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let ty = if dtype == DType::BF16 {
            self.ctx.bf16_type()
        } else {
            self.ctx.f16_type()
        };
        let x = b.build_bit_cast(a, ty, "x")?.into_float_value();
        let y = b.build_bit_cast(b_, ty, "y")?.into_float_value();
        let r = match op {
            BinaryOp::Add => b.build_float_add(x, y, "hadd")?,
            BinaryOp::Sub => b.build_float_sub(x, y, "hsub")?,
            BinaryOp::Mul => b.build_float_mul(x, y, "hmul")?,
            _ => return Err(EmitError::internal("a 16-bit op other than add, sub, mul")),
        };
        Ok(b.build_bit_cast(r, self.ctx.i16_type(), "hbits")?
            .into_int_value())
    }
}

/// The name of the runtime function LLVM's x86 back end calls to round an
/// f32 to `bfloat`, which a CPU without AVX-512 BF16 lacks.
const TRUNC_F32_TO_BF16: &str = "__truncsfbf2";

/// Defines [`TRUNC_F32_TO_BF16`] in `module` (hidden: the object's own),
/// rounding to nearest even with the integer arithmetic of
/// [`ScalarEmitter::narrow`], for a GPU module moved to the host
/// (`crate::emulation`) whose `bfloat` arithmetic the host back end
/// lowers through f32. libgcc has the function from GCC 13 on; Debian 12's
/// does not.
pub(crate) fn define_bf16_rounding<'ctx>(
    ctx: &'ctx inkwell::context::Context,
    module: &inkwell::module::Module<'ctx>,
    host: crate::Target,
) -> Result<(), EmitError> {
    if module
        .get_function(TRUNC_F32_TO_BF16)
        .is_some_and(|f| f.count_basic_blocks() > 0)
    {
        return Ok(());
    }
    let fn_type = ctx.bf16_type().fn_type(&[ctx.f32_type().into()], false);
    let f = module
        .get_function(TRUNC_F32_TO_BF16)
        .unwrap_or_else(|| module.add_function(TRUNC_F32_TO_BF16, fn_type, None));
    f.as_global_value()
        .set_visibility(inkwell::GlobalVisibility::Hidden);
    let e = ScalarEmitter::new(ctx, module, host, false);
    e.b.position_at_end(ctx.append_basic_block(f, "entry"));
    let x = f
        .get_first_param()
        .ok_or_else(|| EmitError::internal("the rounding takes an f32"))?
        .into_float_value();
    let format = super::format::Format::of(DType::BF16)
        .ok_or_else(|| EmitError::internal("bf16 has a format"))?;
    let bits = e.narrow(x, format, Nans::AsComputed)?;
    let r = e.b.build_bit_cast(bits, ctx.bf16_type(), "bf16")?;
    e.b.build_return(Some(&r))?;
    Ok(())
}
