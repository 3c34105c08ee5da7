//! atan, atan2, asin and acos of both math libraries: in f64 for the exact
//! one (rounded once by the caller, as in [`super::math`]), in f32 for the
//! fast one, by one method ([`super::math_arith`]).
//!
//! Everything goes through one kernel, the arctangent of a ratio `t` in
//! [0, 1]: with `c = k/8` the nearest eighth, `atan t = atan c + atan u`,
//! `u = (t − c)/(1 + t·c)`, where `t − c` is exact (Sterbenz), `|u| ≤ 1/16`
//! and `atan u` is its Taylor series to `u¹⁷` in f64 and to `u⁷` in f32
//! (the first omitted term is below 2⁻⁶⁴, resp. 2⁻²⁶, of `u`); `atan c` is
//! a double-double constant (a pair of f32s in f32). `atan2(y, x)`
//! divides the smaller magnitude by the larger (so `t ≤ 1` without a
//! reciprocal), takes `π/2 − ` the kernel when they were swapped and
//! `π − ` the result for a negative `x`, with π/2 and π as double-doubles;
//! `atan x = atan2(x, 1)`; `asin x = atan2(x, √(1 − x²))` and
//! `acos x = atan2(√(1 − x²), x)`, with `1 − x²` as one `fma` below ½ and as
//! `(1 − |x|)(1 + |x|)` above, where `1 − |x|` is exact. The measured
//! errors are in docs/backends.md.

use super::math_arith::Arith;
use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::FloatValue;
use inkwell::{FloatPredicate, IntPredicate};
use tile_ir::BinaryOp;

/// `atan(k/8)` for `k` in 0..=8 as double-doubles `(hi, lo)`: the value to
/// 200 bits rounded to f64, and the rest rounded to f64.
const ATAN_EIGHTHS: [(u64, u64); 9] = [
    (0, 0),
    (0x3fbf_d5ba_9aac_2f6e, 0xbc4c_d376_8676_0c17),
    (0x3fcf_5b75_f92c_80dd, 0x3c68_ab6e_3cf7_afbd),
    (0x3fd6_f619_41e4_def1, 0xbc7c_63aa_e6f6_e918),
    (0x3fdd_ac67_0561_bb4f, 0x3c7a_2b7f_222f_65e2),
    (0x3fe1_e00b_abde_feb4, 0xbc59_28df_287a_668f),
    (0x3fe4_978f_a326_9ee1, 0x3c72_419a_87f2_a458),
    (0x3fe7_00a7_c578_4634, 0xbc78_c34d_25aa_def6),
    (0x3fe9_21fb_5444_2d18, 0x3c81_a626_3314_5c07),
];

/// π/2 and π as double-doubles.
const PI_OVER_2: (u64, u64) = (0x3ff9_21fb_5444_2d18, 0x3c91_a626_3314_5c07);
const PI: (u64, u64) = (0x4009_21fb_5444_2d18, 0x3ca1_a626_3314_5c07);

/// `(-1)ⁿ/(2n + 1)`: the Taylor coefficients of `atan u / u` in `u²`.
fn atan_series(terms: usize) -> Vec<f64> {
    (0..terms)
        .map(|n| {
            let c = 1.0 / (2 * n + 1) as f64;
            if n % 2 == 0 {
                c
            } else {
                -c
            }
        })
        .collect()
}

