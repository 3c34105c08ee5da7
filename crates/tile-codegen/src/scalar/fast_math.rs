//! The fast math library (`#[tile_kernel(fast_math)]`): exp, exp2, log,
//! log2, sin, cos, tanh and rsqrt of f32 (and of f16, bf16 and FP8 through
//! f32) computed in f32 arithmetic, where the exact library
//! ([`super::math`]) computes in f64 and rounds once. GPUs run f32 at up to
//! 64 times the f64 rate, so a softmax or an attention kernel is no longer
//! bound by its `exp`. The code is plain LLVM arithmetic as in the exact
//! library, so the accuracy measured on the host holds on every target:
//! tests/emit_fast_math.rs bounds each function's error in f32 ulps against
//! the correctly rounded value, over dense samples and the special values,
//! and docs/backends.md tabulates the bounds.
//!
//! Methods: `exp` — Cody–Waite reduction by ln 2 in two f32 parts and a
//! degree-7 Taylor polynomial, scaled by two exact powers of two (so
//! subnormal results round once); `exp2` — `rint` split, the same
//! polynomial; `log`, `log2` — reduction to [√½, √2), `log1p(f) = f − s·(f −
//! R(s²))` with `s = f/(2+f)`; `sin`, `cos` — Cody–Waite by π/2 in three f32
//! parts for |x| ≤ 2^17 and degree-9/10 Taylor polynomials, larger arguments
//! (and NaN, ±∞) through the exact f64 function; `tanh` — `expm1(2|x|)/(
//! expm1(2|x|) + 2)` with a degree-11 `expm1` polynomial below 0.55 and
//! `1 − 2/(e^(2|x|) + 1)` above; `rsqrt` — `1/sqrt(x)` in f32. `erf`
//! and `sqrt` are the same as without the option. The fast `pow`
//! is in `super::pow`, from this module's `log2` and `exp2`. Division of
//! f32 (and narrower) is `x · (1/y)` with the reciprocal correctly rounded
//! (`fast_div`), within 2 ulps.

use super::math::Library;
use super::trig::{inverse_factorials, sin_cos_series};
use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::{FloatValue, FunctionValue, IntValue};
use inkwell::FloatPredicate;
use tile_ir::{BinaryOp, UnaryOp};

