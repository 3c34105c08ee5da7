//! The math library: the functions of `UnaryOp::MATH` and `BinaryOp::MATH` in LLVM IR
//! from plain arithmetic (`fadd`, `fmul`, `llvm.fma`, `llvm.rint`, integer
//! and bit operations), with no libdevice, no ROCm device library and no
//! libm call, so the same code lowers on NVPTX, AMDGPU and the host.
//!
//! Every function is computed in f64 and the caller rounds the result once
//! to the dtype, as the oracle does (docs/semantics.md: the `libm` f64 value
//! rounded once). The f64 results are within a few f64 ulps of the exact
//! values (tests/emit_math.rs measures them against `libm` on dense samples),
//! so an f32 (or narrower) result equals the oracle's except where the exact
//! value lies within a few f64 ulps of a rounding boundary of the dtype.
//! Each function is defined once per module as an internal
//! `tile.math.<name>.f64`; on the GPUs it is `noinline`, and an f32
//! operand's is `tile.math.<name>.f32` (widen, compute, round once).
//!
//! Methods: `exp`: Cody–Waite reduction by ln 2 and a degree-13 Taylor
//! polynomial; `exp2` through `exp`; `log`: reduction to [√½, √2) and the
//! atanh series; `log2` through `log`; `tanh`: through `expm1`; `sin`,
//! `cos`, `tan`: `trig.rs`; `erf`, `erfc`: `erf.rs`; `atan`, `atan2`,
//! `asin`, `acos`: `inverse_trig.rs`; `sinh`, `cosh`, their inverses,
//! `atanh`, `log1p`, `expm1`, `sigmoid`: `hyperbolic.rs`; `cbrt`, `hypot`:
//! `roots.rs`; `pow`: `pow.rs`.

use super::math_arith::Arith;
use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::values::{FloatValue, FunctionValue, IntValue};
use inkwell::FloatPredicate;
use tile_ir::{BinaryOp, UnaryOp};

/// ln 2 in two parts (fdlibm): the high part has 32 significant bits, so
/// `k · LN2_HI` is exact for |k| < 2^21.
pub(super) const LN2_HI: u64 = 0x3fe6_2e42_fee0_0000;
pub(super) const LN2_LO: u64 = 0x3dea_39ef_3579_3c76;

