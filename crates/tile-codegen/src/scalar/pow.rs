//! `pow`, exact and fast, from plain LLVM arithmetic like the rest of the
//! math library ([`super::math`]).
//!
//! The exact function (`tile.math.pow.f64`) computes `e^(y·ln|x|)` with
//! `ln|x|` as a double-double (`H + L`, about 2^-60 relative): the
//! mantissa's `atanh` series starts from `s = f/(2 + f)` with the quotient's
//! remainder carried as `s_lo`, and `e·ln 2` is added with an error-free
//! sum. The product `y·(H + L)` keeps its rounding error through an `fma`,
//! and both low parts enter `e^r` as `e^r_hi·(1 + r_lo)` after the exact
//! Cody–Waite reduction. Without the low parts, the error of `y·ln|x|`
//! (up to 710 in magnitude) would cost ten bits of the f64 result.
//!
//! The fast function (`tile.math.pow.fast.f32`, under `fast_math`) computes
//! `2^(y·log₂|x|)` with the fast f32 `log2` and `exp2`: its relative error
//! grows with `|y·log₂|x||` (docs/backends.md).
//!
//! Both share the special values of C99 `pow` (what the oracle's `libm`
//! returns): `pow(x, ±0) = 1` and `pow(1, y) = 1` even for a NaN; a finite
//! negative base to a non-integer power is NaN; a negative base to an odd
//! integer power is negative (`pow(-0, 3) = -0`, `pow(-0, -3) = -∞`);
//! `pow(±1, ±∞) = 1`; `|x| < 1` to `+∞` is `+0` and to `-∞` is `+∞`, and
//! the reverse for `|x| > 1`.

use super::math::{Library, LN2_HI, LN2_LO};
use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

