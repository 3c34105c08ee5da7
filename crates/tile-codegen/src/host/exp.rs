//! `exp` on the host: the oracle's f64 `exp`, rebuilt in LLVM IR so that
//! LLVM can inline and vectorize it.
//!
//! The oracle's `exp` is `libm::exp` of the `libm` crate, **version 0.2.16**
//! (the one in Cargo.lock; FreeBSD's `e_exp.c` by way of musl). Host results
//! must equal the oracle's bit for bit, so this is not a new approximation
//! but a replica of that function: the same constants and the same IEEE f64
//! operations in the same order (a `fmul` and an `fadd` are never fused, no
//! fast-math flags), and its scaling by `libm::scalbn`'s steps. What changes
//! is the control flow: every branch of the original becomes a `select`, so
//! the body is one basic block that the loop vectorizer takes as it is.
//!
//! The original, in the order it decides (`hx` is the high word of |x|):
//!
//! 1. NaN: `x` itself (its payload kept);
//! 2. `x > 709.782712893383973096`: `x · 2^1023` (+∞);
//! 3. `x < -745.13321910194110842`: `+0` (libm tests 1–3 only when
//!    `hx >= 0x4086232b`, |x| ≥ 708.39, which each of them implies);
//! 4. `hx <= 0x3e300000` (|x| ≤ 2^-28): `1 + x`;
//! 5. `hx <= 0x3fd62e42` (|x| ≤ ½ ln 2): `k = 0`, `hi = x`, `lo = 0`;
//! 6. `hx < 0x3ff0a2b2` (|x| < 1.5 ln 2): `k = 1 − 2·sign`, else
//!    `k = trunc(x · (1/ln 2) ± ½)`; then `hi = x − k·ln2hi`,
//!    `lo = k·ln2lo`, `x = hi − lo`;
//!
//! then `c = x − x²(P1 + x²(P2 + x²(P3 + x²(P4 + x²P5))))`,
//! `y = 1 + (x·c/(2 − c) − lo + hi)` and the result `scalbn(y, k)` (`y` when
//! `k = 0`). The three special cases are decided first; their lanes run the
//! rest on `x = 0`, so no float-to-int conversion ever sees a NaN or an
//! infinity (which would be poison), and their results are selected last.
//!
//! `scalbn(y, k)` multiplies by `2^1023` once if `k > 1023`, by `2^-969` once
//! if `k < -1022` (so that `y` never becomes subnormal before the last
//! multiplication, which rounds once), then by `2^k'` built from its bits.
//! libm's version repeats each prescale up to twice more for larger `|k|`;
//! here `x ∈ [-745.14, 709.79]` bounds `k` to `[-1075, 1024]`, so one
//! prescale always suffices and the repeats are never taken.

use super::error::HostError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{FloatType, IntType};
use inkwell::values::{FloatValue, FunctionValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

/// Above this, `exp` overflows: libm's literal 709.782712893383973096,
/// as the bits Rust parses it to.
const OVERFLOW: u64 = 0x4086_2e42_fefa_39ef;
/// Below this, `exp` underflows to +0: libm's literal
/// -745.13321910194110842, as bits.
const UNDERFLOW: u64 = 0xc087_4910_d52d_3051;
/// Above this high word, |x| > ½ ln 2: the argument is reduced.
const HX_REDUCE: i64 = 0x3fd6_2e42;
/// From this high word, |x| ≥ 1.5 ln 2: `k` comes from `x / ln 2`.
const HX_BIG: i64 = 0x3ff0_a2b2;
/// At or below this high word, |x| ≤ 2^-28: the result is `1 + x`.
const HX_TINY: i64 = 0x3e30_0000;
/// ln 2 in two parts (the high part has 32 significant bits, so `k · LN2HI`
/// is exact), and 1 / ln 2, as bits.
const LN2HI: u64 = 0x3fe6_2e42_fee0_0000;
const LN2LO: u64 = 0x3dea_39ef_3579_3c76;
const INVLN2: u64 = 0x3ff7_1547_652b_82fe;
/// The coefficients of the rational approximation, as bits.
const P: [u64; 5] = [
    0x3fc5_5555_5555_553e,
    0xbf66_c16c_16be_bd93,
    0x3f11_566a_af25_de2c,
    0xbebb_bd41_c5d2_6bf1,
    0x3e66_3769_72be_a4d0,
];
/// 2^1023 and 2^-969 (= 2^-1022 · 2^53, scalbn's prescale toward zero).
const TWO_1023: u64 = 0x7fe0_0000_0000_0000;
const TWO_M969: u64 = 0x0360_0000_0000_0000;
/// scalbn's limits on the exponent of the final scale.
const EXP_MAX: i64 = 1023;
const EXP_MIN: i64 = -1022;
/// 969 = -EXP_MIN - 53: what the prescale toward zero adds to `n`.
const PRESCALE_DOWN: i64 = 969;

/// The name of the probe function of [`exp_probe`].
pub const EXP_PROBE: &str = "tile_host_exp_probe";

/// Defines `f` (declared as `double (double)`) as the replica of
/// `libm::exp`, internal and always inlined, with no memory effects.
pub(super) fn define<'ctx>(ctx: &'ctx Context, f: FunctionValue<'ctx>) -> Result<(), HostError> {
    f.set_linkage(Linkage::Internal);
    for (name, value) in [
        ("alwaysinline", 0),
        ("nounwind", 0),
        ("willreturn", 0),
        ("nosync", 0),
        ("nofree", 0),
        // `memory(none)`: the encoding of "no access to any location" is 0.
        ("memory", 0),
    ] {
        let kind = Attribute::get_named_enum_kind_id(name);
        f.add_attribute(
            AttributeLoc::Function,
            ctx.create_enum_attribute(kind, value),
        );
    }
    let x = f
        .get_nth_param(0)
        .ok_or_else(|| HostError::internal("exp's parameter"))?
        .into_float_value();
    let e = Exp {
        b: ctx.create_builder(),
        f64t: ctx.f64_type(),
        i32t: ctx.i32_type(),
        i64t: ctx.i64_type(),
    };
    e.b.position_at_end(ctx.append_basic_block(f, "entry"));
    let y = e.body(x)?;
    e.b.build_return(Some(&y))?;
    Ok(())
}

