//! cbrt and hypot of both math libraries (f64 for the exact one, rounded
//! once by the caller as in [`super::math`]; f32 for the fast one:
//! [`super::math_arith`]).
//!
//! cbrt: `|x| = m·2^e` (`m` in [√½, √2)), `e = 3q + r`, so `∛|x| =
//! ∛(m·2^r)·2^q` with `m·2^r` in [0.7, 5.7): a quadratic first guess (2.5%
//! off at worst), two steps of Halley's iteration `y·(y³ + 2a)/(2y³ + a)`
//! (cubic: 10⁻¹⁵), and one Newton step on the residual `a − y³` computed
//! with `fma`s, which leaves only the final rounding. hypot: both operands
//! scaled by a power of two (in f64 2⁻⁶⁰⁰ above 2⁵⁰⁰ and 2⁶⁰⁰ below 2⁻⁵⁰⁰;
//! in f32 2⁻⁷⁰ above 2⁶⁰ and 2⁹⁰ below 2⁻⁶⁰) so that the squares neither
//! overflow nor lose the smaller one, `√(fma(a, a, b·b))`, scaled back
//! exactly.

use super::math_arith::Arith;
use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::FloatValue;
use inkwell::FloatPredicate;

/// The quadratic first guess of `∛a` on [0.7, 5.7], fitted by least
/// squares of the relative error.
const CBRT_GUESS: [f64; 3] = [
    0.691_003_383_709_432,
    0.332_725_601_751_288_85,
    -0.026_111_641_050_336_053,
];

/// hypot's scaling in `arith`: above `2^from` both operands are scaled
/// by `2^−down`, below `2^−from` by `2^up`.
fn hypot_scaling(arith: Arith) -> (i32, i32, i32) {
    match arith {
        Arith::F64 => (500, 600, 600),
        Arith::F32 => (60, 70, 90),
    }
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// The real cube root of `x`.
    pub(super) fn cbrt(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let ax = self.float_intrinsic("llvm.fabs", &[x])?;
        let (m, e) = self.split_exponent(ax)?;
        let q =
            self.float_intrinsic("llvm.floor", &[b.build_float_div(e, self.k(x, 3.0), "e3")?])?;
        let r = self.fma3(q, self.k(x, -3.0), e)?;
        // 2^r for r in {0, 1, 2}: a = m·2^r exactly.
        let pow_r = self.select_f(
            self.fcmp(FloatPredicate::OEQ, r, self.k(x, 0.0))?,
            self.k(x, 1.0),
            self.select_f(
                self.fcmp(FloatPredicate::OEQ, r, self.k(x, 1.0))?,
                self.k(x, 2.0),
                self.k(x, 4.0),
            )?,
        )?;
        let a = b.build_float_mul(m, pow_r, "a")?;
        let mut y = self.poly(a, &CBRT_GUESS)?;
        for _ in 0..2 {
            let y3 = b.build_float_mul(b.build_float_mul(y, y, "y2")?, y, "y3")?;
            let num = self.fma3(a, self.k(x, 2.0), y3)?;
            let den = self.fma3(y3, self.k(x, 2.0), a)?;
            y = b.build_float_div(b.build_float_mul(y, num, "yn")?, den, "halley")?;
        }
        // a − y³ exactly enough: y² = y2 + y2_lo, y²·y = y3 + y3_lo.
        let y2 = b.build_float_mul(y, y, "y2")?;
        let y2_lo = self.fma3(y, y, b.build_float_neg(y2, "ny2")?)?;
        let y3 = b.build_float_mul(y2, y, "y3")?;
        let y3_lo = self.fma3(y2_lo, y, self.fma3(y2, y, b.build_float_neg(y3, "ny3")?)?)?;
        let residual = b.build_float_sub(b.build_float_sub(a, y3, "r1")?, y3_lo, "res")?;
        let step = b.build_float_div(
            residual,
            b.build_float_mul(y2, self.k(x, 3.0), "3y2")?,
            "step",
        )?;
        let y = b.build_float_add(y, step, "newton")?;
        let v = self.float_intrinsic("llvm.copysign", &[self.scale_in(y, q)?, x])?;
        // ±0, ±∞ and NaN are their own cube roots.
        let zero = self.fcmp(FloatPredicate::OEQ, x, self.k(x, 0.0))?;
        let not_finite = self.fcmp(FloatPredicate::UGE, ax, self.k(x, f64::INFINITY))?;
        self.select_f(b.build_or(zero, not_finite, "self")?, x, v)
    }

    /// Calls the exact f64 `hypot(x, y)` (`tile.math.hypot.f64`).
    pub(super) fn hypot(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        self.call_math_function(
            super::math::Library::Exact,
            "tile.math.hypot.f64",
            "hypot",
            &[x, y],
            |m, _, p| m.hypot_body(p[0], p[1]),
        )
    }

    /// hypot(x, y) in the arithmetic of `x`.
    pub(super) fn hypot_body(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let (ax, ay) = (
            self.float_intrinsic("llvm.fabs", &[x])?,
            self.float_intrinsic("llvm.fabs", &[y])?,
        );
        let big = self.float_intrinsic("llvm.maxnum", &[ax, ay])?;
        let small = self.float_intrinsic("llvm.minnum", &[ax, ay])?;
        let (from, down, up) = hypot_scaling(self.arith_of(x));
        let power = |e: i32| self.k(x, 2f64.powi(e));
        let over = self.fcmp(FloatPredicate::OGT, big, power(from))?;
        let under = self.fcmp(FloatPredicate::OLT, big, power(-from))?;
        let scale = self.select_f(
            over,
            power(-down),
            self.select_f(under, power(up), self.k(x, 1.0))?,
        )?;
        let unscale = self.select_f(
            over,
            power(down),
            self.select_f(under, power(-up), self.k(x, 1.0))?,
        )?;
        let (bs, ss) = (
            b.build_float_mul(big, scale, "bs")?,
            b.build_float_mul(small, scale, "ss")?,
        );
        let sum = self.fma3(bs, bs, b.build_float_mul(ss, ss, "s2")?)?;
        let v = b.build_float_mul(self.float_intrinsic("llvm.sqrt", &[sum])?, unscale, "hypot")?;
        // An infinite operand wins over a NaN; otherwise a NaN is NaN.
        let inf = self.k(x, f64::INFINITY);
        let infinite = b.build_or(
            self.fcmp(FloatPredicate::OEQ, ax, inf)?,
            self.fcmp(FloatPredicate::OEQ, ay, inf)?,
            "inf",
        )?;
        let nan = b.build_or(
            self.fcmp(FloatPredicate::UNO, x, x)?,
            self.fcmp(FloatPredicate::UNO, y, y)?,
            "nan",
        )?;
        let v = self.select_f(nan, self.k(x, f64::NAN), v)?;
        self.select_f(infinite, inf, v)
    }
}
