//! Unary ops and `fma` with exactly the semantics of `tile_ir::eval`: the
//! math functions through the exact (f64, rounded once) or fast library,
//! `neg`/`abs` on the sign bit, `fma` rounded once.

use super::format::Format;
use super::values::{domain, Domain};
use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::values::{BasicValueEnum, FloatValue};
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::{DType, UnaryOp};

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// `op` on `x` of `dtype`.
    pub(crate) fn unary(
        &self,
        op: UnaryOp,
        dtype: DType,
        x: BasicValueEnum<'ctx>,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        let unsupported = || EmitError::Unsupported {
            what: format!("`{}` on {dtype}", op.name()),
        };
        if dtype == DType::F8E8M0 {
            // A scale takes no arithmetic (`tile_ir::rules`).
            return Err(unsupported());
        }
        if let Domain::Int = domain(dtype) {
            let v = x.into_int_value();
            if dtype.is_bool() {
                return match op {
                    UnaryOp::Not => Ok(b.build_not(v, "not")?.into()),
                    _ => Err(unsupported()),
                };
            }
            return Ok(match op {
                UnaryOp::Not => b.build_not(v, "not")?.into(),
                UnaryOp::Neg => b.build_int_neg(v, "neg")?.into(),
                UnaryOp::Abs if dtype.is_signed_int() => {
                    let neg = b.build_int_compare(
                        IntPredicate::SLT,
                        v,
                        v.get_type().const_zero(),
                        "isneg",
                    )?;
                    let negated = b.build_int_neg(v, "negated")?;
                    b.build_select(neg, negated, v, "abs")?
                }
                _ => return Err(unsupported()),
            });
        }
        match op {
            UnaryOp::Neg | UnaryOp::Abs => return self.sign_op(op, dtype, x),
            UnaryOp::Not => return Err(unsupported()),
            _ => {}
        }
        let v = self.widen_operand(x, dtype)?;
        if let Some(hw) = self.hardware_math.filter(|_| dtype != DType::F64) {
            if Self::has_hardware_variant(op) {
                let r = self.hardware_transcendental(hw, op, v)?;
                return self.store_float(r, dtype, nans);
            }
        }
        if self.fast_math && dtype != DType::F64 && Self::has_fast_variant(op) {
            let r = self.fast_transcendental(op, v)?;
            return self.store_float(r, dtype, nans);
        }
        let r = match op {
            UnaryOp::Floor => self.float_intrinsic("llvm.floor", &[v])?,
            UnaryOp::Ceil => self.float_intrinsic("llvm.ceil", &[v])?,
            UnaryOp::Round => self.float_intrinsic("llvm.round", &[v])?,
            UnaryOp::RoundTiesEven => self.float_intrinsic("llvm.roundeven", &[v])?,
            UnaryOp::Sqrt => {
                let r = self.float_intrinsic("llvm.sqrt", &[v])?;
                if matches!(dtype, DType::F32 | DType::F64) {
                    return Ok(self.canonicalize_bits(r, nans)?.into());
                }
                r
            }
            UnaryOp::Rsqrt => {
                // Defined as 1 / sqrt(x) in f64 (two correct roundings), then
                // rounded once to the dtype.
                let root = self.float_intrinsic("llvm.sqrt", &[self.to_f64(v)?])?;
                let r = b.build_float_div(self.ctx.f64_type().const_float(1.0), root, "rsqrt")?;
                return self.store_rounded_f64(r, dtype, nans);
            }
            _ if op.is_math() => {
                if dtype == DType::F32 && self.outline_exact_math {
                    return Ok(self.transcendental_f32(op, v)?.into());
                }
                let r = self.transcendental(op, self.to_f64(v)?)?;
                return self.store_rounded_f64(r, dtype, nans);
            }
            UnaryOp::RoundTf32 if dtype == DType::F32 => self.round_tf32(v)?,
            _ => return Err(unsupported()),
        };
        self.store_float(r, dtype, nans)
    }

    /// An `f32` rounded to TF32 as `tile_ir::eval::round_tf32` does: half
    /// of the dropped unit added to the bits, the 13 low bits cleared; a NaN
    /// stays a NaN (its bits could carry into the sign).
    pub(crate) fn round_tf32(&self, v: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let bits = b.build_bit_cast(v, i32t, "bits")?.into_int_value();
        let up = b.build_int_add(bits, i32t.const_int(0x1000, false), "up")?;
        let cut = b.build_and(up, i32t.const_int(u64::from(!0x1fffu32), false), "tf32")?;
        let rounded = b
            .build_bit_cast(cut, v.get_type(), "rounded")?
            .into_float_value();
        let nan = b.build_float_compare(FloatPredicate::UNO, v, v, "nan")?;
        Ok(b.build_select(nan, v, rounded, "round")?.into_float_value())
    }

    /// `neg` / `abs` on a float: flip or clear the sign bit; NaN → canonical.
    fn sign_op(
        &self,
        op: UnaryOp,
        dtype: DType,
        x: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        let format =
            Format::of(dtype).ok_or_else(|| EmitError::internal("sign op on a non-float"))?;
        let it = self.int_type(format.reg_width);
        let bits = b.build_bit_cast(x, it, "bits")?.into_int_value();
        let sign = dtype
            .sign_bit()
            .ok_or_else(|| EmitError::internal("sign op on an unsigned float"))?;
        let sign = it.const_int(sign, false);
        let r = if op == UnaryOp::Neg {
            b.build_xor(bits, sign, "neg")?
        } else {
            b.build_and(bits, b.build_not(sign, "m")?, "abs")?
        };
        let nan = self.bits_are_nan(bits, format)?;
        let r = b.build_select(nan, it.const_int(format.canonical_nan(), false), r, "r")?;
        Ok(b.build_bit_cast(r, self.reg_type(dtype), "signop")?)
    }

    /// `fma(a, b, c)` of `dtype`: one rounding.
    pub(crate) fn fma(
        &self,
        dtype: DType,
        a: BasicValueEnum<'ctx>,
        b_: BasicValueEnum<'ctx>,
        c: BasicValueEnum<'ctx>,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if !dtype.is_float() || dtype == DType::F8E8M0 {
            return Err(EmitError::Unsupported {
                what: format!("`fma` on {dtype}"),
            });
        }
        if matches!(dtype, DType::F32 | DType::F64) {
            let r = self.float_intrinsic(
                "llvm.fma",
                &[
                    a.into_float_value(),
                    b_.into_float_value(),
                    c.into_float_value(),
                ],
            )?;
            return Ok(self.canonicalize(r, nans)?.into());
        }
        // Narrow dtypes: the product is exact in f64; the sum is rounded to
        // odd in f64 (TwoSum), then once to the dtype.
        let b = &self.b;
        let f64t = self.ctx.f64_type();
        let wide = |v| -> Result<FloatValue<'ctx>, EmitError> {
            Ok(b.build_float_ext(self.widen_operand(v, dtype)?, f64t, "w")?)
        };
        let (x, y, z) = (wide(a)?, wide(b_)?, wide(c)?);
        let p = b.build_float_mul(x, y, "p")?;
        let s = b.build_float_add(p, z, "s")?;
        // TwoSum: err = (p - (s - z)) + (z - (s - (s - z)))
        let bb = b.build_float_sub(s, p, "bb")?;
        let err = b.build_float_add(
            b.build_float_sub(p, b.build_float_sub(s, bb, "sbb")?, "e1")?,
            b.build_float_sub(z, bb, "e2")?,
            "err",
        )?;
        let i64t = self.ctx.i64_type();
        let sbits = b.build_bit_cast(s, i64t, "sbits")?.into_int_value();
        let inexact =
            b.build_float_compare(FloatPredicate::ONE, err, f64t.const_zero(), "inexact")?;
        let even = b.build_int_compare(
            IntPredicate::EQ,
            b.build_and(sbits, i64t.const_int(1, false), "lsb")?,
            i64t.const_zero(),
            "even",
        )?;
        // Move to the odd neighbour: away from zero when err has s's sign.
        let ebits = b.build_bit_cast(err, i64t, "ebits")?.into_int_value();
        let same_sign = b.build_int_compare(
            IntPredicate::SGE,
            b.build_xor(sbits, ebits, "x")?,
            i64t.const_zero(),
            "same",
        )?;
        let step = b.build_select(
            same_sign,
            i64t.const_int(1, false),
            i64t.const_all_ones(),
            "step",
        )?;
        let odd = b.build_int_add(sbits, step.into_int_value(), "odd")?;
        let fix = b.build_and(inexact, even, "fix")?;
        let bits = b.build_select(fix, odd, sbits, "rto")?;
        let r = b.build_bit_cast(bits, f64t, "r")?.into_float_value();
        self.store_rounded_f64(r, dtype, nans)
    }
}