/// A module defining `double tile_host_exp_probe(double)` ([`EXP_PROBE`],
/// external) as a call of the host's `exp` (the function every host kernel
/// inlines), so tests can compare it with `libm::exp` on any input bits,
/// NaN payloads included.
pub fn exp_probe(ctx: &Context) -> Result<Module<'_>, HostError> {
    let module = ctx.create_module("exp_probe");
    let f64t = ctx.f64_type();
    let ty = f64t.fn_type(&[f64t.into()], false);
    let exp = module.add_function("tile.math.exp.f64", ty, None);
    define(ctx, exp)?;
    let probe = module.add_function(EXP_PROBE, ty, Some(Linkage::External));
    let b = ctx.create_builder();
    b.position_at_end(ctx.append_basic_block(probe, "entry"));
    let x = probe
        .get_nth_param(0)
        .ok_or_else(|| HostError::internal("the probe's parameter"))?;
    let y = b
        .build_call(exp, &[x.into()], "y")?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| HostError::internal("exp returned nothing"))?;
    b.build_return(Some(&y))?;
    Ok(module)
}

/// The builder and types of the replica.
struct Exp<'ctx> {
    b: Builder<'ctx>,
    f64t: FloatType<'ctx>,
    i32t: IntType<'ctx>,
    i64t: IntType<'ctx>,
}

