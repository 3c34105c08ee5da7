//! sinh, cosh, asinh, acosh, atanh, log1p, expm1 and sigmoid of both math
//! libraries (f64 for the exact one, rounded once by the caller as in
//! [`super::math`]; f32 for the fast one: [`super::math_arith`]), from
//! their `exp`, `expm1` and `log` by the identities below, chosen so that
//! no step cancels or overflows before the result does:
//!
//! * `sinh a = (E + E/(E + 1))/2` with `E = expm1 a` below 22 (f32: 9),
//!   `eᵃ/2` above, and `h·(h/2)` with `h = e^(a/2)` beyond the largest
//!   finite `eᵃ`; `cosh a = (eᵃ + e⁻ᵃ)/2` below 22 (9), then as sinh; both
//!   on `a = |x|`, sinh taking the sign of `x`;
//! * `log1p x = ln u · x/(u − 1)` with `u = 1 + x` rounded (the quotient
//!   corrects the rounding of `u`), `x` itself where `u = 1`, `ln x` beyond
//!   2⁵³ (2²⁴); `expm1` is `super::math`'s with the sign of a zero kept (in
//!   f32 `x·Σ xⁿ/(n+1)!` to degree 10 below ½, `eˣ − 1` above);
//! * `asinh a = log1p(a + a²/(1 + √(1 + a²)))` below 2,
//!   `ln(2a + 1/(√(a² + 1) + a))` below 2²⁸ (2¹²) and `ln a + ln 2` above;
//!   `acosh x = log1p(t + √(2t + t²))`, `t = x − 1`, up to 2, then as asinh;
//!   `atanh a = ½·log1p(2a + 2a²/(1 − a))` below ½ and `½·log1p(2a/(1 − a))`
//!   above;
//! * `sigmoid x = 1/(1 + e⁻ˣ)`, and `eˣ/(1 + eˣ)` for a negative `x`: the
//!   oracle's own formulas.

use super::math_arith::Arith;
use super::trig::inverse_factorials;
use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::FloatValue;
use inkwell::FloatPredicate;

/// From this magnitude on `2a + 1/(…)` in `asinh` (and `2x − 1/(…)` in
/// `acosh`) equals `2a`: the functions become `ln a + ln 2`. 2²⁸, and 2¹²
/// in f32.
fn ln_region(arith: Arith) -> f64 {
    arith.pick(268_435_456.0, 4096.0)
}

/// Below this magnitude sinh and cosh use e^(−a) as well as eᵃ.
fn both_exponentials(arith: Arith) -> f64 {
    arith.pick(22.0, 9.0)
}

