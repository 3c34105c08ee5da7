//! `eval::{unary, binary, fma, compare, select}`: float rounding against the
//! `half` crate and exact integer oracles, integer edge cases, NaN and signed
//! zero rules, and the rejection of ill-typed operands.

use half::{bf16, f16};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use tile_ir::eval::{binary, canonical_nan, compare, fma, select, unary, EvalError};
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, UnaryOp};

/// A reference binary operation.
type F32Op = fn(f32, f32) -> f32;
/// A reference function.
type F64Fn = fn(f64) -> f64;

fn random_f16(rng: &mut SmallRng) -> f16 {
    f16::from_bits(rng.gen())
}

/// Bits of a result, with every NaN mapped to one marker so that results of
/// the `half` crate (which keeps payloads) compare with canonical NaNs.
fn bits_or_nan(x: Scalar) -> u64 {
    if x.is_nan() {
        u64::MAX
    } else {
        x.to_bits()
    }
}

#[test]
fn f16_arithmetic_equals_the_half_crate_f32_round_trip() {
    let mut rng = SmallRng::seed_from_u64(10);
    let ops: [(BinaryOp, F32Op); 5] = [
        (BinaryOp::Add, |a, b| a + b),
        (BinaryOp::Sub, |a, b| a - b),
        (BinaryOp::Mul, |a, b| a * b),
        (BinaryOp::Div, |a, b| a / b),
        (BinaryOp::Rem, |a, b| a % b),
    ];
    for _ in 0..20_000 {
        let (a, b) = (random_f16(&mut rng), random_f16(&mut rng));
        for (op, f) in ops {
            let got = binary(op, Scalar::F16(a), Scalar::F16(b)).unwrap();
            let want = Scalar::F16(f16::from_f32(f(a.to_f32(), b.to_f32())));
            assert_eq!(bits_or_nan(got), bits_or_nan(want), "{a} {op} {b}");
        }
        let got = unary(UnaryOp::Sqrt, Scalar::F16(a)).unwrap();
        let want = Scalar::F16(f16::from_f32(a.to_f32().sqrt()));
        assert_eq!(bits_or_nan(got), bits_or_nan(want), "sqrt {a}");
    }
}

#[test]
fn bf16_and_f32_arithmetic_equal_native_ieee() {
    let mut rng = SmallRng::seed_from_u64(11);
    for _ in 0..20_000 {
        let (a, b) = (bf16::from_bits(rng.gen()), bf16::from_bits(rng.gen()));
        let got = binary(BinaryOp::Mul, Scalar::BF16(a), Scalar::BF16(b)).unwrap();
        let want = Scalar::BF16(bf16::from_f32(a.to_f32() * b.to_f32()));
        assert_eq!(bits_or_nan(got), bits_or_nan(want), "{a} * {b}");
        let (x, y) = (f32::from_bits(rng.gen()), f32::from_bits(rng.gen()));
        for (op, want) in [
            (BinaryOp::Add, x + y),
            (BinaryOp::Div, x / y),
            (BinaryOp::Sub, x - y),
        ] {
            let got = binary(op, Scalar::F32(x), Scalar::F32(y)).unwrap();
            assert_eq!(
                bits_or_nan(got),
                bits_or_nan(Scalar::F32(want)),
                "{x} {op} {y}"
            );
        }
    }
}

#[test]
fn f32_results_in_the_subnormal_range_round_once() {
    // Double rounding through f64 stays innocuous at gradual underflow
    // (Roux 2014); check quotients and products landing on f32 subnormals.
    let mut rng = SmallRng::seed_from_u64(14);
    for _ in 0..50_000 {
        let a = f32::from_bits(rng.gen_range(0x0000_0001..0x0200_0000)); // tiny
        let b: f32 = rng.gen_range(1.0..64.0);
        let q = binary(BinaryOp::Div, Scalar::F32(a), Scalar::F32(b)).unwrap();
        assert_eq!(q, Scalar::F32(a / b), "{a:e} / {b}");
        let c: f32 = rng.gen_range(0.0..1.0);
        let p = binary(BinaryOp::Mul, Scalar::F32(a), Scalar::F32(c)).unwrap();
        assert_eq!(p, Scalar::F32(a * c), "{a:e} * {c}");
    }
}

