//! erf and erfc of the exact library (f64, rounded once by the caller, as in
//! [`super::math`]).
//!
//! erf: below |x| = 2 the series `2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1)/(2n+1)!!`,
//! above it `1 − erfc(|x|)`; erfc(a) for a ≥ ¾: Laplace's continued
//! fraction `e^(−a²)/√π / (a + ½/(a + 1/(a + (3/2)/(a + …))))`, evaluated
//! backward from a depth of `8 + 250/a²` levels (at most 460), which keeps
//! the truncation below the rounding over [¾, ∞); below ¾, `1 − erf x`
//! (erf ≤ 0.72 there, so the difference loses under a bit), and below −¾,
//! `2 − erfc(|x|)`. `e^(−a²)` takes the rounding error of `a²` (an `fma`)
//! as a factor `1 − lo`.

use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::{FloatValue, FunctionValue};
use inkwell::FloatPredicate;
use tile_ir::UnaryOp;

/// Where erfc switches between `1 − erf` and the continued fraction.
const ERFC_FRACTION_FROM: f64 = 0.75;

/// The depth of the continued fraction: `8 + DEPTH_SCALE/a²` levels, at
/// most [`MAX_DEPTH`].
const DEPTH_SCALE: f64 = 250.0;
const MAX_DEPTH: f64 = 460.0;

