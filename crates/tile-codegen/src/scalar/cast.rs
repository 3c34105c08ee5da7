//! `cast` between any two dtypes with exactly the semantics of
//! `tile_ir::eval`: rounded once, saturating, NaN to 0 for integers, as the
//! table in docs/semantics.md says.

use super::format::Format;
use super::values::{domain, Domain};
use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::values::BasicValueEnum;
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::DType;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// `bitcast x to to`, from `from` of the same width: the register's bits
    /// as `to`'s register (narrow floats already live in integers of their
    /// width), NaN payloads kept; into FP4 and FP6, the byte's low bits.
    pub(crate) fn bitcast(
        &self,
        x: BasicValueEnum<'ctx>,
        from: DType,
        to: DType,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if from.bits() != to.bits() || from.is_bool() || to.is_bool() {
            return Err(EmitError::Unsupported {
                what: format!("`bitcast` from {from} to {to}"),
            });
        }
        let r = self.b.build_bit_cast(x, self.reg_type(to), "bitcast")?;
        if to.value_bits() == to.bits() {
            return Ok(r);
        }
        // FP4 and FP6 keep the low bits of the byte, as the interpreter does.
        let r = r.into_int_value();
        let mask = r.get_type().const_int((1 << to.value_bits()) - 1, false);
        Ok(self.b.build_and(r, mask, "low")?.into())
    }

    /// `cast x to to`, from `from`.
    pub(crate) fn cast(
        &self,
        x: BasicValueEnum<'ctx>,
        from: DType,
        to: DType,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        if from == to {
            return Ok(x);
        }
        let to_type = self.reg_type(to);
        if to.is_bool() {
            return Ok(match domain(from) {
                Domain::Int => {
                    let v = x.into_int_value();
                    b.build_int_compare(IntPredicate::NE, v, v.get_type().const_zero(), "tobool")?
                        .into()
                }
                Domain::Float => {
                    let v = self.widen_operand(x, from)?;
                    b.build_float_compare(
                        FloatPredicate::UNE,
                        v,
                        v.get_type().const_zero(),
                        "tobool",
                    )?
                    .into()
                }
            });
        }
        match (domain(from), domain(to)) {
            (Domain::Int, Domain::Int) => {
                let v = x.into_int_value();
                let t = to_type.into_int_type();
                let (fw, tw) = (from.bits(), to.bits());
                Ok(if tw < fw {
                    b.build_int_truncate(v, t, "trunc")?.into()
                } else if tw == fw {
                    v.into()
                } else if from.is_signed_int() {
                    b.build_int_s_extend(v, t, "sext")?.into()
                } else {
                    b.build_int_z_extend(v, t, "zext")?.into()
                })
            }
            (Domain::Int, Domain::Float) => {
                let v = x.into_int_value();
                match to {
                    DType::F32 | DType::F64 => {
                        let t = to_type.into_float_type();
                        Ok(if from.is_signed_int() {
                            b.build_signed_int_to_float(v, t, "sitofp")?.into()
                        } else {
                            b.build_unsigned_int_to_float(v, t, "uitofp")?.into()
                        })
                    }
                    d => {
                        let format = Format::of(d)
                            .ok_or_else(|| EmitError::internal("cast to a non-float"))?;
                        let from = if from.is_bool() { DType::U8 } else { from };
                        let v = if x.get_type() == self.ctx.bool_type().into() {
                            b.build_int_z_extend(v, self.ctx.i8_type(), "b8")?
                        } else {
                            v
                        };
                        Ok(self.int_to_narrow(v, from, format)?.into())
                    }
                }
            }
            (Domain::Float, Domain::Int) => {
                // Toward zero, saturating, NaN → 0.
                let v = self.widen_operand(x, from)?;
                let name = if to.is_signed_int() {
                    "llvm.fptosi.sat"
                } else {
                    "llvm.fptoui.sat"
                };
                let t = to_type.into_int_type();
                let f = self.intrinsic(name, &[t.into(), v.get_type().into()])?;
                let r = b.build_call(f, &[v.into()], "fptoi")?;
                Ok(r.try_as_basic_value()
                    .basic()
                    .ok_or_else(|| EmitError::internal("fptoi.sat"))?)
            }
            (Domain::Float, Domain::Float) => {
                let f64t = self.ctx.f64_type();
                // Widen exactly (narrow dtypes to f32, f32 to f64 when the
                // target is f64), then round once into the target. A NaN
                // operand's payload does not matter: the result's NaN is
                // canonicalized below, or narrowed to the canonical one.
                let v = if from == DType::F64 {
                    x.into_float_value()
                } else {
                    self.widen_operand(x, from)?
                };
                match to {
                    DType::F64 => {
                        let w = b.build_float_ext(v, f64t, "fpext")?;
                        Ok(self.canonicalize(w, nans)?.into())
                    }
                    DType::F32 => {
                        let r = if v.get_type() == f64t {
                            b.build_float_trunc(v, self.ctx.f32_type(), "fptrunc")?
                        } else {
                            v
                        };
                        Ok(self.canonicalize(r, nans)?.into())
                    }
                    d => {
                        let format = Format::of(d)
                            .ok_or_else(|| EmitError::internal("cast to a non-float"))?;
                        Ok(self.narrow(v, format, nans)?.into())
                    }
                }
            }
        }
    }
}