/// From here on `eᵃ` may overflow where `eᵃ/2` does not: sinh and cosh
/// square `e^(a/2)` instead (a little below the largest finite `eᵃ`).
fn exp_overflow(arith: Arith) -> f64 {
    arith.pick(709.0, 88.0)
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// sinh x, or cosh x when `cosh`.
    pub(super) fn sinh_cosh(
        &self,
        x: FloatValue<'ctx>,
        cosh: bool,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let arith = self.arith_of(x);
        let a = self.float_intrinsic("llvm.fabs", &[x])?;
        let moderate =
            self.float_intrinsic("llvm.minnum", &[a, self.k(x, both_exponentials(arith))])?;
        let near = if cosh {
            let e = self.exp_in(moderate)?;
            let sum = b.build_float_add(e, b.build_float_div(self.k(x, 1.0), e, "inv")?, "sum")?;
            b.build_float_mul(sum, self.k(x, 0.5), "cosh")?
        } else {
            let e = self.expm1_in(moderate)?;
            let ratio = b.build_float_div(e, b.build_float_add(e, self.k(x, 1.0), "e1")?, "r")?;
            b.build_float_mul(b.build_float_add(e, ratio, "sum")?, self.k(x, 0.5), "sinh")?
        };
        let far = b.build_float_mul(self.exp_in(a)?, self.k(x, 0.5), "half")?;
        let h = self.exp_in(b.build_float_mul(a, self.k(x, 0.5), "a2")?)?;
        let farthest = b.build_float_mul(b.build_float_mul(h, self.k(x, 0.5), "h2")?, h, "hh")?;
        let is_near = self.fcmp(FloatPredicate::OLT, a, self.k(x, both_exponentials(arith)))?;
        let is_farthest = self.fcmp(FloatPredicate::OGT, a, self.k(x, exp_overflow(arith)))?;
        let v = self.select_f(is_farthest, farthest, far)?;
        let v = self.select_f(is_near, near, v)?;
        let v = if cosh {
            v
        } else {
            self.float_intrinsic("llvm.copysign", &[v, x])?
        };
        self.keep_nan(x, v)
    }

    /// ln(1 + x).
    pub(super) fn log1p(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let arith = self.arith_of(x);
        let u = b.build_float_add(self.k(x, 1.0), x, "u")?;
        let corrected = b.build_float_mul(
            self.log_in(u)?,
            b.build_float_div(x, b.build_float_sub(u, self.k(x, 1.0), "u-1")?, "q")?,
            "log1p",
        )?;
        let exact = self.fcmp(FloatPredicate::OEQ, u, self.k(x, 1.0))?;
        let v = self.select_f(exact, x, corrected)?;
        // Only +∞ needs it (∞/∞ in the quotient); from 2⁵³ (2²⁴) on, u = x.
        let large = self.fcmp(
            FloatPredicate::OGT,
            x,
            self.k(x, arith.pick(9.007_199_254_740_992e15, 16_777_216.0)),
        )?;
        let v = self.select_f(large, self.log_in(x)?, v)?;
        self.keep_nan(x, v)
    }

    /// e^x − 1, with `expm1(−0) = −0`.
    pub(super) fn expm1_signed(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let v = self.expm1_in(x)?;
        let zero = self.fcmp(FloatPredicate::OEQ, x, self.k(x, 0.0))?;
        self.select_f(zero, x, v)
    }

    /// asinh x.
    pub(super) fn asinh(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let arith = self.arith_of(x);
        let a = self.float_intrinsic("llvm.fabs", &[x])?;
        let a2 = b.build_float_mul(a, a, "a2")?;
        let root = self.float_intrinsic(
            "llvm.sqrt",
            &[b.build_float_add(a2, self.k(x, 1.0), "a21")?],
        )?;
        let small = self.log1p_in(b.build_float_add(
            a,
            b.build_float_div(a2, b.build_float_add(self.k(x, 1.0), root, "1r")?, "q")?,
            "s",
        )?)?;
        let middle = self.log_in(b.build_float_add(
            b.build_float_mul(a, self.k(x, 2.0), "2a")?,
            b.build_float_div(self.k(x, 1.0), b.build_float_add(root, a, "ra")?, "inv")?,
            "m",
        )?)?;
        let v = self.select_f(
            self.fcmp(FloatPredicate::OLT, a, self.k(x, 2.0))?,
            small,
            middle,
        )?;
        let large = self.fcmp(FloatPredicate::OGT, a, self.k(x, ln_region(arith)))?;
        let v = self.select_f(large, self.log_plus_ln2(a)?, v)?;
        let v = self.float_intrinsic("llvm.copysign", &[v, x])?;
        self.keep_nan(x, v)
    }

    /// acosh x (NaN below 1).
    pub(super) fn acosh(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let arith = self.arith_of(x);
        let t = b.build_float_sub(x, self.k(x, 1.0), "t")?;
        let near_one = self.log1p_in(b.build_float_add(
            t,
            self.float_intrinsic(
                "llvm.sqrt",
                &[self.fma3(t, t, b.build_float_mul(t, self.k(x, 2.0), "2t")?)?],
            )?,
            "s",
        )?)?;
        let root = self.float_intrinsic("llvm.sqrt", &[self.fma3(x, x, self.k(x, -1.0))?])?;
        let middle = self.log_in(b.build_float_sub(
            b.build_float_mul(x, self.k(x, 2.0), "2x")?,
            b.build_float_div(self.k(x, 1.0), b.build_float_add(x, root, "xr")?, "inv")?,
            "m",
        )?)?;
        let v = self.select_f(
            self.fcmp(FloatPredicate::OLE, x, self.k(x, 2.0))?,
            near_one,
            middle,
        )?;
        let large = self.fcmp(FloatPredicate::OGT, x, self.k(x, ln_region(arith)))?;
        let v = self.select_f(large, self.log_plus_ln2(x)?, v)?;
        let below = self.fcmp(FloatPredicate::OLT, x, self.k(x, 1.0))?;
        let v = self.select_f(below, self.k(x, f64::NAN), v)?;
        self.keep_nan(x, v)
    }

    /// atanh x (±∞ at ±1, NaN beyond).
    pub(super) fn atanh(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let a = self.float_intrinsic("llvm.fabs", &[x])?;
        let one_minus = b.build_float_sub(self.k(x, 1.0), a, "1-a")?;
        let two_a = b.build_float_mul(a, self.k(x, 2.0), "2a")?;
        let small = b.build_float_add(
            two_a,
            b.build_float_div(b.build_float_mul(two_a, a, "2a2")?, one_minus, "q")?,
            "s",
        )?;
        let large = b.build_float_div(two_a, one_minus, "l")?;
        let is_small = self.fcmp(FloatPredicate::OLT, a, self.k(x, 0.5))?;
        let v = self.log1p_in(self.select_f(is_small, small, large)?)?;
        let v = b.build_float_mul(v, self.k(x, 0.5), "half")?;
        let v = self.float_intrinsic("llvm.copysign", &[v, x])?;
        self.keep_nan(x, v)
    }

    /// 1 / (1 + e^(−x)), as e^x / (1 + e^x) for a negative x.
    pub(super) fn sigmoid(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let a = self.float_intrinsic("llvm.fabs", &[x])?;
        let e = self.exp_in(b.build_float_neg(a, "na")?)?;
        let d = b.build_float_add(self.k(x, 1.0), e, "d")?;
        let negative = self.fcmp(FloatPredicate::OLT, x, self.k(x, 0.0))?;
        let numerator = self.select_f(negative, e, self.k(x, 1.0))?;
        Ok(b.build_float_div(numerator, d, "sigmoid")?)
    }

    /// ln a + ln 2.
    fn log_plus_ln2(&self, a: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let ln_a = self.log_in(a)?;
        Ok(self
            .b
            .build_float_add(ln_a, self.k(a, std::f64::consts::LN_2), "lln2")?)
    }

    /// e^x − 1 of an f32 `x` (the fast library's; module doc).
    pub(super) fn fast_expm1(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let series = b.build_float_mul(x, self.poly(x, &inverse_factorials(12)[1..])?, "series")?;
        let big = b.build_float_sub(self.fast_exp(x)?, self.c32(1.0), "em1")?;
        let small = self.fcmp(
            FloatPredicate::OLT,
            self.float_intrinsic("llvm.fabs", &[x])?,
            self.c32(0.5),
        )?;
        self.select_f(small, series, big)
    }

    /// `v`, or `x` where `x` is a NaN.
    pub(super) fn keep_nan(
        &self,
        x: FloatValue<'ctx>,
        v: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        self.select_f(nan, x, v)
    }
}