/// From here on erfc(a) is below the smallest subnormal.
const ERFC_ZERO_FROM: f64 = 28.0;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// erf x = sign(x)·min(1, 2/√π · e^(−x²) · Σ tₙ), t₀ = |x|,
    /// tₙ₊₁ = tₙ · 2x²/(2n+3), the sum running until a term no longer
    /// changes it (at most 160 terms), for |x| < 2; `1 − erfc(|x|)` from
    /// the continued fraction above (80 levels); |x| ≥ 6 gives ±1 directly.
    pub(super) fn erf(
        &self,
        f: FunctionValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let f64t = self.ctx.f64_type();
        let ax = self.float_intrinsic("llvm.fabs", &[x])?;
        let a = self.float_intrinsic("llvm.minnum", &[ax, self.c(6.0)])?;
        let e = self.exp_minus_square(a)?;
        let two_a2 = b.build_float_mul(b.build_float_mul(a, a, "a2")?, self.c(2.0), "2a2")?;
        let pre = self.current_block_of()?;
        let head = self.ctx.append_basic_block(f, "erf.loop");
        let done = self.ctx.append_basic_block(f, "erf.done");
        b.build_unconditional_branch(head)?;
        b.position_at_end(head);
        let n = b.build_phi(f64t, "n")?;
        let term = b.build_phi(f64t, "term")?;
        let sum = b.build_phi(f64t, "sum")?;
        n.add_incoming(&[(&self.c(0.0), pre)]);
        term.add_incoming(&[(&a, pre)]);
        sum.add_incoming(&[(&self.c(0.0), pre)]);
        let (nv, tv, sv) = (
            n.as_basic_value().into_float_value(),
            term.as_basic_value().into_float_value(),
            sum.as_basic_value().into_float_value(),
        );
        let new_sum = b.build_float_add(sv, tv, "s")?;
        let denominator = self.fma3(nv, self.c(2.0), self.c(3.0))?;
        let next = b.build_float_div(b.build_float_mul(tv, two_a2, "t2")?, denominator, "t")?;
        let next_n = b.build_float_add(nv, self.c(1.0), "n1")?;
        let unchanged = self.fcmp(FloatPredicate::OEQ, new_sum, sv)?;
        let limit = self.fcmp(FloatPredicate::OGE, next_n, self.c(160.0))?;
        let stop = b.build_or(unchanged, limit, "stop")?;
        let latch = self.current_block_of()?;
        n.add_incoming(&[(&next_n, latch)]);
        term.add_incoming(&[(&next, latch)]);
        sum.add_incoming(&[(&new_sum, latch)]);
        b.build_conditional_branch(stop, done, head)?;
        b.position_at_end(done);
        let y = b.build_float_mul(
            b.build_float_mul(new_sum, e, "se")?,
            self.c(std::f64::consts::FRAC_2_SQRT_PI),
            "erf",
        )?;
        let y = self.float_intrinsic("llvm.minnum", &[y, self.c(1.0)])?;
        // From |x| = 2 on, 1 − erfc(x): the series' rounding errors would
        // show in the last bits of a result this close to 1.
        let erfc = self.erfc_fraction(f, a, e, self.c(80.0))?;
        let from_erfc = b.build_float_sub(self.c(1.0), erfc, "1-erfc")?;
        let tail = self.fcmp(FloatPredicate::OGE, a, self.c(2.0))?;
        let y = self.select_f(tail, from_erfc, y)?;
        let big = self.fcmp(FloatPredicate::OGE, ax, self.c(6.0))?;
        let y = self.select_f(big, self.c(1.0), y)?;
        let y = self.float_intrinsic("llvm.copysign", &[y, x])?;
        self.keep_nan(x, y)
    }

    /// erfc x (module doc).
    pub(super) fn erfc(
        &self,
        f: FunctionValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let ax = self.float_intrinsic("llvm.fabs", &[x])?;
        let a = self.float_intrinsic("llvm.minnum", &[ax, self.c(ERFC_ZERO_FROM)])?;
        let near = self.fcmp(FloatPredicate::OLT, a, self.c(ERFC_FRACTION_FROM))?;
        // The fraction's depth; none where 1 − erf is taken instead (a NaN
        // gives the largest depth and stays NaN).
        let depth = b.build_float_add(
            self.c(8.0),
            b.build_float_div(self.c(DEPTH_SCALE), b.build_float_mul(a, a, "a2")?, "d")?,
            "depth",
        )?;
        let depth = self.float_intrinsic("llvm.ceil", &[depth])?;
        let depth = self.float_intrinsic("llvm.minnum", &[depth, self.c(MAX_DEPTH)])?;
        let depth = self.select_f(near, self.c(0.0), depth)?;
        let e = self.exp_minus_square(a)?;
        let tail = self.erfc_fraction(f, a, e, depth)?;
        let from_erf =
            b.build_float_sub(self.c(1.0), self.transcendental(UnaryOp::Erf, x)?, "1-erf")?;
        let reflected = b.build_float_sub(self.c(2.0), tail, "2-erfc")?;
        let negative = self.fcmp(FloatPredicate::OLT, x, self.c(0.0))?;
        let far = self.select_f(negative, reflected, tail)?;
        let v = self.select_f(near, from_erf, far)?;
        self.keep_nan(x, v)
    }

    /// e^(−a²), with the rounding error `lo` of `a²` (an `fma`) applied as
    /// the factor `1 − lo`.
    fn exp_minus_square(&self, a: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let a2 = b.build_float_mul(a, a, "a2")?;
        let a2_lo = self.fma3(a, a, b.build_float_neg(a2, "na2")?)?;
        let e = self.exp(b.build_float_neg(a2, "neg")?)?;
        self.fma3(e, b.build_float_neg(a2_lo, "nlo")?, e)
    }

    /// erfc(a) = `e`/√π divided by Laplace's continued fraction at `a`,
    /// evaluated backward over `depth` levels (an integral f64; 0 gives
    /// `e/(a√π)`).
    fn erfc_fraction(
        &self,
        f: FunctionValue<'ctx>,
        a: FloatValue<'ctx>,
        e: FloatValue<'ctx>,
        depth: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let f64t = self.ctx.f64_type();
        let pre = self.current_block_of()?;
        let head = self.ctx.append_basic_block(f, "erfc.head");
        let body = self.ctx.append_basic_block(f, "erfc.level");
        let done = self.ctx.append_basic_block(f, "erfc.done");
        b.build_unconditional_branch(head)?;
        b.position_at_end(head);
        let level = b.build_phi(f64t, "level")?;
        let t = b.build_phi(f64t, "t")?;
        level.add_incoming(&[(&depth, pre)]);
        t.add_incoming(&[(&a, pre)]);
        let (lv, tv) = (
            level.as_basic_value().into_float_value(),
            t.as_basic_value().into_float_value(),
        );
        let more = self.fcmp(FloatPredicate::OGE, lv, self.c(1.0))?;
        b.build_conditional_branch(more, body, done)?;
        b.position_at_end(body);
        let next_t = b.build_float_add(
            a,
            b.build_float_div(b.build_float_mul(lv, self.c(0.5), "h")?, tv, "q")?,
            "nt",
        )?;
        let next_level = b.build_float_sub(lv, self.c(1.0), "nl")?;
        level.add_incoming(&[(&next_level, body)]);
        t.add_incoming(&[(&next_t, body)]);
        b.build_unconditional_branch(head)?;
        b.position_at_end(done);
        Ok(b.build_float_div(
            b.build_float_mul(e, self.c(0.5 * std::f64::consts::FRAC_2_SQRT_PI), "ep")?,
            tv,
            "erfc",
        )?)
    }
}