/// ln 2 in two f32 parts: the high part has 16 significant bits, so
/// `k · LN2_HI` is exact for the |k| ≤ 150 that occur.
const LN2_HI: u32 = 0x3f31_7200;
const LN2_LO: u32 = 0x35bf_be8e;
/// log₂e − f32(log₂e).
const LOG2_E_LO: u32 = 0x32a5_7060;
/// π/2 in three f32 parts (24 significant bits each, 72 in all): the sum
/// is within 2^-76 of π/2.
const PIO2: [u32; 3] = [0x3fc9_0fdb, 0xb33b_bd2e, 0xa6f7_2ced];
/// From this magnitude on, `sin` and `cos` take the exact f64 function.
const SIN_COS_FAST_LIMIT: f32 = 131_072.0;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Whether `op` has a fast f32 variant (see the module doc).
    pub(crate) fn has_fast_variant(op: UnaryOp) -> bool {
        matches!(
            op,
            UnaryOp::Exp
                | UnaryOp::Exp2
                | UnaryOp::Log
                | UnaryOp::Log2
                | UnaryOp::Sin
                | UnaryOp::Cos
                | UnaryOp::Tanh
                | UnaryOp::Rsqrt
                | UnaryOp::Tan
                | UnaryOp::Atan
                | UnaryOp::Asin
                | UnaryOp::Acos
                | UnaryOp::Sinh
                | UnaryOp::Cosh
                | UnaryOp::Asinh
                | UnaryOp::Acosh
                | UnaryOp::Atanh
                | UnaryOp::Sigmoid
                | UnaryOp::Log1p
                | UnaryOp::Expm1
                | UnaryOp::Cbrt
        )
    }

    /// Calls the fast f32 function of `op` (`tile.math.<op>.fast.f32`) on
    /// the f32 `x`.
    pub(crate) fn fast_transcendental(
        &self,
        op: UnaryOp,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let name = format!("tile.math.{}.fast.f32", op.name());
        let body = |m: &Self, f, params: &[FloatValue<'ctx>]| m.fast_body(op, f, params[0]);
        self.call_math_function(Library::Fast, &name, op.name(), &[x], body)
    }

    /// The body of the fast f32 function of `op` (in `f`, on its parameter
    /// `x`).
    fn fast_body(
        &self,
        op: UnaryOp,
        f: FunctionValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        Ok(match op {
            UnaryOp::Exp => self.fast_exp(x)?,
            UnaryOp::Exp2 => self.fast_exp2(x)?,
            UnaryOp::Log => self.fast_log(x, false)?,
            UnaryOp::Log2 => self.fast_log(x, true)?,
            UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan => self.fast_sin_cos(f, op, x)?,
            UnaryOp::Tanh => self.fast_tanh(x)?,
            UnaryOp::Atan => self.atan2_body(x, self.c32(1.0))?,
            UnaryOp::Asin => self.asin_acos(x, false)?,
            UnaryOp::Acos => self.asin_acos(x, true)?,
            UnaryOp::Sinh => self.sinh_cosh(x, false)?,
            UnaryOp::Cosh => self.sinh_cosh(x, true)?,
            UnaryOp::Asinh => self.asinh(x)?,
            UnaryOp::Acosh => self.acosh(x)?,
            UnaryOp::Atanh => self.atanh(x)?,
            UnaryOp::Sigmoid => self.sigmoid(x)?,
            UnaryOp::Log1p => self.log1p(x)?,
            UnaryOp::Expm1 => self.expm1_signed(x)?,
            UnaryOp::Cbrt => self.cbrt(x)?,
            UnaryOp::Rsqrt => {
                let root = self.float_intrinsic("llvm.sqrt", &[x])?;
                self.b.build_float_div(self.c32(1.0), root, "rsqrt")?
            }
            other => {
                return Err(EmitError::Internal(format!(
                    "`{}` has no fast variant",
                    other.name()
                )))
            }
        })
    }

    /// Calls the fast f32 function of the two-operand `op` (`pow`,
    /// `atan2`, `hypot`) on the f32 `x` and `y`.
    pub(crate) fn fast_binary_transcendental(
        &self,
        op: BinaryOp,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let name = format!("tile.math.{}.fast.f32", op.name());
        match op {
            BinaryOp::Pow => self.fast_pow(x, y),
            BinaryOp::Atan2 => {
                self.call_math_function(Library::Fast, &name, "atan2", &[x, y], |m, _, p| {
                    m.atan2_body(p[0], p[1])
                })
            }
            BinaryOp::Hypot => {
                self.call_math_function(Library::Fast, &name, "hypot", &[x, y], |m, _, p| {
                    m.hypot_body(p[0], p[1])
                })
            }
            other => Err(EmitError::Internal(format!(
                "`{}` has no fast variant",
                other.name()
            ))),
        }
    }

    pub(super) fn c32(&self, v: f32) -> FloatValue<'ctx> {
        self.ctx.f32_type().const_float(f64::from(v))
    }

    /// e^r for |r| ≤ ln 2 / 2 in f32 (Taylor to degree 7: the truncation is
    /// below 2^-27 relative).
    fn fast_exp_reduced(&self, r: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        self.poly(r, &inverse_factorials(8))
    }

    /// `y · 2^k` for an integral f32 `k` in [-160, 160]: two exact normal
    /// factors, so a subnormal result is rounded once.
    pub(super) fn fast_scale(
        &self,
        y: FloatValue<'ctx>,
        k: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let f32t = self.ctx.f32_type();
        let ki = b.build_float_to_signed_int(k, i32t, "k")?;
        // ⌊k/2⌋ and the rest: y·2^⌊k/2⌋ is exact, and the second product
        // rounds once.
        let half = b.build_right_shift(ki, i32t.const_int(1, false), true, "k1")?;
        let rest = b.build_int_sub(ki, half, "k2")?;
        let pow = |e: IntValue<'ctx>| -> Result<FloatValue<'ctx>, EmitError> {
            let biased = b.build_int_add(e, i32t.const_int(127, false), "be")?;
            let bits = b.build_left_shift(biased, i32t.const_int(23, false), "bits")?;
            Ok(b.build_bit_cast(bits, f32t, "pow")?.into_float_value())
        };
        let y = b.build_float_mul(y, pow(half)?, "y1")?;
        Ok(b.build_float_mul(y, pow(rest)?, "y2")?)
    }

    /// `y` for finite results; +∞ above `over`, +0 below `under`, NaN for
    /// NaN.
    fn fast_exp_limits(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
        over: f32,
        under: f32,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let big = self.fcmp(FloatPredicate::OGT, x, self.c32(over))?;
        let small = self.fcmp(FloatPredicate::OLT, x, self.c32(under))?;
        let y = self.select_f(big, self.c32(f32::INFINITY), y)?;
        let y = self.select_f(small, self.c32(0.0), y)?;
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        self.select_f(nan, x, y)
    }

    /// `x / y` of f32 values as `x · (1/y)`: the reciprocal and the product
    /// each rounded once (within 2 ulps of the quotient; LLVM computes the
    /// reciprocal of a broadcast divisor once for all its quotients). Both
    /// operands are scaled first by 2^24 when |y| < 2^-126 and by 2^-2 when
    /// |y| > 2^126, exactly or where the quotient is out of range anyway,
    /// so that 1/y is a normal number.
    pub(crate) fn fast_div(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let magnitude = self.float_intrinsic("llvm.fabs", &[y])?;
        let small = self.fcmp(FloatPredicate::OLT, magnitude, self.c32(f32::MIN_POSITIVE))?;
        let big = self.fcmp(FloatPredicate::OGT, magnitude, self.c32(2f32.powi(126)))?;
        let down = self.select_f(big, self.c32(0.25), self.c32(1.0))?;
        let scale = self.select_f(small, self.c32(16_777_216.0), down)?;
        let reciprocal =
            b.build_float_div(self.c32(1.0), b.build_float_mul(y, scale, "ys")?, "recip")?;
        let xs = b.build_float_mul(x, scale, "xs")?;
        Ok(b.build_float_mul(xs, reciprocal, "quot")?)
    }

    // `exp` and `exp2` compute from `x` unclamped: outside the limits (and
    // for a NaN) the float-to-int conversion of `k` is poison, and so is
    // the scaled result, but `fast_exp_limits` then selects ±∞, 0 or the
    // NaN instead; inside them, |k| ≤ 150 and every step is defined.
    pub(super) fn fast_exp(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let xl = b.build_float_mul(x, self.c32(std::f32::consts::LOG2_E), "xl")?;
        let k = self.float_intrinsic("llvm.rint", &[xl])?;
        let r = self.fma3(k, self.c32(-f32::from_bits(LN2_HI)), x)?;
        let r = self.fma3(k, self.c32(-f32::from_bits(LN2_LO)), r)?;
        let y = self.fast_scale(self.fast_exp_reduced(r)?, k)?;
        self.fast_exp_limits(x, y, 88.722_84, -103.972_08)
    }

    pub(super) fn fast_exp2(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let k = self.float_intrinsic("llvm.rint", &[x])?;
        let frac = b.build_float_sub(x, k, "frac")?;
        let r = b.build_float_mul(frac, self.c32(std::f32::consts::LN_2), "r")?;
        let y = self.fast_scale(self.fast_exp_reduced(r)?, k)?;
        self.fast_exp_limits(x, y, 128.0, -150.0)
    }

    /// ln x, or log₂ x when `base2`, with the special cases of IEEE log.
    pub(super) fn fast_log(
        &self,
        x: FloatValue<'ctx>,
        base2: bool,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let (m, ef) = self.split_exponent(x)?;
        // log1p(f) = 2·atanh(s) = 2s + s·R(s²) with 2s = f − s·f, so
        // log1p(f) = f − s·(f − R); R = 2s²/3 + 2s⁴/5 + …, |s| ≤ 0.1716.
        let f = b.build_float_sub(m, self.c32(1.0), "f")?;
        let s = b.build_float_div(f, b.build_float_add(f, self.c32(2.0), "f2")?, "s")?;
        let z = b.build_float_mul(s, s, "z")?;
        let coefficients: Vec<f64> = (0..6)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    2.0 / (2 * i + 1) as f64
                }
            })
            .collect();
        let r = self.poly(z, &coefficients)?;
        let correction = b.build_float_mul(s, b.build_float_sub(f, r, "fr")?, "sfr")?;
        let log1p = b.build_float_sub(f, correction, "log1p")?;
        let y = if base2 {
            // e + log1p·log₂e, the product split so it is nearly exact.
            let hi = b.build_float_mul(log1p, self.c32(std::f32::consts::LOG2_E), "hi")?;
            let lo = self.fma3(
                log1p,
                self.c32(std::f32::consts::LOG2_E),
                b.build_float_neg(hi, "nhi")?,
            )?;
            let lo = self.fma3(log1p, self.c32(f32::from_bits(LOG2_E_LO)), lo)?;
            b.build_float_add(ef, b.build_float_add(hi, lo, "l")?, "log2")?
        } else {
            let y = self.fma3(ef, self.c32(f32::from_bits(LN2_LO)), log1p)?;
            self.fma3(ef, self.c32(f32::from_bits(LN2_HI)), y)?
        };
        let zero = self.fcmp(FloatPredicate::OEQ, x, self.c32(0.0))?;
        let negative = self.fcmp(FloatPredicate::OLT, x, self.c32(0.0))?;
        let inf = self.fcmp(FloatPredicate::OEQ, x, self.c32(f32::INFINITY))?;
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        let y = self.select_f(zero, self.c32(f32::NEG_INFINITY), y)?;
        let y = self.select_f(inf, x, y)?;
        let y = self.select_f(negative, self.c32(f32::NAN), y)?;
        self.select_f(nan, x, y)
    }

    /// sin x, cos x or tan x (`op`) in the body of `f`: the f32 path for
    /// |x| ≤ 2^17, the exact f64 function otherwise (and for NaN, ±∞).
    fn fast_sin_cos(
        &self,
        f: FunctionValue<'ctx>,
        op: UnaryOp,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let f32t = self.ctx.f32_type();
        let fast_bb = self.ctx.append_basic_block(f, "fast");
        let exact_bb = self.ctx.append_basic_block(f, "exact");
        let join = self.ctx.append_basic_block(f, "join");
        let magnitude = self.float_intrinsic("llvm.fabs", &[x])?;
        // Unordered: NaN takes the exact path too.
        let large = self.fcmp(FloatPredicate::UGT, magnitude, self.c32(SIN_COS_FAST_LIMIT))?;
        b.build_conditional_branch(large, exact_bb, fast_bb)?;

        b.position_at_end(exact_bb);
        let wide = b.build_float_ext(x, self.ctx.f64_type(), "x64")?;
        let exact = b.build_float_trunc(self.transcendental(op, wide)?, f32t, "exact")?;
        b.build_unconditional_branch(join)?;

        b.position_at_end(fast_bb);
        let (k, s, c) = self.fast_sin_cos_reduced(x)?;
        let fast = match op {
            UnaryOp::Tan => self.tan_in_quadrant(k, s, c)?,
            _ => self.in_quadrant(k, op == UnaryOp::Cos, s, c)?,
        };
        // sin(±0) = ±0, tan(±0) = ±0, and both equal x to f32 precision
        // below 2^-12.
        let fast = if op != UnaryOp::Cos {
            let tiny = self.fcmp(FloatPredicate::OLT, magnitude, self.c32(1.0 / 4096.0))?;
            self.select_f(tiny, x, fast)?
        } else {
            fast
        };
        let fast_end = b
            .get_insert_block()
            .ok_or_else(|| EmitError::internal("no insertion block"))?;
        b.build_unconditional_branch(join)?;

        b.position_at_end(join);
        let phi = b.build_phi(f32t, "sincos")?;
        phi.add_incoming(&[(&exact, exact_bb), (&fast, fast_end)]);
        Ok(phi.as_basic_value().into_float_value())
    }

    /// `(k, sin r, cos r)` of `x = k·π/2 + r` for |x| ≤ 2^17.
    fn fast_sin_cos_reduced(
        &self,
        x: FloatValue<'ctx>,
    ) -> Result<(IntValue<'ctx>, FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let xk = b.build_float_mul(x, self.c32(std::f32::consts::FRAC_2_PI), "xk")?;
        let k = self.float_intrinsic("llvm.rint", &[xk])?;
        let mut r = x;
        for part in PIO2 {
            r = self.fma3(k, self.c32(-f32::from_bits(part)), r)?;
        }
        let z = b.build_float_mul(r, r, "z")?;
        // sin r = r·(1 − z/3! + … + z⁴/9!) and cos r = 1 − z/2! + … − z⁵/10!.
        let (sin_c, cos_c) = sin_cos_series(6);
        let s = b.build_float_mul(r, self.poly(z, &sin_c[..5])?, "sin")?;
        let c = self.poly(z, &cos_c)?;
        let ki = b.build_float_to_signed_int(k, i32t, "ki")?;
        Ok((ki, s, c))
    }

    fn fast_tanh(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        if let Some(hw) = self.hardware_math {
            return self.approx_tanh(hw, x);
        }
        let b = &self.b;
        let a = self.float_intrinsic("llvm.fabs", &[x])?;
        let u = b.build_float_mul(a, self.c32(2.0), "u")?;
        // Below 0.55: expm1(u) = u·Σ u^n/(n+1)! to degree 11 (truncation
        // below 2^-27 relative), tanh = expm1/(expm1 + 2).
        let coefficients: Vec<f64> = inverse_factorials(13)[1..].to_vec();
        let em1 = b.build_float_mul(u, self.poly(u, &coefficients)?, "em1")?;
        // Above: 1 − 2/(e^u + 1), and 1 from 9.01 on (the rounding of
        // tanh there). One division serves both sides: its operands are
        // chosen first (a division is a dozen instructions and, in PTX, a
        // branch to its slow path).
        let e = self.fast_exp(u)?;
        let use_small = self.fcmp(FloatPredicate::OLT, a, self.c32(0.55))?;
        let numerator = self.select_f(use_small, em1, self.c32(2.0))?;
        let denominator = self.select_f(
            use_small,
            b.build_float_add(em1, self.c32(2.0), "d")?,
            b.build_float_add(e, self.c32(1.0), "e1")?,
        )?;
        let q = b.build_float_div(numerator, denominator, "q")?;
        let large = b.build_float_sub(self.c32(1.0), q, "tl")?;
        let t = self.select_f(use_small, q, large)?;
        let saturated = self.fcmp(FloatPredicate::OGT, a, self.c32(9.01))?;
        let t = self.select_f(saturated, self.c32(1.0), t)?;
        let t = self.float_intrinsic("llvm.copysign", &[t, x])?;
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        self.select_f(nan, x, t)
    }
}
