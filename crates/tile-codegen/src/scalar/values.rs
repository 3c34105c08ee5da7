//! Values of the scalar emitter: the register and memory types of each
//! dtype, constants, the widening of narrow floats for computation and the
//! rounding and NaN policy of computed results.

use super::format::Format;
use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::{DType, Scalar};

/// How a value of a dtype is computed on: as an integer, or as an f32/f64
/// float after widening.
pub(super) enum Domain {
    Int,
    Float,
}

/// The domain of `dtype`.
pub(super) fn domain(dtype: DType) -> Domain {
    if dtype.is_float() {
        Domain::Float
    } else {
        Domain::Int
    }
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// The bit pattern of register `v` as an `i64`: integers (and the
    /// narrow floats' bits) sign-extended, `float`/`double` bit-cast first.
    /// The low bits are the value's (`tile_ir::Scalar::from_bits` reads
    /// them back).
    pub(crate) fn value_bits(&self, v: BasicValueEnum<'ctx>) -> Result<IntValue<'ctx>, EmitError> {
        let i64t = self.ctx.i64_type();
        let int = match v {
            BasicValueEnum::IntValue(i) => i,
            BasicValueEnum::FloatValue(f) => {
                let int = self.int_type(f.get_type().get_bit_width());
                self.b.build_bit_cast(f, int, "bits")?.into_int_value()
            }
            _ => return Err(EmitError::internal("the bits of a non-scalar")),
        };
        Ok(self.b.build_int_s_extend_or_bit_cast(int, i64t, "bits64")?)
    }

    /// The memory type of an element of `dtype` (bool is one byte).
    pub(crate) fn mem_type(&self, dtype: DType) -> BasicTypeEnum<'ctx> {
        match dtype {
            DType::Bool => self.ctx.i8_type().into(),
            d => self.reg_type(d),
        }
    }

    /// The register value of `dtype` held by the memory value `v`: a
    /// bool's byte compared with zero (any non-zero byte is true), any
    /// other value as it is.
    pub(crate) fn register_value(
        &self,
        v: BasicValueEnum<'ctx>,
        dtype: DType,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if !dtype.is_bool() {
            return Ok(v);
        }
        let i = v.into_int_value();
        Ok(self
            .b
            .build_int_compare(IntPredicate::NE, i, i.get_type().const_zero(), "bool")?
            .into())
    }

    /// The memory value of the register value `v` of `dtype`: a bool as
    /// the byte 0 or 1, any other value as it is.
    pub(crate) fn memory_value(
        &self,
        v: BasicValueEnum<'ctx>,
        dtype: DType,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if !dtype.is_bool() {
            return Ok(v);
        }
        Ok(self
            .b
            .build_int_z_extend(v.into_int_value(), self.ctx.i8_type(), "byte")?
            .into())
    }

    /// The LLVM type of a register of `dtype`: `i1` for bool, `iN` for
    /// integers and for the narrow floats' bits, `float`/`double`.
    pub(crate) fn reg_type(&self, dtype: DType) -> BasicTypeEnum<'ctx> {
        match dtype {
            DType::Bool => self.ctx.bool_type().into(),
            DType::F32 => self.ctx.f32_type().into(),
            DType::F64 => self.ctx.f64_type().into(),
            d => self.int_type(d.bits()).into(),
        }
    }

    /// The LLVM constant of a scalar.
    pub(crate) fn constant(&self, value: Scalar) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let bits = value.to_bits();
        Ok(match value.dtype() {
            DType::Bool => self.ctx.bool_type().const_int(bits, false).into(),
            DType::F32 => self.f32_bits(bits as u32)?.into(),
            DType::F64 => self.f64_bits(bits)?.into(),
            d => self.int_type(d.bits()).const_int(bits, false).into(),
        })
    }

    /// A float register of `dtype` as an f32 (narrow dtypes) or its own
    /// f32/f64 value.
    pub(crate) fn widen(
        &self,
        x: BasicValueEnum<'ctx>,
        dtype: DType,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        match dtype {
            DType::F32 | DType::F64 => Ok(x.into_float_value()),
            d => {
                let format =
                    Format::of(d).ok_or_else(|| EmitError::internal("widening a non-float"))?;
                self.widen_to_f32(x.into_int_value(), format)
            }
        }
    }

    /// `x` of `dtype` widened as the operand of an op whose result does not
    /// depend on a NaN operand's payload (arithmetic, math, comparisons,
    /// conversions to integers and bool: a NaN result is canonicalized where
    /// it is observed): as [`Self::widen`], but a bf16 or (where the target
    /// converts it in one instruction) f16 NaN keeps its payload, which
    /// saves a compare and a select per element.
    pub(crate) fn widen_operand(
        &self,
        x: BasicValueEnum<'ctx>,
        dtype: DType,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        if matches!(dtype, DType::BF16 | DType::F16) {
            let format = Format::of(dtype).ok_or_else(|| EmitError::internal("a 16-bit format"))?;
            if let Some(v) = self.widened_with_payload(x.into_int_value(), format)? {
                return Ok(v);
            }
        }
        self.widen(x, dtype)
    }

    /// A computed f32/f64 result stored as `dtype`: NaN canonicalized, narrow
    /// dtypes rounded once.
    pub(super) fn store_float(
        &self,
        r: FloatValue<'ctx>,
        dtype: DType,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        match dtype {
            DType::F32 | DType::F64 => Ok(self.canonicalize(r, nans)?.into()),
            d => {
                let format =
                    Format::of(d).ok_or_else(|| EmitError::internal("narrowing to a non-float"))?;
                Ok(self.narrow(r, format, nans)?.into())
            }
        }
    }

    /// `r`, or the canonical NaN of its type if `r` is a NaN (`r` itself
    /// under [`Nans::AsComputed`]).
    pub(crate) fn canonicalize(
        &self,
        r: FloatValue<'ctx>,
        nans: Nans,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        if nans == Nans::AsComputed {
            return Ok(r);
        }
        let nan = if r.get_type() == self.ctx.f64_type() {
            self.f64_bits(0x7ff8_0000_0000_0000)?
        } else {
            self.f32_bits(0x7fc0_0000)?
        };
        let is_nan = self
            .b
            .build_float_compare(FloatPredicate::UNO, r, r, "isnan")?;
        Ok(self
            .b
            .build_select(is_nan, nan, r, "canon")?
            .into_float_value())
    }

    /// `v`, a register of `dtype` (f32, f64, or the bits of f16 or bf16),
    /// with a NaN replaced by the canonical one unless `nans` lets it be;
    /// other dtypes as they are.
    pub(crate) fn canonical_value(
        &self,
        v: BasicValueEnum<'ctx>,
        dtype: DType,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if nans == Nans::AsComputed
            || !matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
        {
            return Ok(v);
        }
        if matches!(dtype, DType::F32 | DType::F64) {
            return Ok(self.canonicalize(v.into_float_value(), nans)?.into());
        }
        let Some(format) = Format::of(dtype) else {
            return Ok(v);
        };
        let bits = v.into_int_value();
        let is_nan = self.bits_are_nan(bits, format)?;
        let nan = bits.get_type().const_int(format.canonical_nan(), false);
        Ok(self.b.build_select(is_nan, nan, bits, "canon")?)
    }

    /// [`Self::canonicalize`] on the bits of `r`: an integer test of its
    /// magnitude against infinity's and a select of bit patterns. LLVM
    /// takes a square root's NaN for any NaN, and its SelectionDAG removes
    /// `select(isnan(sqrt x), NaN, sqrt x)` (InstCombine first writes the
    /// test as `x < 0`) on every target; on the bits it cannot.
    pub(crate) fn canonicalize_bits(
        &self,
        r: FloatValue<'ctx>,
        nans: Nans,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        if nans == Nans::AsComputed {
            return Ok(r);
        }
        let b = &self.b;
        let wide = r.get_type() == self.ctx.f64_type();
        let (it, magnitude, infinity, nan) = match wide {
            true => (
                self.ctx.i64_type(),
                0x7fff_ffff_ffff_ffff,
                0x7ff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
            ),
            false => (self.ctx.i32_type(), 0x7fff_ffff, 0x7f80_0000, 0x7fc0_0000),
        };
        let bits = b.build_bit_cast(r, it, "bits")?.into_int_value();
        let mag = b.build_and(bits, it.const_int(magnitude, false), "mag")?;
        let is_nan = b.build_int_compare(
            IntPredicate::UGT,
            mag,
            it.const_int(infinity, false),
            "isnan",
        )?;
        let canon = b.build_select(is_nan, it.const_int(nan, false), bits, "canon")?;
        Ok(b.build_bit_cast(canon, r.get_type(), "value")?
            .into_float_value())
    }

    /// An f32 or f64 value as an f64 (exact).
    pub(super) fn to_f64(&self, v: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let f64t = self.ctx.f64_type();
        if v.get_type() == f64t {
            Ok(v)
        } else {
            Ok(self.b.build_float_ext(v, f64t, "x64")?)
        }
    }

    /// An f64 result rounded once to the float `dtype`.
    pub(super) fn store_rounded_f64(
        &self,
        r: FloatValue<'ctx>,
        dtype: DType,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        match dtype {
            DType::F64 => Ok(self.canonicalize(r, nans)?.into()),
            DType::F32 => {
                let narrowed = self.b.build_float_trunc(r, self.ctx.f32_type(), "f32")?;
                Ok(self.canonicalize(narrowed, nans)?.into())
            }
            d => {
                let format =
                    Format::of(d).ok_or_else(|| EmitError::internal("narrowing to a non-float"))?;
                Ok(self.narrow(r, format, nans)?.into())
            }
        }
    }
}
