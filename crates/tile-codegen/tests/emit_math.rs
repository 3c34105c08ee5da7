//! The math library (`UnaryOp::MATH`, `BinaryOp::MATH`) on dense samples,
//! through `scalar::probe` (the LLVM IR every GPU target receives, run on
//! the host): every exact function's f32 results within one ulp of the
//! oracle and its f64 results within the function's bound
//! (`probe::f64_bound`), special values exact; `atan2` and `hypot`, exact
//! and fast, with C99's special values bit for bit; the fast library's
//! functions compute without f64 (their bounds: tests/emit_fast_math.rs).
//! The measured maxima are printed (run with `--nocapture`) and tabulated
//! in docs/backends.md.

mod probe;

use probe::{check_fast_math_gpu_code, f64_bound, run_probe, ulps};
use tile_ir::{eval, samples, BinaryOp, DType, Scalar, UnaryOp};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::ThreadOpKind;

/// The bound of the two-operand `op` (`atan2`, `hypot`) for f64 results, and
/// of its fast f32 variant, in ulps (docs/backends.md).
fn binary_bounds(op: BinaryOp) -> (u64, u64) {
    match op {
        BinaryOp::Atan2 => (2, 2),
        _ => (2, 1),
    }
}

/// Every 2^16-th f32 bit pattern (both signs, all exponents) and, for
/// functions of a bounded domain, 4,096 values spread over it.
fn f32_samples(op: UnaryOp) -> Vec<u64> {
    let mut xs: Vec<u64> = (0..65536u64).map(|i| i << 16 | (i & 0xffff)).collect();
    if let Some((lo, hi)) = domain(op) {
        xs.extend((0..4096u32).map(|i| {
            let v = lo + (hi - lo) * f64::from(i) / 4095.0;
            u64::from((v as f32).to_bits())
        }));
    }
    xs
}

/// f64 values spread over the exponent range below 2^140 (both signs), and,
/// for functions of a bounded domain, 20,000 values spread over it and
/// values next to its ends.
fn f64_samples(op: UnaryOp) -> Vec<u64> {
    let mut xs: Vec<u64> = (0..20000u64)
        .map(|i| {
            let exp = 1023 - 60 + (i * 7919) % 200;
            let sign = (i & 1) << 63;
            sign | exp << 52 | (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 12)
        })
        .collect();
    if let Some((lo, hi)) = domain(op) {
        xs.extend((0..20000u32).map(|i| (lo + (hi - lo) * f64::from(i) / 19999.0).to_bits()));
        for end in [lo, hi] {
            xs.extend((1..60).map(|k| (end - end.signum() * 2f64.powi(-k)).to_bits()));
        }
    }
    xs
}

/// Where a function's interesting values lie, when that is not the whole
/// line: its domain, or where it changes method.
fn domain(op: UnaryOp) -> Option<(f64, f64)> {
    match op {
        UnaryOp::Asin | UnaryOp::Acos | UnaryOp::Atanh => Some((-1.0, 1.0)),
        UnaryOp::Acosh => Some((1.0, 4.0)),
        UnaryOp::Erfc | UnaryOp::Erf => Some((-7.0, 28.0)),
        UnaryOp::Log1p => Some((-1.0, 3.0)),
        UnaryOp::Sinh | UnaryOp::Cosh | UnaryOp::Expm1 | UnaryOp::Sigmoid => Some((-720.0, 720.0)),
        _ => None,
    }
}

/// The largest ulp distance of `got` from the oracle's `op` on `xs` of
/// `dtype`, asserting it is at most `bound` and that special values (NaN,
/// ±∞) are exact.
fn worst_unary(op: UnaryOp, dtype: DType, xs: &[u64], got: &[u64], bound: u64, what: &str) -> u64 {
    let mut worst = 0;
    for (&g, &x) in got.iter().zip(xs) {
        let w = eval::unary(op, Scalar::from_bits(dtype, x))
            .expect("the oracle")
            .to_bits();
        if g == w {
            continue;
        }
        let wv = Scalar::from_bits(dtype, w);
        assert!(
            !wv.is_nan() && wv.to_f64().is_finite(),
            "{what} {} {dtype} of {:e}: special value {w:#x}, got {g:#x}",
            op.name(),
            Scalar::from_bits(dtype, x).to_f64()
        );
        let d = ulps(dtype, g, w);
        assert!(
            d <= bound,
            "{what} {} {dtype} of {:e} ({x:#x}): {d} ulps (got {:e}, the oracle {:e})",
            op.name(),
            Scalar::from_bits(dtype, x).to_f64(),
            Scalar::from_bits(dtype, g).to_f64(),
            wv.to_f64()
        );
        worst = worst.max(d);
    }
    worst
}

fn unary_results(op: UnaryOp, dtype: DType, xs: &[u64], fast_math: bool) -> Vec<u64> {
    let inputs: Vec<[u64; 3]> = xs.iter().map(|&x| [x, 0, 0]).collect();
    run_probe(&ThreadOpKind::Unary(op), &[dtype], &inputs, fast_math).expect("a math op")
}

