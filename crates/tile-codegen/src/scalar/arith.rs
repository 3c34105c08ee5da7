//! Binary ops, comparisons and `select` with exactly the semantics of
//! `tile_ir::eval` (docs/semantics.md): integers wrap, `x / 0 == 0` and
//! `x % 0 == x`, shifts past the width shift every bit out; float arithmetic
//! on f16, bf16 and FP8 is computed in f32 and rounded once; `min`/`max` are
//! IEEE `minimum`/`maximum`.

use super::values::{domain, Domain};
use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::{BinaryOp, CmpPred, DType};

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// `op` on `a` and `b` of `dtype`.
    pub(crate) fn binary(
        &self,
        op: BinaryOp,
        dtype: DType,
        a: BasicValueEnum<'ctx>,
        b: BasicValueEnum<'ctx>,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if dtype == DType::F8E8M0 {
            // A scale takes no arithmetic (`tile_ir::rules`).
            return Err(EmitError::Unsupported {
                what: format!("`{}` on {dtype}", op.name()),
            });
        }
        match domain(dtype) {
            Domain::Int => self
                .int_binary(op, dtype, a.into_int_value(), b.into_int_value())
                .map(Into::into),
            Domain::Float => self.float_binary(op, dtype, a, b, nans),
        }
    }

    fn int_binary(
        &self,
        op: BinaryOp,
        dtype: DType,
        x: IntValue<'ctx>,
        y: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let t = x.get_type();
        let signed = dtype.is_signed_int();
        let zero = t.const_zero();
        let unsupported = || EmitError::Unsupported {
            what: format!("`{}` on {dtype}", op.name()),
        };
        if dtype.is_bool() && !matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor) {
            return Err(unsupported());
        }
        let is_zero = b.build_int_compare(IntPredicate::EQ, y, zero, "y0")?;
        let minus_one = t.const_all_ones();
        Ok(match op {
            BinaryOp::Add => b.build_int_add(x, y, "add")?,
            BinaryOp::Sub => b.build_int_sub(x, y, "sub")?,
            BinaryOp::Mul => b.build_int_mul(x, y, "mul")?,
            BinaryOp::And => b.build_and(x, y, "and")?,
            BinaryOp::Or => b.build_or(x, y, "or")?,
            BinaryOp::Xor => b.build_xor(x, y, "xor")?,
            BinaryOp::Div | BinaryOp::Rem => {
                // Divide by a safe divisor, then patch y == 0 (and, signed,
                // y == -1, where MIN / -1 would trap).
                let is_m1 = b.build_int_compare(IntPredicate::EQ, y, minus_one, "ym1")?;
                let bad = if signed {
                    b.build_or(is_zero, is_m1, "bad")?
                } else {
                    is_zero
                };
                let safe = b
                    .build_select(bad, t.const_int(1, false), y, "safe")?
                    .into_int_value();
                let (q, on_zero, on_m1) = if op == BinaryOp::Div {
                    let q = if signed {
                        b.build_int_signed_div(x, safe, "q")?
                    } else {
                        b.build_int_unsigned_div(x, safe, "q")?
                    };
                    (q, zero, b.build_int_neg(x, "negx")?)
                } else {
                    let r = if signed {
                        b.build_int_signed_rem(x, safe, "r")?
                    } else {
                        b.build_int_unsigned_rem(x, safe, "r")?
                    };
                    (r, x, zero)
                };
                let q = if signed {
                    b.build_select(is_m1, on_m1, q, "m1")?.into_int_value()
                } else {
                    q
                };
                b.build_select(is_zero, on_zero, q, "divrem")?
                    .into_int_value()
            }
            BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Hypot => return Err(unsupported()),
            BinaryOp::Min | BinaryOp::Max => {
                let pred = match (op == BinaryOp::Min, signed) {
                    (true, true) => IntPredicate::SLT,
                    (true, false) => IntPredicate::ULT,
                    (false, true) => IntPredicate::SGT,
                    (false, false) => IntPredicate::UGT,
                };
                let keep_x = b.build_int_compare(pred, x, y, "cmp")?;
                b.build_select(keep_x, x, y, "minmax")?.into_int_value()
            }
            BinaryOp::Shl | BinaryOp::Shr => {
                // Amounts outside 0..width shift every bit out.
                let width = t.const_int(u64::from(dtype.bits()), false);
                let in_range = b.build_int_compare(IntPredicate::ULT, y, width, "inrange")?;
                let amount = b
                    .build_select(in_range, y, zero, "amount")?
                    .into_int_value();
                if op == BinaryOp::Shl {
                    let r = b.build_left_shift(x, amount, "shl")?;
                    b.build_select(in_range, r, zero, "shl")?.into_int_value()
                } else {
                    let r = b.build_right_shift(x, amount, signed, "shr")?;
                    let out = if signed {
                        b.build_right_shift(
                            x,
                            t.const_int(u64::from(dtype.bits() - 1), false),
                            true,
                            "fill",
                        )?
                    } else {
                        zero
                    };
                    b.build_select(in_range, r, out, "shr")?.into_int_value()
                }
            }
        })
    }

    fn float_binary(
        &self,
        op: BinaryOp,
        dtype: DType,
        a: BasicValueEnum<'ctx>,
        b_: BasicValueEnum<'ctx>,
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if self.in_own_type(op, dtype, nans) {
            return Ok(self.half_binary(op, dtype, (a, b_))?.into());
        }
        let b = &self.b;
        let (x, y) = (
            self.widen_operand(a, dtype)?,
            self.widen_operand(b_, dtype)?,
        );
        let r = match op {
            BinaryOp::Add => b.build_float_add(x, y, "fadd")?,
            BinaryOp::Sub => b.build_float_sub(x, y, "fsub")?,
            BinaryOp::Mul => b.build_float_mul(x, y, "fmul")?,
            BinaryOp::Div if dtype == DType::F64 => b.build_float_div(x, y, "fdiv")?,
            BinaryOp::Div => match self.hardware_math {
                Some(hw) => self.hardware_div(hw, x, y)?,
                None if self.fast_math => self.fast_div(x, y)?,
                None => b.build_float_div(x, y, "fdiv")?,
            },
            BinaryOp::Rem => {
                // Exact in f64 for every dtype, so rounding back is exact.
                let r = self.fmod(self.to_f64(x)?, self.to_f64(y)?)?;
                return self.store_rounded_f64(r, dtype, nans);
            }
            _ if op.is_math() && self.fast_math && dtype != DType::F64 => {
                self.fast_binary_transcendental(op, x, y)?
            }
            _ if op.is_math() => {
                // Computed in f64 and rounded once, like the unary math.
                let r = self.binary_transcendental(op, self.to_f64(x)?, self.to_f64(y)?)?;
                return self.store_rounded_f64(r, dtype, nans);
            }
            BinaryOp::Min | BinaryOp::Max if self.ieee_min_max && dtype == DType::F32 => {
                // The back end's lowering of the same semantics, shorter than
                // the selects below (`Target::uses_min_max_intrinsics`).
                // Narrower floats keep the selects, which return an
                // operand's own bits: rounding the f32 result back would
                // saturate an FP8 infinity.
                let name = match op {
                    BinaryOp::Min => "llvm.minimum",
                    _ => "llvm.maximum",
                };
                self.float_intrinsic(name, &[x, y])?
            }
            BinaryOp::Min | BinaryOp::Max => {
                // IEEE minimum/maximum: NaN if either is NaN, -0 < +0; the
                // chosen operand's bits are kept.
                let either_nan = b.build_float_compare(FloatPredicate::UNO, x, y, "nan")?;
                let below = self.is_below(x, y)?;
                let pick_a = if op == BinaryOp::Min {
                    below
                } else {
                    b.build_not(below, "notbelow")?
                };
                // Max keeps `a` on ties (`is_below(a, b)` false): `b` only when a < b.
                let chosen = b.build_select(pick_a, a, b_, "chosen")?;
                let nan = self.store_float(self.f32_bits(0x7fc0_0000)?, dtype, nans)?;
                let nan = match dtype {
                    DType::F64 => self.f64_bits(0x7ff8_0000_0000_0000)?.into(),
                    _ => nan,
                };
                return Ok(b.build_select(either_nan, nan, chosen, "minmax")?);
            }
            _ => {
                return Err(EmitError::Unsupported {
                    what: format!("`{}` on {dtype}", op.name()),
                })
            }
        };
        self.store_float(r, dtype, nans)
    }

    /// Whether `x` precedes `y` in the order of IEEE `minimum` (numeric,
    /// `-0 < +0`), for non-NaN operands.
    pub(crate) fn is_below(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let lt = b.build_float_compare(FloatPredicate::OLT, x, y, "lt")?;
        let eq = b.build_float_compare(FloatPredicate::OEQ, x, y, "eq")?;
        let it = self.int_type(x.get_type().get_bit_width());
        let xs = b.build_int_compare(
            IntPredicate::SLT,
            b.build_bit_cast(x, it, "xb")?.into_int_value(),
            it.const_zero(),
            "xneg",
        )?;
        let ys = b.build_int_compare(
            IntPredicate::SGE,
            b.build_bit_cast(y, it, "yb")?.into_int_value(),
            it.const_zero(),
            "ypos",
        )?;
        let signed_zero = b.build_and(eq, b.build_and(xs, ys, "signs")?, "sz")?;
        Ok(b.build_or(lt, signed_zero, "below")?)
    }

    /// `pred` on `a` and `b` of `dtype`: a `bool`. Float comparisons with a
    /// NaN are false, except `ne`.
    pub(crate) fn compare(
        &self,
        pred: CmpPred,
        dtype: DType,
        a: BasicValueEnum<'ctx>,
        b_: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        if dtype.is_bool() && !matches!(pred, CmpPred::Eq | CmpPred::Ne) {
            return Err(EmitError::Unsupported {
                what: format!("`{}` on bool", pred.name()),
            });
        }
        Ok(match domain(dtype) {
            Domain::Int => {
                let signed = dtype.is_signed_int();
                let p = match pred {
                    CmpPred::Eq => IntPredicate::EQ,
                    CmpPred::Ne => IntPredicate::NE,
                    CmpPred::Lt if signed => IntPredicate::SLT,
                    CmpPred::Lt => IntPredicate::ULT,
                    CmpPred::Le if signed => IntPredicate::SLE,
                    CmpPred::Le => IntPredicate::ULE,
                    CmpPred::Gt if signed => IntPredicate::SGT,
                    CmpPred::Gt => IntPredicate::UGT,
                    CmpPred::Ge if signed => IntPredicate::SGE,
                    CmpPred::Ge => IntPredicate::UGE,
                };
                b.build_int_compare(p, a.into_int_value(), b_.into_int_value(), "cmp")?
                    .into()
            }
            Domain::Float => {
                let (x, y) = (
                    self.widen_operand(a, dtype)?,
                    self.widen_operand(b_, dtype)?,
                );
                let p = match pred {
                    CmpPred::Eq => FloatPredicate::OEQ,
                    CmpPred::Ne => FloatPredicate::UNE,
                    CmpPred::Lt => FloatPredicate::OLT,
                    CmpPred::Le => FloatPredicate::OLE,
                    CmpPred::Gt => FloatPredicate::OGT,
                    CmpPred::Ge => FloatPredicate::OGE,
                };
                b.build_float_compare(p, x, y, "fcmp")?.into()
            }
        })
    }

    /// `select c, a, b` (any dtype).
    pub(crate) fn select(
        &self,
        c: BasicValueEnum<'ctx>,
        a: BasicValueEnum<'ctx>,
        b_: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        Ok(self.b.build_select(c.into_int_value(), a, b_, "select")?)
    }
}