/// Which math library a function belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Library {
    /// The exact library: f64, rounded once by the caller.
    Exact,
    /// The fast f32 library (`fast_math`).
    Fast,
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Calls the f64 math function of `op` on `x`.
    pub(crate) fn transcendental(
        &self,
        op: UnaryOp,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let name = format!("tile.math.{}.f64", op.name());
        let body = |m: &Self, f, params: &[FloatValue<'ctx>]| m.exact_body(op, f, params[0]);
        self.call_math_function(Library::Exact, &name, op.name(), &[x], body)
    }

    /// The exact function of `op` on the f32 `x` as one call of
    /// `tile.math.<op>.f32`, which widens `x`, computes in f64, rounds once
    /// to f32 and canonicalizes a NaN: where the target outlines the exact
    /// library, so that the kernel passes and receives an f32 and the
    /// conversions are compiled once.
    pub(crate) fn transcendental_f32(
        &self,
        op: UnaryOp,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let name = format!("tile.math.{}.f32", op.name());
        let body = |m: &Self, f, params: &[FloatValue<'ctx>]| {
            let r = m.exact_body(op, f, m.to_f64(params[0])?)?;
            let narrowed = m.b.build_float_trunc(r, m.ctx.f32_type(), "f32")?;
            m.canonicalize(narrowed, Nans::Canonical)
        };
        self.call_math_function(Library::Exact, &name, op.name(), &[x], body)
    }

    /// Calls the module's internal function `name` of `library` from
    /// `args.len()` values of the type of `args[0]` to that type, defining it
    /// first (once per module) with `body(emitter positioned in its entry
    /// block, the function, its parameters)`. An exact function is
    /// `noinline` where the target outlines the exact library
    /// ([`crate::Target::outlines_exact_math`]).
    pub(super) fn call_math_function(
        &self,
        library: Library,
        name: &str,
        label: &str,
        args: &[FloatValue<'ctx>],
        body: impl FnOnce(
            &Self,
            FunctionValue<'ctx>,
            &[FloatValue<'ctx>],
        ) -> Result<FloatValue<'ctx>, EmitError>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let ty = args
            .first()
            .ok_or_else(|| EmitError::internal("a math function without arguments"))?
            .get_type();
        let f = match self.module.get_function(name) {
            Some(f) => f,
            None => {
                let params = vec![ty.into(); args.len()];
                let f = self.module.add_function(
                    name,
                    ty.fn_type(&params, false),
                    Some(Linkage::Internal),
                );
                if library == Library::Exact && self.outline_exact_math {
                    let noinline = Attribute::get_named_enum_kind_id("noinline");
                    f.add_attribute(
                        AttributeLoc::Function,
                        self.ctx.create_enum_attribute(noinline, 0),
                    );
                }
                let m = self.nested();
                let entry = self.ctx.append_basic_block(f, "entry");
                m.b.position_at_end(entry);
                let params = f
                    .get_param_iter()
                    .map(|p| p.into_float_value())
                    .collect::<Vec<_>>();
                let r = body(&m, f, &params)?;
                m.b.build_return(Some(&r))?;
                f
            }
        };
        let args: Vec<_> = args.iter().map(|&a| a.into()).collect();
        self.b
            .build_call(f, &args, label)?
            .try_as_basic_value()
            .basic()
            .map(|v| v.into_float_value())
            .ok_or_else(|| EmitError::internal("a math function returned nothing"))
    }

    /// Calls the f64 math function of the two-operand `op` (`pow`,
    /// `atan2`, `hypot`) on `x` and `y`.
    pub(crate) fn binary_transcendental(
        &self,
        op: BinaryOp,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        match op {
            BinaryOp::Pow => self.pow(x, y),
            BinaryOp::Atan2 => self.atan2(x, y),
            BinaryOp::Hypot => self.hypot(x, y),
            other => Err(EmitError::Internal(format!(
                "`{}` is not a math-library function",
                other.name()
            ))),
        }
    }

    /// The body of the f64 math function of `op` (in `f`, on its parameter `x`).
    fn exact_body(
        &self,
        op: UnaryOp,
        f: FunctionValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        Ok(match op {
            UnaryOp::Exp => self.exp(x)?,
            UnaryOp::Exp2 => {
                // 2^x = e^(x·ln 2); exact at integers via the reduction.
                let k = self.float_intrinsic("llvm.rint", &[x])?;
                let frac = self.b.build_float_sub(x, k, "frac")?;
                let r = self
                    .b
                    .build_float_mul(frac, self.c(std::f64::consts::LN_2), "r")?;
                let e = self.exp_reduced(r)?;
                let y = self.scale(e, k)?;
                let over = self.fcmp(FloatPredicate::OGT, x, self.c(1100.0))?;
                let under = self.fcmp(FloatPredicate::OLT, x, self.c(-1100.0))?;
                let y = self.select_f(over, self.c(f64::INFINITY), y)?;
                self.select_f(under, self.c(0.0), y)?
            }
            UnaryOp::Log => self.log(x)?,
            UnaryOp::Log2 => {
                let l = self.log(x)?;
                self.b
                    .build_float_mul(l, self.c(std::f64::consts::LOG2_E), "log2")?
            }
            UnaryOp::Sin => self.sin_cos(x, false)?,
            UnaryOp::Cos => self.sin_cos(x, true)?,
            UnaryOp::Tan => self.tan(x)?,
            UnaryOp::Tanh => self.tanh(x)?,
            UnaryOp::Erf => self.erf(f, x)?,
            UnaryOp::Erfc => self.erfc(f, x)?,
            UnaryOp::Asin => self.asin_acos(x, false)?,
            UnaryOp::Acos => self.asin_acos(x, true)?,
            UnaryOp::Atan => self.atan2(x, self.c(1.0))?,
            UnaryOp::Sinh => self.sinh_cosh(x, false)?,
            UnaryOp::Cosh => self.sinh_cosh(x, true)?,
            UnaryOp::Asinh => self.asinh(x)?,
            UnaryOp::Acosh => self.acosh(x)?,
            UnaryOp::Atanh => self.atanh(x)?,
            UnaryOp::Sigmoid => self.sigmoid(x)?,
            UnaryOp::Log1p => self.log1p(x)?,
            UnaryOp::Expm1 => self.expm1_signed(x)?,
            UnaryOp::Cbrt => self.cbrt(x)?,
            other => {
                return Err(EmitError::Internal(format!(
                    "`{}` is not a math-library function",
                    other.name()
                )))
            }
        })
    }

    pub(super) fn c(&self, v: f64) -> FloatValue<'ctx> {
        self.ctx.f64_type().const_float(v)
    }

    pub(super) fn fma3(
        &self,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
        c: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        self.float_intrinsic("llvm.fma", &[a, b, c])
    }

    /// Σ coefficients[i]·x^i by Horner's rule with fused multiply-adds, in
    /// the type of `x` (the coefficients rounded to it).
    pub(super) fn poly(
        &self,
        x: FloatValue<'ctx>,
        coefficients: &[f64],
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let ty = x.get_type();
        let mut acc = ty.const_float(*coefficients.last().unwrap_or(&0.0));
        for &c in coefficients.iter().rev().skip(1) {
            acc = self.fma3(acc, x, ty.const_float(c))?;
        }
        Ok(acc)
    }

    pub(super) fn select_f(
        &self,
        c: IntValue<'ctx>,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        Ok(self.b.build_select(c, a, b, "sel")?.into_float_value())
    }

    pub(super) fn fcmp(
        &self,
        p: FloatPredicate,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        Ok(self.b.build_float_compare(p, a, b, "fcmp")?)
    }

    /// e^r for |r| ≤ ln 2 / 2 (Taylor to degree 13, error below 2^-60).
    pub(super) fn exp_reduced(&self, r: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let mut coefficients = [0.0f64; 14];
        let mut factorial = 1.0f64;
        for (i, c) in coefficients.iter_mut().enumerate() {
            if i > 0 {
                factorial *= i as f64;
            }
            *c = 1.0 / factorial;
        }
        self.poly(r, &coefficients)
    }

    /// `y · 2^k` for an integral f64 `k` in [-2200, 2200], exact (two
    /// power-of-two factors keep each one normal).
    pub(super) fn scale(
        &self,
        y: FloatValue<'ctx>,
        k: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let i64t = self.ctx.i64_type();
        let f64t = self.ctx.f64_type();
        let k = self.float_intrinsic("llvm.maxnum", &[k, self.c(-2200.0)])?;
        let k = self.float_intrinsic("llvm.minnum", &[k, self.c(2200.0)])?;
        let ki = b.build_float_to_signed_int(k, i64t, "k")?;
        let half = b.build_int_signed_div(ki, i64t.const_int(2, false), "k1")?;
        let rest = b.build_int_sub(ki, half, "k2")?;
        let pow = |e: IntValue<'ctx>| -> Result<FloatValue<'ctx>, EmitError> {
            // 2^e for e in [-1100, 1100], as three normal factors.
            let third = b.build_int_signed_div(e, i64t.const_int(3, false), "e3")?;
            let last = b.build_int_sub(
                e,
                b.build_int_mul(third, i64t.const_int(2, false), "e2")?,
                "el",
            )?;
            let bits = |e: IntValue<'ctx>| -> Result<FloatValue<'ctx>, EmitError> {
                let biased = b.build_int_add(e, i64t.const_int(1023, false), "be")?;
                let shifted = b.build_left_shift(biased, i64t.const_int(52, false), "bits")?;
                Ok(b.build_bit_cast(shifted, f64t, "pow")?.into_float_value())
            };
            let p = bits(third)?;
            Ok(b.build_float_mul(b.build_float_mul(p, p, "pp")?, bits(last)?, "ppp")?)
        };
        let y = b.build_float_mul(y, pow(half)?, "y1")?;
        Ok(b.build_float_mul(y, pow(rest)?, "y2")?)
    }

    /// e^x with the special cases of IEEE exp.
    pub(super) fn exp(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let k = self.float_intrinsic(
            "llvm.rint",
            &[b.build_float_mul(x, self.c(std::f64::consts::LOG2_E), "xl")?],
        )?;
        let r = self.fma3(k, self.c(-f64::from_bits(LN2_HI)), x)?;
        let r = self.fma3(k, self.c(-f64::from_bits(LN2_LO)), r)?;
        let e = self.exp_reduced(r)?;
        let y = self.scale(e, k)?;
        let over = self.fcmp(FloatPredicate::OGT, x, self.c(709.782_712_893_384))?;
        let under = self.fcmp(FloatPredicate::OLT, x, self.c(-745.2))?;
        let y = self.select_f(over, self.c(f64::INFINITY), y)?;
        let y = self.select_f(under, self.c(0.0), y)?;
        // NaN stays NaN (the caller canonicalizes).
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        self.select_f(nan, x, y)
    }

    /// `x = m·2^e` with `m` in [√½, √2), for a positive finite f64 or f32
    /// `x` (subnormals included); `e` as a float of `x`'s type.
    pub(super) fn split_exponent(
        &self,
        x: FloatValue<'ctx>,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let ft = x.get_type();
        // The format: fraction bits, the bits of √½, and the scaling of
        // subnormals (2^54 in f64, 2^23 in f32).
        let (it, fraction, sqrt_half, subnormal_scale, smallest_normal) = match self.arith_of(x) {
            Arith::F64 => (
                self.ctx.i64_type(),
                52,
                0x3fe6_a09e_667f_3bcd,
                54,
                f64::MIN_POSITIVE,
            ),
            Arith::F32 => (
                self.ctx.i32_type(),
                23,
                0x3f35_04f3,
                23,
                f64::from(f32::MIN_POSITIVE),
            ),
        };
        let tiny = self.fcmp(FloatPredicate::OLT, x, ft.const_float(smallest_normal))?;
        let scaled = b.build_float_mul(x, ft.const_float(2f64.powi(subnormal_scale)), "scaled")?;
        let xs = self.select_f(tiny, scaled, x)?;
        let extra = b.build_select(
            tiny,
            it.const_int(subnormal_scale as u64, false),
            it.const_zero(),
            "extra",
        )?;
        let bits = b.build_bit_cast(xs, it, "bits")?.into_int_value();
        // x = m·2^k with m in [√½, √2): k from the bits relative to √½.
        let shifted = b.build_int_sub(bits, it.const_int(sqrt_half, false), "sh")?;
        let k = b.build_right_shift(shifted, it.const_int(fraction, false), true, "k")?;
        let mbits = b.build_int_sub(
            bits,
            b.build_left_shift(k, it.const_int(fraction, false), "ks")?,
            "mb",
        )?;
        let e = b.build_int_sub(k, extra.into_int_value(), "e")?;
        let m = b.build_bit_cast(mbits, ft, "m")?.into_float_value();
        Ok((m, b.build_signed_int_to_float(e, ft, "ef")?))
    }

    /// ln x with the special cases of IEEE log.
    pub(super) fn log(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let (m, ef) = self.split_exponent(x)?;
        let f = b.build_float_sub(m, self.c(1.0), "f")?;
        let s = b.build_float_div(f, b.build_float_add(f, self.c(2.0), "f2")?, "s")?;
        let s2 = b.build_float_mul(s, s, "s2")?;
        // 2·atanh(s) = 2s·(1 + s²/3 + s⁴/5 + ...), |s| ≤ 0.1716.
        let coefficients: Vec<f64> = (0..12).map(|i| 2.0 / (2 * i + 1) as f64).collect();
        let series = b.build_float_mul(s, self.poly(s2, &coefficients)?, "l")?;
        let y = self.fma3(ef, self.c(f64::from_bits(LN2_LO)), series)?;
        let y = self.fma3(ef, self.c(f64::from_bits(LN2_HI)), y)?;
        let zero = self.fcmp(FloatPredicate::OEQ, x, self.c(0.0))?;
        let negative = self.fcmp(FloatPredicate::OLT, x, self.c(0.0))?;
        let inf = self.fcmp(FloatPredicate::OEQ, x, self.c(f64::INFINITY))?;
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        let y = self.select_f(zero, self.c(f64::NEG_INFINITY), y)?;
        let y = self.select_f(inf, x, y)?;
        let y = self.select_f(negative, self.c(f64::NAN), y)?;
        self.select_f(nan, x, y)
    }

    /// e^y - 1, accurate near 0.
    pub(super) fn expm1(&self, y: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let mut coefficients = vec![0.0f64];
        let mut fact = 1.0f64;
        for i in 1..19 {
            fact *= i as f64;
            coefficients.push(1.0 / fact);
        }
        let small = self.poly(y, &coefficients)?;
        let big = b.build_float_sub(self.exp(y)?, self.c(1.0), "em1")?;
        let is_small = self.fcmp(
            FloatPredicate::OLT,
            self.float_intrinsic("llvm.fabs", &[y])?,
            self.c(0.5),
        )?;
        self.select_f(is_small, small, big)
    }

    /// tanh x = sign(x)·e/(e + 2) with e = expm1(2|x|).
    fn tanh(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let ax = self.float_intrinsic("llvm.fabs", &[x])?;
        let clamped = self.float_intrinsic("llvm.minnum", &[ax, self.c(40.0)])?;
        let e = self.expm1(b.build_float_mul(clamped, self.c(2.0), "2x")?)?;
        let t = b.build_float_div(e, b.build_float_add(e, self.c(2.0), "e2")?, "t")?;
        let t = self.float_intrinsic("llvm.copysign", &[t, x])?;
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        self.select_f(nan, x, t)
    }

    pub(super) fn current_block_of(
        &self,
    ) -> Result<inkwell::basic_block::BasicBlock<'ctx>, EmitError> {
        self.b
            .get_insert_block()
            .ok_or_else(|| EmitError::internal("no insert block"))
    }
}