#[test]
fn exact_functions_on_dense_f32_and_f64_samples() {
    for &op in UnaryOp::MATH {
        let xs = f32_samples(op);
        let got = unary_results(op, DType::F32, &xs, false);
        let worst32 = worst_unary(op, DType::F32, &xs, &got, 1, "exact");
        let xs = f64_samples(op);
        let got = unary_results(op, DType::F64, &xs, false);
        let worst64 = worst_unary(op, DType::F64, &xs, &got, f64_bound(op), "exact");
        println!(
            "{:<8} f32 max {worst32} ulp, f64 max {worst64} ulp",
            op.name()
        );
    }
}

#[test]
fn sin_cos_and_tan_of_f64_over_the_whole_exponent_range() {
    // The three reductions: Cody–Waite below 2^19, 288 bits of 2/π below
    // 2^140, all 1,200 bits up to the largest f64; with both boundaries and
    // the largest finite value.
    let mut xs: Vec<u64> = (0..20000u64)
        .map(|i| {
            let exp = (i * 7919) % 2047;
            let sign = (i & 1) << 63;
            sign | exp << 52 | (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 12)
        })
        .collect();
    for x in [2f64.powi(19), 2f64.powi(140), f64::MAX, -f64::MAX] {
        xs.extend([x.to_bits() - 1, x.to_bits()]);
    }
    for op in [UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tan] {
        let got = unary_results(op, DType::F64, &xs, false);
        let worst = worst_unary(op, DType::F64, &xs, &got, f64_bound(op), "exact");
        println!(
            "{:<3} f64 over every exponent: {} samples, max {worst} ulp",
            op.name(),
            xs.len()
        );
    }
}

/// Pairs for `atan2` and `hypot`: every combination of signed zeros,
/// infinities, NaN, subnormals and ordinary values, then dense pairs over
/// the exponent range of `dtype` (f32 or f64).
fn pairs(dtype: DType) -> Vec<[u64; 3]> {
    let specials = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        3.0,
        -4.0,
        1e-300,
        5e-324,
        1e300,
        1e-40,
        1e38,
    ];
    let bits = |v: f64| eval::cast(Scalar::F64(v), dtype).to_bits();
    let mut out = Vec::new();
    for &y in &specials {
        for &x in &specials {
            out.push([bits(y), bits(x), 0]);
        }
    }
    let (exponents, bias, fraction) = match dtype {
        DType::F32 => (60u64, 127u64, 23u32),
        _ => (400, 1023, 52),
    };
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..40000 {
        let mut value = || {
            let r = next();
            let exp = bias - exponents / 2 + r % exponents;
            (r >> 63) << (dtype.bits() - 1) | exp << fraction | (r >> 20) & ((1 << fraction) - 1)
        };
        out.push([value(), value(), 0]);
    }
    out
}

fn worst_binary(op: BinaryOp, dtype: DType, fast_math: bool, bound: u64) -> u64 {
    let inputs = pairs(dtype);
    let got = run_probe(
        &ThreadOpKind::Binary(op),
        &[dtype, dtype],
        &inputs,
        fast_math,
    )
    .expect("a math op");
    let mut worst = 0;
    for (&g, input) in got.iter().zip(&inputs) {
        let (y, x) = (
            Scalar::from_bits(dtype, input[0]),
            Scalar::from_bits(dtype, input[1]),
        );
        let w = eval::binary(op, y, x).expect("the oracle").to_bits();
        if g == w {
            continue;
        }
        let wv = Scalar::from_bits(dtype, w);
        let d = if wv.is_nan() || !wv.to_f64().is_finite() {
            u64::MAX
        } else {
            ulps(dtype, g, w)
        };
        assert!(
            d <= bound,
            "{} {dtype} (fast: {fast_math}) of ({:e}, {:e}): got {:e}, the oracle {:e}",
            op.name(),
            y.to_f64(),
            x.to_f64(),
            Scalar::from_bits(dtype, g).to_f64(),
            wv.to_f64()
        );
        worst = worst.max(d);
    }
    worst
}

#[test]
fn atan2_and_hypot_keep_c99s_special_values_and_their_bounds() {
    for op in [BinaryOp::Atan2, BinaryOp::Hypot] {
        let (exact64, fast32) = binary_bounds(op);
        let w64 = worst_binary(op, DType::F64, false, exact64);
        let w32 = worst_binary(op, DType::F32, false, 1);
        let fast = worst_binary(op, DType::F32, true, fast32);
        println!(
            "{:<5} exact f64 max {w64} ulp, exact f32 max {w32} ulp, fast f32 max {fast} ulp",
            op.name()
        );
    }
}

#[test]
fn fast_functions_have_no_f64_arithmetic_and_assemble() {
    for op in [UnaryOp::Atan, UnaryOp::Sinh, UnaryOp::Acosh, UnaryOp::Cbrt] {
        let program = lower(
            &samples::unary(op, DType::F32, 256).unwrap(),
            &LowerOptions::warps(2),
        )
        .unwrap();
        check_fast_math_gpu_code(&program, op.name());
    }
}