/// A finite f16 value as an exact multiple of 2^-24 (its smallest subnormal).
fn units(x: f16) -> i128 {
    (x.to_f64() * 2f64.powi(24)) as i128
}

/// A finite f16 value as an exact multiple of 2^-48: products of two f16
/// values, and their sums with a third, are exact at this scale.
fn scaled(x: f16) -> i128 {
    units(x) << 24
}

/// The f16 nearest (ties to even) to `v` × 2^-48, by search over all values.
fn nearest_f16(v: i128, table: &[(i128, u16)]) -> u16 {
    let sign = if v < 0 { 0x8000 } else { 0 };
    let a = v.abs();
    let (max, _) = table[table.len() - 1];
    let threshold = max + (max - table[table.len() - 2].0) / 2;
    if a >= threshold {
        return sign | 0x7c00;
    }
    let i = table.partition_point(|&(t, _)| t < a);
    let (hi, hi_bits) = table[i];
    if hi == a || i == 0 {
        return sign | hi_bits;
    }
    let (lo, lo_bits) = table[i - 1];
    let pick = match (a - lo).cmp(&(hi - a)) {
        std::cmp::Ordering::Less => lo_bits,
        std::cmp::Ordering::Greater => hi_bits,
        std::cmp::Ordering::Equal if lo_bits % 2 == 0 => lo_bits,
        std::cmp::Ordering::Equal => hi_bits,
    };
    sign | pick
}

#[test]
fn f16_fma_rounds_the_exact_result_once() {
    let table: Vec<(i128, u16)> = (0..0x7c00u16)
        .map(|b| (scaled(f16::from_bits(b)), b))
        .collect();
    let mut rng = SmallRng::seed_from_u64(12);
    for _ in 0..20_000 {
        let finite = |rng: &mut SmallRng| loop {
            let x = f16::from_bits(rng.gen());
            if x.is_finite() {
                return x;
            }
        };
        let (a, b, c) = (finite(&mut rng), finite(&mut rng), finite(&mut rng));
        let exact = units(a) * units(b) + scaled(c);
        let got = fma(Scalar::F16(a), Scalar::F16(b), Scalar::F16(c)).unwrap();
        let want = nearest_f16(exact, &table);
        if exact == 0 {
            assert_eq!(got.to_f64(), 0.0);
        } else {
            assert_eq!(got.to_bits(), u64::from(want), "fma({a}, {b}, {c})");
        }
    }
}

#[test]
fn bf16_fma_does_not_round_twice() {
    // 0.875 × 1.15625 = 259/256 is the tie between the bf16 values 258/256
    // and 260/256; subtracting 2^-100 puts the exact result just below it.
    // Rounding to f64 first would land on the tie and pick the even 260/256.
    let b = |v: f32| Scalar::BF16(bf16::from_f32(v));
    let got = fma(b(0.875), b(1.15625), b(-(2f32.powi(-100)))).unwrap();
    assert_eq!(got, b(258.0 / 256.0));
    let got = fma(b(0.875), b(1.15625), b(2f32.powi(-100))).unwrap();
    assert_eq!(got, b(260.0 / 256.0));
}

#[test]
fn f32_fma_is_single_rounding() {
    let (a, b, c) = (1.0 + f32::EPSILON, 1.0 - f32::EPSILON, -1.0f32);
    let got = fma(Scalar::F32(a), Scalar::F32(b), Scalar::F32(c)).unwrap();
    assert_eq!(got, Scalar::F32(-f32::EPSILON * f32::EPSILON));
    assert_eq!(got, Scalar::F32(a.mul_add(b, c)));
}