/// Terms of the `atanh` series of the double-double `ln`: `s² < 0.0295`, so
/// the first omitted term is below 2^-70 of the result.
const LOG_SERIES_TERMS: u32 = 14;

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Calls the exact f64 `pow` on `x` and `y`.
    pub(crate) fn pow(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        self.call_math_function(
            Library::Exact,
            "tile.math.pow.f64",
            "pow",
            &[x, y],
            |m, _, p| {
                let ax = m.float_intrinsic("llvm.fabs", &[p[0]])?;
                let (hi, lo) = m.log_double_double(ax)?;
                let magnitude = m.exp_of_product(p[1], hi, lo)?;
                m.pow_special_values(p[0], p[1], magnitude)
            },
        )
    }

    /// Calls the fast f32 `pow` on `x` and `y` (f32 values).
    pub(crate) fn fast_pow(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        self.call_math_function(
            Library::Fast,
            "tile.math.pow.fast.f32",
            "pow",
            &[x, y],
            |m, _, p| {
                let ax = m.float_intrinsic("llvm.fabs", &[p[0]])?;
                let l = m.fast_log(ax, true)?;
                let t = m.b.build_float_mul(p[1], l, "ylog2")?;
                let magnitude = m.fast_exp2(t)?;
                m.pow_special_values(p[0], p[1], magnitude)
            },
        )
    }

    /// `ln a` for a positive finite `a`, as `hi + lo` (|lo| ≤ ulp(hi)/2).
    fn log_double_double(
        &self,
        a: FloatValue<'ctx>,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let (m, e) = self.split_exponent(a)?;
        // f = m − 1 is exact (Sterbenz); d = 2 + f as d + d_lo exactly.
        let f = b.build_float_sub(m, self.c(1.0), "f")?;
        let d = b.build_float_add(f, self.c(2.0), "d")?;
        let d_lo = b.build_float_add(b.build_float_sub(self.c(2.0), d, "2-d")?, f, "d_lo")?;
        // s = f/(d + d_lo) as s + s_lo: the remainder f − s·d is exact.
        let s = b.build_float_div(f, d, "s")?;
        let remainder = self.fma3(b.build_float_neg(s, "ns")?, d, f)?;
        let remainder = b.build_float_sub(remainder, b.build_float_mul(s, d_lo, "sdlo")?, "rem")?;
        let s_lo = b.build_float_div(remainder, d, "s_lo")?;
        // ln m = 2·atanh(s + s_lo) = 2s + (2/3)s³ + s⁵·Σ 2s^(2i)/(2i+5)
        // + 2·s_lo·(1 + s²). The s³ term weighs up to 1% of the result, so
        // it is formed as a double-double; the rest's rounding is below
        // 2^-63 of the result.
        let s2 = b.build_float_mul(s, s, "s2")?;
        let s2_lo = self.fma3(s, s, b.build_float_neg(s2, "ns2")?)?;
        let s3 = b.build_float_mul(s2, s, "s3")?;
        let s3_lo = self.fma3(s2, s, b.build_float_neg(s3, "ns3")?)?;
        let s3_lo = self.fma3(s2_lo, s, s3_lo)?;
        let two_thirds = 2.0 / 3.0;
        let two_thirds_lo = (-3.0f64).mul_add(two_thirds, 2.0) / 3.0;
        let cube = b.build_float_mul(s3, self.c(two_thirds), "cube")?;
        let cube_lo = self.fma3(s3, self.c(two_thirds), b.build_float_neg(cube, "nc")?)?;
        let cube_lo = self.fma3(s3_lo, self.c(two_thirds), cube_lo)?;
        let cube_lo = self.fma3(s3, self.c(two_thirds_lo), cube_lo)?;
        let coefficients: Vec<f64> = (2..LOG_SERIES_TERMS)
            .map(|i| 2.0 / f64::from(2 * i + 1))
            .collect();
        let rest = b.build_float_mul(
            b.build_float_mul(s3, s2, "s5")?,
            self.poly(s2, &coefficients)?,
            "rest",
        )?;
        let two_s_lo = b.build_float_mul(s_lo, self.c(2.0), "2slo")?;
        let (series_hi, cube_err) = self.two_sum(b.build_float_mul(s, self.c(2.0), "2s")?, cube)?;
        let series_lo = b.build_float_add(
            b.build_float_add(cube_err, cube_lo, "clo")?,
            b.build_float_add(rest, self.fma3(two_s_lo, s2, two_s_lo)?, "rlo")?,
            "slo",
        )?;
        // + e·ln 2: e·LN2_HI is exact, its sum with 2s error-free.
        let e_hi = b.build_float_mul(e, self.c(f64::from_bits(LN2_HI)), "ehi")?;
        let (sum, err) = self.two_sum(e_hi, series_hi)?;
        let lo = b.build_float_add(
            b.build_float_add(err, series_lo, "lo1")?,
            b.build_float_mul(e, self.c(f64::from_bits(LN2_LO)), "elo")?,
            "lo2",
        )?;
        // Renormalize: |lo| ≤ ulp(hi)/2.
        let hi = b.build_float_add(sum, lo, "hi")?;
        let lo = b.build_float_sub(lo, b.build_float_sub(hi, sum, "dh")?, "lo")?;
        Ok((hi, lo))
    }

    /// `a + b` as `(s, err)` with `s + err == a + b` exactly (Knuth's
    /// TwoSum, no ordering needed).
    pub(super) fn two_sum(
        &self,
        a: FloatValue<'ctx>,
        b_: FloatValue<'ctx>,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let s = b.build_float_add(a, b_, "s")?;
        let bb = b.build_float_sub(s, a, "bb")?;
        let err = b.build_float_add(
            b.build_float_sub(a, b.build_float_sub(s, bb, "sb")?, "e1")?,
            b.build_float_sub(b_, bb, "e2")?,
            "err",
        )?;
        Ok((s, err))
    }

    /// `e^(y·(hi + lo))`: +∞ above the overflow threshold, +0 below the
    /// underflow one, for any non-NaN product.
    fn exp_of_product(
        &self,
        y: FloatValue<'ctx>,
        hi: FloatValue<'ctx>,
        lo: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let p = b.build_float_mul(y, hi, "p")?;
        let p_lo = self.fma3(y, hi, b.build_float_neg(p, "np")?)?;
        let p_lo = self.fma3(y, lo, p_lo)?;
        // p = k·ln 2 + r + r_lo: k·LN2_HI and its difference with p are
        // exact (Sterbenz); k·LN2_LO and r's sum with it carry their
        // rounding errors into r_lo, so that e^r_lo ≈ 1 + r_lo.
        let k = self.float_intrinsic(
            "llvm.rint",
            &[b.build_float_mul(p, self.c(std::f64::consts::LOG2_E), "pl")?],
        )?;
        // Keep k finite for huge p (the result is then chosen below).
        let k = self.float_intrinsic("llvm.maxnum", &[k, self.c(-2200.0)])?;
        let k = self.float_intrinsic("llvm.minnum", &[k, self.c(2200.0)])?;
        let r = self.fma3(k, self.c(-f64::from_bits(LN2_HI)), p)?;
        let t = b.build_float_mul(k, self.c(f64::from_bits(LN2_LO)), "t")?;
        let t_err = self.fma3(
            k,
            self.c(f64::from_bits(LN2_LO)),
            b.build_float_neg(t, "nt")?,
        )?;
        let (r, r_err) = self.two_sum(r, b.build_float_neg(t, "mt")?)?;
        let r_lo = b.build_float_add(b.build_float_sub(r_err, t_err, "re")?, p_lo, "r_lo")?;
        let e = self.exp_reduced_with_low_part(r, r_lo)?;
        let v = self.scale(e, k)?;
        let over = self.fcmp(FloatPredicate::OGT, p, self.c(709.8))?;
        let under = self.fcmp(FloatPredicate::OLT, p, self.c(-745.2))?;
        let v = self.select_f(over, self.c(f64::INFINITY), v)?;
        self.select_f(under, self.c(0.0), v)
    }

    /// `e^(r + r_lo)` for |r| ≤ ln 2 / 2 and a tiny `r_lo`, as `1 + q`
    /// with `q = r + r²·(1/2 + r/6 + …)` (Taylor to degree 13) and
    /// `q·(1 + r_lo) + r_lo` summed before the final rounding, so that the
    /// result is within about half an ulp more than correctly rounded.
    fn exp_reduced_with_low_part(
        &self,
        r: FloatValue<'ctx>,
        r_lo: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let mut coefficients = Vec::new();
        let mut factorial = 1.0f64;
        for n in 2..=13u32 {
            factorial *= f64::from(n);
            coefficients.push(1.0 / factorial);
        }
        let r2 = b.build_float_mul(r, r, "r2")?;
        let q = self.fma3(r2, self.poly(r, &coefficients)?, r)?;
        let q = b.build_float_add(q, self.fma3(r_lo, q, r_lo)?, "q")?;
        Ok(b.build_float_add(self.c(1.0), q, "e")?)
    }

    /// The result of `pow(x, y)` given `magnitude`, the value of
    /// `|x|^y` for positive finite `|x|` and finite `y` (in the type of
    /// `x`): every special value of C99 `pow` chosen over it.
    fn pow_special_values(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
        magnitude: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let ty = x.get_type();
        let k = |v: f64| ty.const_float(v);
        let (zero, one, inf) = (k(0.0), k(1.0), k(f64::INFINITY));
        let ax = self.float_intrinsic("llvm.fabs", &[x])?;
        let ay = self.float_intrinsic("llvm.fabs", &[y])?;
        let y_negative = self.fcmp(FloatPredicate::OLT, y, zero)?;
        // |x| = 0 or ∞, or y = ±∞: the magnitude is 0, ∞ or 1.
        let zero_base = self.select_f(y_negative, inf, zero)?;
        let infinite_base = self.select_f(y_negative, zero, inf)?;
        let below_one = self.fcmp(FloatPredicate::OLT, ax, one)?;
        let grows = b.build_int_compare(IntPredicate::EQ, below_one, y_negative, "grows")?;
        let infinite_power = self.select_f(grows, inf, zero)?;
        let unit_base = self.fcmp(FloatPredicate::OEQ, ax, one)?;
        let infinite_power = self.select_f(unit_base, one, infinite_power)?;
        let mut v = magnitude;
        for (condition, value) in [
            (self.fcmp(FloatPredicate::OEQ, ax, zero)?, zero_base),
            (self.fcmp(FloatPredicate::OEQ, ax, inf)?, infinite_base),
            (self.fcmp(FloatPredicate::OEQ, ay, inf)?, infinite_power),
        ] {
            v = self.select_f(condition, value, v)?;
        }
        // The sign: negative for a negative base (−0 included) to an odd
        // integer power.
        let (integer, odd) = self.integer_parity(y)?;
        let bits = self.int_type(ty.get_bit_width());
        let x_bits = b.build_bit_cast(x, bits, "xbits")?.into_int_value();
        let sign = b.build_int_compare(IntPredicate::SLT, x_bits, bits.const_zero(), "xneg")?;
        let negate = b.build_and(sign, odd, "negate")?;
        v = self.select_f(negate, b.build_float_neg(v, "neg")?, v)?;
        // A finite negative base to a non-integer power, and NaN operands.
        let finite_negative = b.build_and(
            self.fcmp(FloatPredicate::OLT, x, zero)?,
            self.fcmp(FloatPredicate::ONE, x, k(f64::NEG_INFINITY))?,
            "finneg",
        )?;
        let not_integer = b.build_not(integer, "nonint")?;
        let invalid = b.build_or(
            b.build_and(finite_negative, not_integer, "negbase")?,
            self.fcmp(FloatPredicate::UNO, x, y)?,
            "invalid",
        )?;
        v = self.select_f(invalid, k(f64::NAN), v)?;
        // pow(x, ±0) = pow(1, y) = 1, even for NaN.
        let unit = b.build_or(
            self.fcmp(FloatPredicate::OEQ, y, zero)?,
            self.fcmp(FloatPredicate::OEQ, x, one)?,
            "unit",
        )?;
        self.select_f(unit, one, v)
    }

    /// Whether `y` is an integer (±∞ counts as an even one) and whether it
    /// is an odd one.
    fn integer_parity(
        &self,
        y: FloatValue<'ctx>,
    ) -> Result<(IntValue<'ctx>, IntValue<'ctx>), EmitError> {
        let b = &self.b;
        let ty = y.get_type();
        let integer = self.fcmp(
            FloatPredicate::OEQ,
            self.float_intrinsic("llvm.floor", &[y])?,
            y,
        )?;
        // y/2 is exact; it is an integer unless y is odd (from 2^53 on, in
        // f64, and 2^24, in f32, every float is even).
        let half = b.build_float_mul(y, ty.const_float(0.5), "half")?;
        let half_integer = self.fcmp(
            FloatPredicate::OEQ,
            self.float_intrinsic("llvm.floor", &[half])?,
            half,
        )?;
        let odd = b.build_and(integer, b.build_not(half_integer, "oddhalf")?, "odd")?;
        Ok((integer, odd))
    }
}
