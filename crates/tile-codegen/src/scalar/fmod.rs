//! The float `rem`: C's `fmod`, exact, by long division of the integer
//! significands (one subtract-and-shift per bit of exponent difference, at
//! most 2,100 steps for f64). It is defined once per module for f64 as the
//! internal `tile.math.fmod.f64`; every narrower dtype widens exactly to
//! f64, and since an `fmod` result is exactly representable in its
//! operands' format, rounding it back is exact too.

use super::ScalarEmitter;
use crate::EmitError;
use inkwell::module::Linkage;
use inkwell::values::{FloatValue, FunctionValue, IntValue};
use inkwell::IntPredicate;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// `fmod(x, y)` for f64 operands.
    pub(crate) fn fmod(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let f = self.fmod_function()?;
        self.b
            .build_call(f, &[x.into(), y.into()], "fmod")?
            .try_as_basic_value()
            .basic()
            .map(|v| v.into_float_value())
            .ok_or_else(|| EmitError::internal("fmod returned nothing"))
    }

    fn fmod_function(&self) -> Result<FunctionValue<'ctx>, EmitError> {
        const NAME: &str = "tile.math.fmod.f64";
        if let Some(f) = self.module.get_function(NAME) {
            return Ok(f);
        }
        let f64t = self.ctx.f64_type();
        let i64t = self.ctx.i64_type();
        let f = self.module.add_function(
            NAME,
            f64t.fn_type(&[f64t.into(), f64t.into()], false),
            Some(Linkage::Internal),
        );
        let e = self.nested();
        let b = &e.b;
        let c = |v: u64| i64t.const_int(v, false);
        let entry = self.ctx.append_basic_block(f, "entry");
        let divide = self.ctx.append_basic_block(f, "divide");
        let step = self.ctx.append_basic_block(f, "step");
        let finish = self.ctx.append_basic_block(f, "finish");
        let special = self.ctx.append_basic_block(f, "special");
        b.position_at_end(entry);
        let param = |n| -> Result<FloatValue<'ctx>, EmitError> {
            Ok(f.get_nth_param(n)
                .ok_or_else(|| EmitError::internal("fmod parameter"))?
                .into_float_value())
        };
        let (x, y) = (param(0)?, param(1)?);
        let xb = b.build_bit_cast(x, i64t, "xb")?.into_int_value();
        let yb = b.build_bit_cast(y, i64t, "yb")?.into_int_value();
        let sign = b.build_and(xb, c(1 << 63), "sign")?;
        let ax = b.build_and(xb, c(!(1 << 63)), "ax")?;
        let ay = b.build_and(yb, c(!(1 << 63)), "ay")?;
        // NaN for y = 0, x infinite or either NaN; x itself when |x| < |y|
        // (this covers y infinite); the long division otherwise.
        let inf = c(0x7ff0_0000_0000_0000);
        let nan_case = b.build_or(
            b.build_or(
                b.build_int_compare(IntPredicate::EQ, ay, c(0), "y0")?,
                b.build_int_compare(IntPredicate::UGE, ax, inf, "xinf")?,
                "a",
            )?,
            b.build_int_compare(IntPredicate::UGT, ay, inf, "ynan")?,
            "nancase",
        )?;
        let small = b.build_int_compare(IntPredicate::ULT, ax, ay, "small")?;
        let early = b.build_or(nan_case, small, "early")?;
        b.build_conditional_branch(early, special, divide)?;

        b.position_at_end(special);
        let r = b.build_select(nan_case, e.f64_bits(0x7ff8_0000_0000_0000)?, x, "r")?;
        b.build_return(Some(&r))?;

        b.position_at_end(divide);
        let (ex, mx) = e.unpack(ax)?;
        let (ey, my) = e.unpack(ay)?;
        let steps = b.build_int_sub(ex, ey, "steps")?;
        b.build_unconditional_branch(step)?;

        // mx ← (mx ≥ my ? mx − my : mx), then shifted left, once per step.
        b.position_at_end(step);
        let m = b.build_phi(i64t, "m")?;
        let left = b.build_phi(i64t, "left")?;
        m.add_incoming(&[(&mx, divide)]);
        left.add_incoming(&[(&steps, divide)]);
        let (mv, lv) = (
            m.as_basic_value().into_int_value(),
            left.as_basic_value().into_int_value(),
        );
        let reduced = e.subtract_if_above(mv, my)?;
        let more = b.build_int_compare(IntPredicate::SGT, lv, c(0), "more")?;
        let shifted = b.build_left_shift(reduced, c(1), "shifted")?;
        let next_left = b.build_int_sub(lv, c(1), "nextleft")?;
        m.add_incoming(&[(&shifted, step)]);
        left.add_incoming(&[(&next_left, step)]);
        b.build_conditional_branch(more, step, finish)?;

        // The remainder is `reduced` at exponent ey: renormalize and pack.
        b.position_at_end(finish);
        let zero = b.build_int_compare(IntPredicate::EQ, reduced, c(0), "zero")?;
        let lz = e.ctlz(reduced)?;
        let shift = b.build_int_sub(lz, c(11), "shift")?;
        let shift = b
            .build_select(zero, c(0), shift, "shift0")?
            .into_int_value();
        let norm = b.build_left_shift(reduced, shift, "norm")?;
        let exp = b.build_int_sub(ey, shift, "exp")?;
        let normal = b.build_or(
            b.build_left_shift(exp, c(52), "eb")?,
            b.build_and(norm, c((1 << 52) - 1), "mb")?,
            "normal",
        )?;
        // Below the normal range: shift the significand down (only zeros
        // leave: the result is a multiple of the smallest subnormal).
        let down = b.build_int_sub(c(1), exp, "down")?;
        let down = b.build_select(
            b.build_int_compare(IntPredicate::SGT, down, c(63), "far")?,
            c(63),
            down,
            "downc",
        )?;
        let sub = b.build_right_shift(norm, down.into_int_value(), false, "sub")?;
        let is_sub = b.build_int_compare(IntPredicate::SLT, exp, c(1), "issub")?;
        let bits = b
            .build_select(is_sub, sub, normal, "bits")?
            .into_int_value();
        let bits = b.build_select(zero, c(0), bits, "bits0")?.into_int_value();
        let bits = b.build_or(bits, sign, "signed")?;
        let r = b.build_bit_cast(bits, f64t, "r")?;
        b.build_return(Some(&r))?;
        Ok(f)
    }

    /// The exponent (as for a normal number, subnormals normalized) and the
    /// 53-bit significand of the magnitude bits `a` of a finite non-zero
    /// f64.
    fn unpack(&self, a: IntValue<'ctx>) -> Result<(IntValue<'ctx>, IntValue<'ctx>), EmitError> {
        let b = &self.b;
        let i64t = self.ctx.i64_type();
        let c = |v: u64| i64t.const_int(v, false);
        let exp = b.build_right_shift(a, c(52), false, "e")?;
        let man = b.build_and(a, c((1 << 52) - 1), "m")?;
        let is_sub = b.build_int_compare(IntPredicate::EQ, exp, c(0), "sub")?;
        let with_bit = b.build_or(man, c(1 << 52), "mi")?;
        let shift = b.build_int_sub(self.ctlz(man)?, c(11), "s")?;
        let normalized = b.build_left_shift(man, shift, "mn")?;
        let sub_exp = b.build_int_sub(c(1), shift, "se")?;
        let e = b
            .build_select(is_sub, sub_exp, exp, "exp")?
            .into_int_value();
        let m = b
            .build_select(is_sub, normalized, with_bit, "sig")?
            .into_int_value();
        Ok((e, m))
    }

    fn ctlz(&self, v: IntValue<'ctx>) -> Result<IntValue<'ctx>, EmitError> {
        self.intrinsic_int(
            "llvm.ctlz",
            &[v.into(), self.ctx.bool_type().const_zero().into()],
            v.get_type(),
        )
    }

    fn subtract_if_above(
        &self,
        m: IntValue<'ctx>,
        d: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let b = &self.b;
        let above = b.build_int_compare(IntPredicate::UGE, m, d, "ge")?;
        let diff = b.build_int_sub(m, d, "diff")?;
        Ok(b.build_select(above, diff, m, "rem")?.into_int_value())
    }
}