#[test]
fn nan_results_are_canonical() {
    let zero = Scalar::F16(f16::ZERO);
    assert_eq!(binary(BinaryOp::Div, zero, zero).unwrap().to_bits(), 0x7e00);
    let weird = Scalar::F32(f32::from_bits(0xffc0_0001));
    let one = Scalar::F32(1.0);
    assert_eq!(
        binary(BinaryOp::Add, weird, one).unwrap().to_bits(),
        0x7fc0_0000
    );
    assert_eq!(unary(UnaryOp::Neg, weird).unwrap().to_bits(), 0x7fc0_0000);
    assert_eq!(
        unary(UnaryOp::Log, Scalar::BF16(bf16::from_f32(-1.0)))
            .unwrap()
            .to_bits(),
        0x7fc0
    );
    for dtype in DType::ALL {
        assert_eq!(canonical_nan(dtype).is_some(), dtype.is_float());
    }
}

#[test]
fn neg_and_abs_are_sign_operations() {
    let inf = Scalar::F8E5M2(tile_ir::f8::F8E5M2::from_bits(0x7c));
    assert_eq!(unary(UnaryOp::Neg, inf).unwrap().to_bits(), 0xfc);
    assert_eq!(
        unary(UnaryOp::Abs, Scalar::F32(-0.0)).unwrap(),
        Scalar::F32(0.0)
    );
    assert_eq!(
        unary(UnaryOp::Neg, Scalar::F16(f16::ZERO)).unwrap(),
        Scalar::F16(f16::NEG_ZERO)
    );
    assert_eq!(
        unary(UnaryOp::Abs, Scalar::BF16(bf16::NEG_INFINITY)).unwrap(),
        Scalar::BF16(bf16::INFINITY)
    );
    // Arithmetic that rounds into FP8 saturates, as every conversion does.
    let two = Scalar::F8E5M2(tile_ir::f8::F8E5M2::from_f64(2.0));
    assert_eq!(binary(BinaryOp::Mul, inf, two).unwrap().to_f64(), 57344.0);
}

#[test]
fn min_and_max_propagate_nan_and_order_signed_zeros() {
    let (pz, nz) = (Scalar::F32(0.0), Scalar::F32(-0.0));
    let nan = Scalar::F32(f32::NAN);
    let one = Scalar::F32(1.0);
    assert_eq!(binary(BinaryOp::Min, pz, nz).unwrap(), nz);
    assert_eq!(binary(BinaryOp::Min, nz, pz).unwrap(), nz);
    assert_eq!(binary(BinaryOp::Max, nz, pz).unwrap(), pz);
    assert_eq!(binary(BinaryOp::Max, pz, nz).unwrap(), pz);
    assert!(binary(BinaryOp::Min, one, nan).unwrap().is_nan());
    assert!(binary(BinaryOp::Max, nan, one).unwrap().is_nan());
    assert_eq!(binary(BinaryOp::Max, one, Scalar::F32(-2.0)).unwrap(), one);
}

#[test]
fn integer_division_remainder_and_wrapping_are_total() {
    let i = |v: i32| Scalar::I32(v);
    let cases = [
        (BinaryOp::Div, i(7), i(0), i(0)),
        (BinaryOp::Rem, i(7), i(0), i(7)),
        (BinaryOp::Div, i(i32::MIN), i(-1), i(i32::MIN)),
        (BinaryOp::Rem, i(i32::MIN), i(-1), i(0)),
        (BinaryOp::Div, i(-7), i(2), i(-3)),
        (BinaryOp::Rem, i(-7), i(2), i(-1)),
        (BinaryOp::Add, i(i32::MAX), i(1), i(i32::MIN)),
        (BinaryOp::Mul, i(65536), i(65536), i(0)),
        (BinaryOp::Sub, i(i32::MIN), i(1), i(i32::MAX)),
        (BinaryOp::Min, i(-3), i(2), i(-3)),
    ];
    for (op, a, b, want) in cases {
        assert_eq!(binary(op, a, b).unwrap(), want, "{a} {op} {b}");
    }
    let u = |v: u64| Scalar::U64(v);
    assert_eq!(
        binary(BinaryOp::Mul, u(u64::MAX), u(u64::MAX)).unwrap(),
        u(1)
    );
    assert_eq!(binary(BinaryOp::Div, u(u64::MAX), u(0)).unwrap(), u(0));
    assert_eq!(binary(BinaryOp::Rem, u(u64::MAX), u(10)).unwrap(), u(5));
    assert_eq!(
        unary(UnaryOp::Abs, Scalar::I8(i8::MIN)).unwrap(),
        Scalar::I8(i8::MIN)
    );
    assert_eq!(
        unary(UnaryOp::Neg, Scalar::I16(i16::MIN)).unwrap(),
        Scalar::I16(i16::MIN)
    );
    assert_eq!(unary(UnaryOp::Neg, Scalar::U8(1)).unwrap(), Scalar::U8(255));
    assert_eq!(
        unary(UnaryOp::Not, Scalar::U16(0x00ff)).unwrap(),
        Scalar::U16(0xff00)
    );
}

