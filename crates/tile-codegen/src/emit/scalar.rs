//! Every scalar op of the tile IR in LLVM IR, with exactly the semantics of
//! `tile_ir::eval` (docs/semantics.md): integers wrap, `x / 0 == 0` and
//! `x % 0 == x`, shifts past the width shift every bit out; float arithmetic
//! on f16, bf16 and FP8 is computed in f32 and rounded once; every computed
//! NaN is the canonical NaN; `min`/`max` are IEEE `minimum`/`maximum`; casts
//! round once, saturate and send NaN to 0 as the table in the docs says.

use super::float::Format;
use super::{EmitError, Emitter};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, UnaryOp};

/// How a value of a dtype is computed on: as an integer, or as an f32/f64
/// float after widening.
enum Domain {
    Int,
    Float,
}

fn domain(dtype: DType) -> Domain {
    if dtype.is_float() {
        Domain::Float
    } else {
        Domain::Int
    }
}

impl<'ctx> Emitter<'_, 'ctx> {
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

    /// A computed f32/f64 result stored as `dtype`: NaN canonicalized, narrow
    /// dtypes rounded once.
    fn store_float(
        &self,
        r: FloatValue<'ctx>,
        dtype: DType,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        match dtype {
            DType::F32 | DType::F64 => Ok(self.canonicalize(r)?.into()),
            d => {
                let format =
                    Format::of(d).ok_or_else(|| EmitError::internal("narrowing to a non-float"))?;
                Ok(self.narrow(r, format)?.into())
            }
        }
    }

    /// `r`, or the canonical NaN of its type if `r` is a NaN (`r` itself
    /// while [`Emitter::keep_nan`] is set).
    pub(crate) fn canonicalize(&self, r: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        if self.keep_nan.get() {
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

    /// `op` on `a` and `b` of `dtype`.
    pub(crate) fn binary(
        &self,
        op: BinaryOp,
        dtype: DType,
        a: BasicValueEnum<'ctx>,
        b: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        match domain(dtype) {
            Domain::Int => self
                .int_binary(op, dtype, a.into_int_value(), b.into_int_value())
                .map(Into::into),
            Domain::Float => self.float_binary(op, dtype, a, b),
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
            BinaryOp::Pow => return Err(unsupported()),
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
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        let (x, y) = (self.widen(a, dtype)?, self.widen(b_, dtype)?);
        let r = match op {
            BinaryOp::Add => b.build_float_add(x, y, "fadd")?,
            BinaryOp::Sub => b.build_float_sub(x, y, "fsub")?,
            BinaryOp::Mul => b.build_float_mul(x, y, "fmul")?,
            BinaryOp::Div => b.build_float_div(x, y, "fdiv")?,
            BinaryOp::Rem => {
                // Exact in f64 for every dtype, so rounding back is exact.
                let r = self.fmod(self.to_f64(x)?, self.to_f64(y)?)?;
                return self.store_rounded_f64(r, dtype);
            }
            BinaryOp::Pow if self.fast_math && dtype != DType::F64 => self.fast_pow(x, y)?,
            BinaryOp::Pow => {
                // Computed in f64 and rounded once, like the unary math.
                let r = self.pow(self.to_f64(x)?, self.to_f64(y)?)?;
                return self.store_rounded_f64(r, dtype);
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
                let nan = self.store_float(self.f32_bits(0x7fc0_0000)?, dtype)?;
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
        self.store_float(r, dtype)
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
                let (x, y) = (self.widen(a, dtype)?, self.widen(b_, dtype)?);
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

    /// `op` on `x` of `dtype`.
    pub(crate) fn unary(
        &self,
        op: UnaryOp,
        dtype: DType,
        x: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        let unsupported = || EmitError::Unsupported {
            what: format!("`{}` on {dtype}", op.name()),
        };
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
        let v = self.widen(x, dtype)?;
        if self.fast_math && dtype != DType::F64 && Self::has_fast_variant(op) {
            let r = self.fast_transcendental(op, v)?;
            return self.store_float(r, dtype);
        }
        let r = match op {
            UnaryOp::Floor => self.float_intrinsic("llvm.floor", &[v])?,
            UnaryOp::Ceil => self.float_intrinsic("llvm.ceil", &[v])?,
            UnaryOp::Sqrt => self.float_intrinsic("llvm.sqrt", &[v])?,
            UnaryOp::Rsqrt => {
                // Defined as 1 / sqrt(x) in f64 (two correct roundings), then
                // rounded once to the dtype.
                let root = self.float_intrinsic("llvm.sqrt", &[self.to_f64(v)?])?;
                let r = b.build_float_div(self.ctx.f64_type().const_float(1.0), root, "rsqrt")?;
                return self.store_rounded_f64(r, dtype);
            }
            UnaryOp::Exp
            | UnaryOp::Exp2
            | UnaryOp::Log
            | UnaryOp::Log2
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tanh
            | UnaryOp::Erf => {
                let r = self.transcendental(op, self.to_f64(v)?)?;
                return self.store_rounded_f64(r, dtype);
            }
            UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Not => return Err(unsupported()),
        };
        self.store_float(r, dtype)
    }

    /// An f32 or f64 value as an f64 (exact).
    fn to_f64(&self, v: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let f64t = self.ctx.f64_type();
        if v.get_type() == f64t {
            Ok(v)
        } else {
            Ok(self.b.build_float_ext(v, f64t, "x64")?)
        }
    }

    /// An f64 result rounded once to the float `dtype`.
    fn store_rounded_f64(
        &self,
        r: FloatValue<'ctx>,
        dtype: DType,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        match dtype {
            DType::F64 => Ok(self.canonicalize(r)?.into()),
            DType::F32 => {
                let narrowed = self.b.build_float_trunc(r, self.ctx.f32_type(), "f32")?;
                Ok(self.canonicalize(narrowed)?.into())
            }
            d => {
                let format =
                    Format::of(d).ok_or_else(|| EmitError::internal("narrowing to a non-float"))?;
                Ok(self.narrow(r, format)?.into())
            }
        }
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
        let it = self.int_type(format.width);
        let bits = b.build_bit_cast(x, it, "bits")?.into_int_value();
        let sign = it.const_int(1 << (format.width - 1), false);
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
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if !dtype.is_float() {
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
            return Ok(self.canonicalize(r)?.into());
        }
        // Narrow dtypes: the product is exact in f64; the sum is rounded to
        // odd in f64 (TwoSum), then once to the dtype.
        let b = &self.b;
        let f64t = self.ctx.f64_type();
        let wide = |v| -> Result<FloatValue<'ctx>, EmitError> {
            Ok(b.build_float_ext(self.widen(v, dtype)?, f64t, "w")?)
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
        self.store_rounded_f64(r, dtype)
    }

    /// `cast x to to`, from `from`.
    pub(crate) fn cast(
        &self,
        x: BasicValueEnum<'ctx>,
        from: DType,
        to: DType,
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
                    let v = self.widen(x, from)?;
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
                let v = self.widen(x, from)?;
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
                // target is f64), then round once into the target.
                let v = if from == DType::F64 {
                    x.into_float_value()
                } else {
                    self.widen(x, from)?
                };
                match to {
                    DType::F64 => {
                        let w = b.build_float_ext(v, f64t, "fpext")?;
                        Ok(self.canonicalize(w)?.into())
                    }
                    DType::F32 => {
                        let r = if v.get_type() == f64t {
                            b.build_float_trunc(v, self.ctx.f32_type(), "fptrunc")?
                        } else {
                            v
                        };
                        Ok(self.canonicalize(r)?.into())
                    }
                    d => {
                        let format = Format::of(d)
                            .ok_or_else(|| EmitError::internal("cast to a non-float"))?;
                        Ok(self.narrow(v, format)?.into())
                    }
                }
            }
        }
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