impl<'ctx> Exp<'ctx> {
    /// The f64 with these bits.
    fn bits(&self, bits: u64) -> FloatValue<'ctx> {
        self.f64t.const_float(f64::from_bits(bits))
    }

    /// The i32 `v`.
    fn int(&self, v: i64) -> IntValue<'ctx> {
        self.i32t.const_int(v as u64, true)
    }

    fn fadd(
        &self,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, HostError> {
        Ok(self.b.build_float_add(a, b, "add")?)
    }

    fn fsub(
        &self,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, HostError> {
        Ok(self.b.build_float_sub(a, b, "sub")?)
    }

    fn fmul(
        &self,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, HostError> {
        Ok(self.b.build_float_mul(a, b, "mul")?)
    }

    /// `c ? a : b` on floats.
    fn pick(
        &self,
        c: IntValue<'ctx>,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, HostError> {
        Ok(self.b.build_select(c, a, b, "pick")?.into_float_value())
    }

    /// `c ? a : b` on integers.
    fn pick_int(
        &self,
        c: IntValue<'ctx>,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, HostError> {
        Ok(self.b.build_select(c, a, b, "pick")?.into_int_value())
    }

    /// `a <pred> b` on i32.
    fn icmp(
        &self,
        pred: IntPredicate,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, HostError> {
        Ok(self.b.build_int_compare(pred, a, b, "cmp")?)
    }

    /// `a <pred> b` on f64.
    fn fcmp(
        &self,
        pred: FloatPredicate,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> Result<IntValue<'ctx>, HostError> {
        Ok(self.b.build_float_compare(pred, a, b, "cmp")?)
    }

    /// `libm::exp(x)`, every branch a select.
    fn body(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, HostError> {
        let b = &self.b;
        let zero = self.f64t.const_zero();
        let one = self.f64t.const_float(1.0);
        // The high word, its sign bit and the high word of |x|.
        let bits = b.build_bit_cast(x, self.i64t, "bits")?.into_int_value();
        let high = b.build_right_shift(bits, self.i64t.const_int(32, false), false, "high")?;
        let hx = b.build_int_truncate(high, self.i32t, "hx")?;
        let sign = b.build_right_shift(hx, self.int(31), false, "sign")?;
        let hx = b.build_and(hx, self.int(0x7fff_ffff), "hx")?;

        // The special cases, decided first (libm tests them only when
        // |x| ≥ 708.39, which each of them implies).
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        let over = self.fcmp(FloatPredicate::OGT, x, self.bits(OVERFLOW))?;
        let under = self.fcmp(FloatPredicate::OLT, x, self.bits(UNDERFLOW))?;
        let special = b.build_or(nan, over, "special")?;
        let special = b.build_or(special, under, "special")?;
        let tiny = self.icmp(IntPredicate::ULE, hx, self.int(HX_TINY))?;
        // The rest runs on `xs`: `x` where it is finite and in
        // [UNDERFLOW, OVERFLOW], 0 in the special lanes.
        let xs = self.pick(special, zero, x)?;

        // Argument reduction: x = k ln 2 + (hi - lo).
        let reduce = self.icmp(IntPredicate::UGT, hx, self.int(HX_REDUCE))?;
        let big = self.icmp(IntPredicate::UGE, hx, self.int(HX_BIG))?;
        let negative = self.icmp(IntPredicate::NE, sign, self.int(0))?;
        let half = self.pick(
            negative,
            self.f64t.const_float(-0.5),
            self.f64t.const_float(0.5),
        )?;
        let scaled = self.fadd(self.fmul(self.bits(INVLN2), xs)?, half)?;
        // In range (|k| ≤ 1075), where Rust's saturating `as i32` truncates
        // as `fptosi` does.
        let k_big = b.build_float_to_signed_int(scaled, self.i32t, "k")?;
        let k_near = b.build_int_sub(self.int(1), sign, "k")?;
        let k_near = b.build_int_sub(k_near, sign, "k")?;
        let k_reduced = self.pick_int(big, k_big, k_near)?;
        let kf = b.build_signed_int_to_float(k_reduced, self.f64t, "kf")?;
        let hi_reduced = self.fsub(xs, self.fmul(kf, self.bits(LN2HI))?)?;
        let lo_reduced = self.fmul(kf, self.bits(LN2LO))?;
        let x_reduced = self.fsub(hi_reduced, lo_reduced)?;
        let k = self.pick_int(reduce, k_reduced, self.int(0))?;
        let hi = self.pick(reduce, hi_reduced, xs)?;
        let lo = self.pick(reduce, lo_reduced, zero)?;
        let r = self.pick(reduce, x_reduced, xs)?;

        // The primary range: c = r - r²(P1 + r²(P2 + ...)), Horner from P5.
        let rr = self.fmul(r, r)?;
        let mut poly = self.fmul(rr, self.bits(P[4]))?;
        for &p in P[..4].iter().rev() {
            poly = self.fmul(rr, self.fadd(self.bits(p), poly)?)?;
        }
        let c = self.fsub(r, poly)?;
        let quotient = b.build_float_div(
            self.fmul(r, c)?,
            self.fsub(self.f64t.const_float(2.0), c)?,
            "quotient",
        )?;
        let y = self.fadd(one, self.fadd(self.fsub(quotient, lo)?, hi)?)?;
        let scaled = self.scalbn(y, k)?;
        let k_zero = self.icmp(IntPredicate::EQ, k, self.int(0))?;
        let general = self.pick(k_zero, y, scaled)?;

        // The results of the earlier returns, in libm's order.
        let small = self.fadd(one, xs)?;
        let result = self.pick(tiny, small, general)?;
        let result = self.pick(under, zero, result)?;
        let overflowed = self.fmul(x, self.bits(TWO_1023))?;
        let result = self.pick(over, overflowed, result)?;
        self.pick(nan, x, result)
    }

    /// `libm::scalbn(y, k)` for `k ∈ [-1075, 1024]` (one prescale at most).
    fn scalbn(
        &self,
        y: FloatValue<'ctx>,
        k: IntValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, HostError> {
        let b = &self.b;
        let up = self.icmp(IntPredicate::SGT, k, self.int(EXP_MAX))?;
        let y = self.pick(up, self.fmul(y, self.bits(TWO_1023))?, y)?;
        let n = self.pick_int(up, b.build_int_sub(k, self.int(EXP_MAX), "n")?, k)?;
        let down = self.icmp(IntPredicate::SLT, n, self.int(EXP_MIN))?;
        let y = self.pick(down, self.fmul(y, self.bits(TWO_M969))?, y)?;
        let n = self.pick_int(down, b.build_int_add(n, self.int(PRESCALE_DOWN), "n")?, n)?;
        // 2^n from its bits: the biased exponent in [1, 2046].
        let biased = b.build_int_add(n, self.int(EXP_MAX), "biased")?;
        let biased = b.build_int_z_extend(biased, self.i64t, "biased")?;
        let scale_bits = b.build_left_shift(biased, self.i64t.const_int(52, false), "scale")?;
        let scale = b
            .build_bit_cast(scale_bits, self.f64t, "scale")?
            .into_float_value();
        self.fmul(y, scale)
    }
}