#[test]
fn shifts_beyond_the_width_or_negative_shift_everything_out() {
    let s = |op, a, b| binary(op, a, b).unwrap();
    assert_eq!(
        s(BinaryOp::Shl, Scalar::I32(1), Scalar::I32(31)),
        Scalar::I32(i32::MIN)
    );
    assert_eq!(
        s(BinaryOp::Shl, Scalar::I32(1), Scalar::I32(32)),
        Scalar::I32(0)
    );
    assert_eq!(
        s(BinaryOp::Shl, Scalar::I32(1), Scalar::I32(-1)),
        Scalar::I32(0)
    );
    assert_eq!(
        s(BinaryOp::Shr, Scalar::I32(-8), Scalar::I32(1)),
        Scalar::I32(-4)
    );
    assert_eq!(
        s(BinaryOp::Shr, Scalar::I32(-8), Scalar::I32(40)),
        Scalar::I32(-1)
    );
    assert_eq!(
        s(BinaryOp::Shr, Scalar::I32(8), Scalar::I32(-3)),
        Scalar::I32(0)
    );
    assert_eq!(
        s(BinaryOp::Shr, Scalar::U8(0x80), Scalar::U8(7)),
        Scalar::U8(1)
    );
    assert_eq!(
        s(BinaryOp::Shr, Scalar::U8(0x80), Scalar::U8(8)),
        Scalar::U8(0)
    );
    assert_eq!(
        s(BinaryOp::Shl, Scalar::U8(0xff), Scalar::U8(4)),
        Scalar::U8(0xf0)
    );
    assert_eq!(
        s(BinaryOp::Shl, Scalar::U64(3), Scalar::U64(63)),
        Scalar::U64(1 << 63)
    );
}

#[test]
fn bool_supports_logic_equality_and_select_only() {
    let (t, f) = (Scalar::Bool(true), Scalar::Bool(false));
    assert_eq!(binary(BinaryOp::And, t, f).unwrap(), f);
    assert_eq!(binary(BinaryOp::Or, t, f).unwrap(), t);
    assert_eq!(binary(BinaryOp::Xor, t, t).unwrap(), f);
    assert_eq!(unary(UnaryOp::Not, f).unwrap(), t);
    assert!(compare(CmpPred::Ne, t, f).unwrap());
    assert_eq!(select(f, t, f).unwrap(), f);
    assert!(binary(BinaryOp::Add, t, f).is_err());
    assert!(unary(UnaryOp::Neg, t).is_err());
    assert!(compare(CmpPred::Lt, t, f).is_err());
}

#[test]
fn comparisons_follow_ieee_for_floats_and_values_for_integers() {
    let nan = Scalar::F64(f64::NAN);
    let one = Scalar::F64(1.0);
    for pred in CmpPred::ALL {
        assert_eq!(
            compare(*pred, nan, one).unwrap(),
            *pred == CmpPred::Ne,
            "{pred}"
        );
    }
    assert!(compare(CmpPred::Eq, Scalar::F32(0.0), Scalar::F32(-0.0)).unwrap());
    assert!(compare(CmpPred::Lt, Scalar::I8(-1), Scalar::I8(0)).unwrap());
    assert!(compare(CmpPred::Gt, Scalar::U8(255), Scalar::U8(0)).unwrap());
    assert!(compare(CmpPred::Ge, Scalar::U64(u64::MAX), Scalar::U64(u64::MAX)).unwrap());
}