/// The double-double of `bits` in `arith`: the f64 pair, or for f32 the
/// high part rounded to f32 and the rest of the sum rounded to f32 (`hi64
/// − hi32` is exact in f64).
fn pair(arith: Arith, (hi, lo): (u64, u64)) -> (f64, f64) {
    let (hi, lo) = (f64::from_bits(hi), f64::from_bits(lo));
    match arith {
        Arith::F64 => (hi, lo),
        Arith::F32 => {
            let hi32 = f64::from(hi as f32);
            (hi32, f64::from(((hi - hi32) + lo) as f32))
        }
    }
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Calls the exact f64 `atan2(y, x)` (`tile.math.atan2.f64`).
    pub(super) fn atan2(
        &self,
        y: FloatValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        self.call_math_function(
            super::math::Library::Exact,
            "tile.math.atan2.f64",
            "atan2",
            &[y, x],
            |m, _, p| m.atan2_body(p[0], p[1]),
        )
    }

    /// atan2(y, x) in the arithmetic of `x` (a call of its library's
    /// function).
    fn atan2_in(
        &self,
        y: FloatValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        match self.arith_of(x) {
            Arith::F64 => self.atan2(y, x),
            Arith::F32 => self.fast_binary_transcendental(BinaryOp::Atan2, y, x),
        }
    }

    /// asin x, or acos x when `acos`.
    pub(super) fn asin_acos(
        &self,
        x: FloatValue<'ctx>,
        acos: bool,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let one = self.k(x, 1.0);
        let a = self.float_intrinsic("llvm.fabs", &[x])?;
        let near_zero = self.fma3(b.build_float_neg(a, "na")?, a, one)?;
        let near_one = b.build_float_mul(
            b.build_float_sub(one, a, "1-a")?,
            b.build_float_add(one, a, "1+a")?,
            "1-a2",
        )?;
        let small = self.fcmp(FloatPredicate::OLT, a, self.k(x, 0.5))?;
        // NaN for |x| > 1 (a negative square), as both functions are.
        let root =
            self.float_intrinsic("llvm.sqrt", &[self.select_f(small, near_zero, near_one)?])?;
        if acos {
            self.atan2_in(root, x)
        } else {
            self.atan2_in(x, root)
        }
    }

    /// atan2(y, x) with C99's special values, in the arithmetic of `x`.
    pub(super) fn atan2_body(
        &self,
        y: FloatValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let arith = self.arith_of(x);
        let (ay, ax) = (
            self.float_intrinsic("llvm.fabs", &[y])?,
            self.float_intrinsic("llvm.fabs", &[x])?,
        );
        let swap = self.fcmp(FloatPredicate::OGT, ay, ax)?;
        let t = b.build_float_div(
            self.select_f(swap, ax, ay)?,
            self.select_f(swap, ay, ax)?,
            "t",
        )?;
        let (hi, lo) = self.atan_of_ratio(t)?;
        let direct = b.build_float_add(hi, lo, "direct")?;
        let swapped = self.constant_minus(pair(arith, PI_OVER_2), hi, lo)?;
        let r = self.select_f(swap, swapped, direct)?;
        // 0/0 and ∞/∞ give the angles of C99: 0 and π/4 (before the sign
        // of x and y apply).
        let zero = self.k(x, 0.0);
        let both_zero = b.build_and(
            self.fcmp(FloatPredicate::OEQ, ay, zero)?,
            self.fcmp(FloatPredicate::OEQ, ax, zero)?,
            "zeros",
        )?;
        let r = self.select_f(both_zero, zero, r)?;
        let inf = self.k(x, f64::INFINITY);
        let both_inf = b.build_and(
            self.fcmp(FloatPredicate::OEQ, ay, inf)?,
            self.fcmp(FloatPredicate::OEQ, ax, inf)?,
            "infs",
        )?;
        let r = self.select_f(both_inf, self.k(x, std::f64::consts::FRAC_PI_4), r)?;
        // A negative x (−0 included) reflects the angle: π − r.
        let it = self.int_type(x.get_type().get_bit_width());
        let x_bits = b.build_bit_cast(x, it, "xbits")?.into_int_value();
        let x_negative = b.build_int_compare(IntPredicate::SLT, x_bits, it.const_zero(), "xneg")?;
        let reflected = self.constant_minus(pair(arith, PI), r, zero)?;
        let r = self.select_f(x_negative, reflected, r)?;
        let r = self.float_intrinsic("llvm.copysign", &[r, y])?;
        let nan = b.build_or(
            self.fcmp(FloatPredicate::UNO, x, x)?,
            self.fcmp(FloatPredicate::UNO, y, y)?,
            "nan",
        )?;
        self.select_f(nan, self.k(x, f64::NAN), r)
    }

    /// `(c_hi − hi) + (c_lo − lo)` for the double-double constant `c`.
    fn constant_minus(
        &self,
        (c_hi, c_lo): (f64, f64),
        hi: FloatValue<'ctx>,
        lo: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let head = b.build_float_sub(self.k(hi, c_hi), hi, "head")?;
        let tail = b.build_float_sub(self.k(hi, c_lo), lo, "tail")?;
        Ok(b.build_float_add(head, tail, "diff")?)
    }

    /// `atan t` for `t` in [0, 1] as an unevaluated sum `(hi, lo)`: `hi` the
    /// high part of `atan c`, `lo` its low part plus `atan u` (module doc).
    fn atan_of_ratio(
        &self,
        t: FloatValue<'ctx>,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let arith = self.arith_of(t);
        let k =
            self.float_intrinsic("llvm.rint", &[b.build_float_mul(t, self.k(t, 8.0), "t8")?])?;
        let c = b.build_float_mul(k, self.k(t, 0.125), "c")?;
        let u = b.build_float_div(
            b.build_float_sub(t, c, "t-c")?,
            self.fma3(t, c, self.k(t, 1.0))?,
            "u",
        )?;
        let u2 = b.build_float_mul(u, u, "u2")?;
        let terms = match arith {
            Arith::F64 => 9,
            Arith::F32 => 4,
        };
        let atan_u = b.build_float_mul(u, self.poly(u2, &atan_series(terms))?, "atanu")?;
        // atan c by a chain of selects on k (a NaN t selects k = 0 and
        // stays NaN through u).
        let (mut hi, mut lo) = (self.k(t, 0.0), self.k(t, 0.0));
        for (j, &bits) in ATAN_EIGHTHS.iter().enumerate().skip(1) {
            let (h, l) = pair(arith, bits);
            let is_j = self.fcmp(FloatPredicate::OEQ, k, self.k(t, j as f64))?;
            hi = self.select_f(is_j, self.k(t, h), hi)?;
            lo = self.select_f(is_j, self.k(t, l), lo)?;
        }
        Ok((hi, b.build_float_add(lo, atan_u, "lo")?))
    }
}