#[test]
fn transcendentals_are_the_f64_value_rounded_once() {
    let mut rng = SmallRng::seed_from_u64(13);
    for _ in 0..2000 {
        let x: f32 = rng.gen_range(-10.0..10.0);
        let cases: [(UnaryOp, F64Fn); 6] = [
            (UnaryOp::Exp, f64::exp),
            (UnaryOp::Sin, f64::sin),
            (UnaryOp::Tanh, f64::tanh),
            (UnaryOp::Exp2, f64::exp2),
            (UnaryOp::Cos, f64::cos),
            (UnaryOp::Sqrt, |v| v.abs().sqrt()),
        ];
        for (op, f) in cases {
            let arg = if op == UnaryOp::Sqrt { x.abs() } else { x };
            let got = unary(op, Scalar::F32(arg)).unwrap();
            let want = f(f64::from(arg)) as f32;
            // libm and the platform's libm agree to within an f64 ulp, which
            // may move the f32 rounding by at most one ulp.
            let ulps =
                (i64::from(got.to_bits() as u32 as i32) - i64::from(want.to_bits() as i32)).abs();
            assert!(ulps <= 1, "{op} {arg}: {got} vs {want}");
        }
        let h = f16::from_f32(x.abs());
        let got = unary(UnaryOp::Rsqrt, Scalar::F16(h)).unwrap();
        let want = f16::from_f64(1.0 / h.to_f64().sqrt());
        assert!(
            (got.to_bits() as i64 - i64::from(want.to_bits())).abs() <= 1,
            "rsqrt {h}"
        );
    }
    let erf = |v: f64| unary(UnaryOp::Erf, Scalar::F64(v)).unwrap().to_f64();
    assert_eq!(erf(0.0), 0.0);
    assert_eq!(erf(f64::INFINITY), 1.0);
    assert_eq!(erf(f64::NEG_INFINITY), -1.0);
    assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 2.3e-16);
    assert!((erf(-1.5) + 0.966_105_146_475_310_7).abs() < 2.3e-16);
    assert_eq!(
        unary(UnaryOp::Floor, Scalar::F16(f16::from_f32(-1.5))).unwrap(),
        Scalar::F16(f16::from_f32(-2.0))
    );
    assert_eq!(
        unary(UnaryOp::Ceil, Scalar::BF16(bf16::from_f32(1.25))).unwrap(),
        Scalar::BF16(bf16::from_f32(2.0))
    );
}

#[test]
fn pow_has_c99s_special_values_and_rounds_once() {
    let pow = |x: f64, y: f64| binary(BinaryOp::Pow, Scalar::F64(x), Scalar::F64(y)).unwrap();
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    // (x, y, x^y): exact special values, compared bit for bit.
    let cases = [
        (nan, 0.0, 1.0),
        (nan, -0.0, 1.0),
        (1.0, nan, 1.0),
        (-1.0, inf, 1.0),
        (-1.0, -inf, 1.0),
        (0.0, -3.0, inf),
        (-0.0, -3.0, -inf),
        (-0.0, -2.0, inf),
        (-0.0, 3.0, -0.0),
        (-0.0, 0.5, 0.0),
        (0.5, inf, 0.0),
        (0.5, -inf, inf),
        (2.0, inf, inf),
        (2.0, -inf, 0.0),
        (-inf, 3.0, -inf),
        (-inf, -3.0, -0.0),
        (-inf, 2.5, inf),
        (inf, -0.5, 0.0),
        (-2.0, 3.0, -8.0),
        (2.0, 10.0, 1024.0),
        (4.0, 0.5, 2.0),
        (2.0, -1075.0, 0.0),
        (10.0, 309.0, inf),
    ];
    for (x, y, want) in cases {
        assert_eq!(
            pow(x, y).to_bits(),
            Scalar::F64(want).to_bits(),
            "pow({x}, {y})"
        );
    }
    for (x, y) in [(-8.0, 1.0 / 3.0), (-2.0, 0.5), (nan, 1.0), (2.0, nan)] {
        assert!(pow(x, y).is_nan(), "pow({x}, {y})");
    }
    // Narrow dtypes: the f64 value rounded once, NaN canonical.
    let h = |v: f32| Scalar::F16(f16::from_f32(v));
    assert_eq!(
        binary(BinaryOp::Pow, h(3.0), h(0.5)).unwrap(),
        Scalar::F16(f16::from_f64(3f64.sqrt()))
    );
    assert_eq!(
        Some(binary(BinaryOp::Pow, h(-3.0), h(0.5)).unwrap()),
        tile_ir::eval::canonical_nan(DType::F16)
    );
    assert_eq!(
        binary(BinaryOp::Pow, Scalar::I32(2), Scalar::I32(3)).unwrap_err(),
        EvalError::Unsupported {
            op: "pow",
            dtype: DType::I32
        }
    );
}

#[test]
fn ill_typed_operands_are_errors() {
    let err = unary(UnaryOp::Exp, Scalar::I32(1)).unwrap_err();
    assert_eq!(
        err,
        EvalError::Unsupported {
            op: "exp",
            dtype: DType::I32
        }
    );
    assert_eq!(err.to_string(), "`exp` is not defined on i32");
    let err = binary(BinaryOp::Add, Scalar::I32(1), Scalar::I64(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`add` needs operands of one dtype, found i32, i64"
    );
    assert!(binary(BinaryOp::Shl, Scalar::F32(1.0), Scalar::F32(1.0)).is_err());
    assert!(binary(BinaryOp::And, Scalar::F32(1.0), Scalar::F32(1.0)).is_err());
    assert!(unary(UnaryOp::Not, Scalar::F64(1.0)).is_err());
    assert!(unary(UnaryOp::Abs, Scalar::U32(1)).is_err());
    assert!(fma(Scalar::I32(1), Scalar::I32(1), Scalar::I32(1)).is_err());
    assert!(fma(Scalar::F32(1.0), Scalar::F32(1.0), Scalar::F64(1.0)).is_err());
    assert!(compare(CmpPred::Eq, Scalar::U8(1), Scalar::I8(1)).is_err());
    assert!(select(Scalar::I32(1), Scalar::I32(1), Scalar::I32(2)).is_err());
    assert!(select(Scalar::Bool(true), Scalar::I32(1), Scalar::U32(2)).is_err());
}

/// `round_tf32` keeps 10 fraction bits, rounding to nearest with ties away
/// from zero (as `cvt.rna.tf32.f32`), overflowing to infinity; NaN is
/// canonical; other dtypes are refused.
#[test]
fn round_tf32_rounds_ties_away_from_zero() {
    let r = |v: f32| match unary(UnaryOp::RoundTf32, Scalar::F32(v)).unwrap() {
        Scalar::F32(x) => x,
        other => panic!("{other:?}"),
    };
    let ulp = 2f32.powi(-10);
    // A tie at 1 + ulp/2 goes away from zero, either sign; just below stays.
    assert_eq!(r(1.0 + ulp / 2.0), 1.0 + ulp);
    assert_eq!(r(-(1.0 + ulp / 2.0)), -(1.0 + ulp));
    assert_eq!(r(1.0 + ulp / 2.0 - 2f32.powi(-23)), 1.0);
    assert_eq!(r(1.0 + 3.0 * ulp / 2.0), 1.0 + 2.0 * ulp);
    // Every result has its 13 low bits clear.
    for bits in [0x3f80_1000u32, 0x0000_0fff, 0x0080_1fff, 0x4049_0fdb] {
        assert_eq!(r(f32::from_bits(bits)).to_bits() & 0x1fff, 0, "{bits:#x}");
    }
    assert_eq!(r(f32::MAX), f32::INFINITY);
    assert_eq!(r(f32::NEG_INFINITY), f32::NEG_INFINITY);
    assert_eq!(r(-0.0).to_bits(), (-0.0f32).to_bits());
    // A NaN whose payload would carry into the sign stays a NaN.
    assert_eq!(r(f32::from_bits(0x7fff_f000)).to_bits(), f32::NAN.to_bits());
    assert!(matches!(
        unary(UnaryOp::RoundTf32, Scalar::F64(1.0)),
        Err(EvalError::Unsupported { .. })
    ));
}
