//! The fast math library (`CodegenOptions::fast_math`) on the host, through
//! `scalar::probe` (the LLVM IR every target receives): each function's f32
//! results within its documented ulp bound of the correctly rounded value
//! (the oracle) on dense samples, special values exact, and f16/bf16
//! results through it within one ulp of the oracle on every input. Host
//! kernels compiled with the option compute what the probe does, bit for
//! bit, vectorized at every instruction-set level that runs here.

mod common;
mod probe;

use common::load;
use probe::{check_fast_math_gpu_code, run_probe, ulps};
use tile_codegen::host;
use tile_codegen::CodegenOptions;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{eval, samples, BinaryOp, DType, Scalar, UnaryOp};
use tile_runtime::cpu::HostIsa;
use tile_runtime::LaunchArg;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::ThreadOpKind;

/// The documented bound (docs/backends.md) of each fast f32 function, in
/// f32 ulps: the largest error over the samples below.
fn bound(op: UnaryOp) -> u64 {
    match op {
        UnaryOp::Exp
        | UnaryOp::Exp2
        | UnaryOp::Log
        | UnaryOp::Log2
        | UnaryOp::Rsqrt
        | UnaryOp::Expm1 => 1,
        UnaryOp::Cbrt => 0,
        UnaryOp::Tanh | UnaryOp::Tan | UnaryOp::Asinh => 3,
        _ => 2,
    }
}

/// The functions of the fast library (erf, erfc and sqrt have none).
const FAST: [UnaryOp; 21] = [
    UnaryOp::Exp,
    UnaryOp::Exp2,
    UnaryOp::Log,
    UnaryOp::Log2,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tan,
    UnaryOp::Tanh,
    UnaryOp::Rsqrt,
    UnaryOp::Asin,
    UnaryOp::Acos,
    UnaryOp::Atan,
    UnaryOp::Sinh,
    UnaryOp::Cosh,
    UnaryOp::Asinh,
    UnaryOp::Acosh,
    UnaryOp::Atanh,
    UnaryOp::Sigmoid,
    UnaryOp::Log1p,
    UnaryOp::Expm1,
    UnaryOp::Cbrt,
];

/// Compares the fast `op` on `dtype` with the oracle over `xs`; returns
/// the largest distance in ulps. Special results (NaN, ±∞) must be exact.
fn worst(op: UnaryOp, dtype: DType, xs: &[u64], limit: u64) -> u64 {
    let inputs: Vec<[u64; 3]> = xs.iter().map(|&x| [x, 0, 0]).collect();
    let got = run_probe(&ThreadOpKind::Unary(op), &[dtype], &inputs, true).expect("a math op");
    let mut worst = 0;
    for (&g, &x) in got.iter().zip(xs) {
        let w = eval::unary(op, Scalar::from_bits(dtype, x))
            .expect("the oracle")
            .to_bits();
        let wv = Scalar::from_bits(dtype, w);
        let d = if g == w {
            0
        } else if wv.is_nan() || !wv.to_f64().is_finite() {
            u64::MAX
        } else {
            ulps(dtype, g, w)
        };
        assert!(
            d <= limit,
            "fast {} {dtype} of {x:#x} ({}): got {g:#x}, the oracle {w:#x}",
            op.name(),
            Scalar::from_bits(dtype, x).to_f64()
        );
        worst = worst.max(d);
    }
    worst
}

/// Every 2^12-th f32 bit pattern (both signs, every exponent, subnormals,
/// ±∞ and NaNs among them), every f32 in [-2^-3, 2^-3)·2^k steps near the
/// interesting ranges, and the special values.
fn f32_samples() -> Vec<u64> {
    let mut xs: Vec<u64> = (0..(1u64 << 20))
        .map(|i| i << 12 | (i * 2654435761) & 0xfff)
        .collect();
    for v in [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-45,
        88.72283,
        88.72284,
        -103.97207,
        -103.97209,
        128.0,
        -150.0,
        -149.5,
        131072.0,
        131073.0,
        0.55,
        -0.55,
        9.01,
        std::f32::consts::FRAC_PI_2,
        std::f32::consts::PI,
        // Where the new functions change method.
        0.5,
        -0.5,
        2.0,
        9.0,
        -9.0,
        4096.0,
        4097.0,
        16_777_216.0,
        0.999_999_94,
        -0.999_999_94,
        1.000_000_1,
    ] {
        xs.push(u64::from(v.to_bits()));
    }
    xs
}

#[test]
fn fast_f32_functions_are_within_their_bounds() {
    let xs = f32_samples();
    for op in FAST {
        let seen = worst(op, DType::F32, &xs, bound(op));
        println!(
            "fast {:<5} f32: {} samples, max {seen} ulp (bound {})",
            op.name(),
            xs.len(),
            bound(op)
        );
    }
}

#[test]
fn narrow_floats_through_the_fast_library_are_within_one_ulp() {
    for dtype in [DType::F16, DType::BF16] {
        let xs: Vec<u64> = (0..1u64 << 16).collect();
        for op in FAST {
            worst(op, dtype, &xs, 1);
        }
    }
}

/// The fast `x / y` of `dtype` on `pairs` against the oracle's correctly
/// rounded quotient; returns the largest distance in ulps (between bit
/// patterns of one sign: the largest finite value is one ulp from ∞, the
/// smallest subnormal one from 0). A NaN must be one.
fn worst_division(dtype: DType, pairs: &[(u64, u64)], limit: u64) -> u64 {
    let inputs: Vec<[u64; 3]> = pairs.iter().map(|&(x, y)| [x, y, 0]).collect();
    let div = ThreadOpKind::Binary(BinaryOp::Div);
    let got = run_probe(&div, &[dtype, dtype], &inputs, true).expect("division");
    let mut worst = 0;
    for (&g, &(x, y)) in got.iter().zip(pairs) {
        let (xv, yv) = (Scalar::from_bits(dtype, x), Scalar::from_bits(dtype, y));
        let w = eval::binary(BinaryOp::Div, xv, yv)
            .expect("the oracle")
            .to_bits();
        let wv = Scalar::from_bits(dtype, w);
        let special = wv.is_nan() || Scalar::from_bits(dtype, g).is_nan();
        let d = match (g == w, special) {
            (true, _) => 0,
            (false, true) => u64::MAX,
            (false, false) => ulps(dtype, g, w),
        };
        assert!(
            d <= limit,
            "fast {dtype} {} / {}: got {g:#x}, the oracle {w:#x}",
            xv.to_f64(),
            yv.to_f64()
        );
        worst = worst.max(d);
    }
    worst
}

#[test]
fn fast_division_is_within_two_ulps() {
    // Every dense sample over a divisor of every exponent (subnormal,
    // above 2^126, zeros, infinities, NaN), and quotients near overflow
    // and underflow.
    let xs = f32_samples();
    let mut pairs: Vec<(u64, u64)> = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| (x, xs[(i * 7919 + 13) % xs.len()]))
        .collect();
    let edges = [
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        2f32.powi(126),
        2f32.powi(127) * 1.75,
        2f32.powi(-127),
        3.0,
        0.1,
        1.0,
        -0.0,
        f32::INFINITY,
    ];
    for x in edges {
        for y in edges {
            pairs.push((u64::from(x.to_bits()), u64::from(y.to_bits())));
        }
    }
    let seen = worst_division(DType::F32, &pairs, 2);
    println!(
        "fast div   f32: {} pairs, max {seen} ulp (bound 2)",
        pairs.len()
    );
    let narrow: Vec<(u64, u64)> = (0..1u64 << 16).map(|i| (i, (i * 40503) & 0xffff)).collect();
    for dtype in [DType::F16, DType::BF16] {
        worst_division(dtype, &narrow, 1);
    }
}

#[test]
fn f64_erf_and_erfc_keep_the_exact_library() {
    // f64 has no fast variant (its results stay within the exact library's
    // f64 bound; f32 arithmetic would be millions of ulps off), and erf and
    // erfc have none at all (f32 results bit for bit the oracle's).
    let xs: Vec<u64> = (0..4096u32)
        .map(|i| (f64::from(i) * 0.173 - 350.0).to_bits())
        .collect();
    for op in [UnaryOp::Exp, UnaryOp::Sin] {
        assert!(worst(op, DType::F64, &xs, 2) <= 2);
    }
    let f32s: Vec<u64> = (0..4096u64).map(|i| i << 20).collect();
    assert_eq!(worst(UnaryOp::Erf, DType::F32, &f32s, 1), 0);
    assert_eq!(worst(UnaryOp::Erfc, DType::F32, &f32s, 1), 0);
}

#[test]
fn fast_softmax_has_no_f64_arithmetic_and_assembles() {
    let program = lower(&samples::softmax(4, 256).unwrap(), &LowerOptions::warps(4)).unwrap();
    check_fast_math_gpu_code(&program, "exp");
}

/// Runs the host kernel `out = op(x)` compiled with `options` for `isa` on
/// `xs` (bits of `dtype`); returns the bits of `out`.
fn run_host_unary(
    op: UnaryOp,
    dtype: DType,
    xs: &[u64],
    isa: HostIsa,
    options: &CodegenOptions,
) -> Vec<u64> {
    let block = 1024;
    let func = samples::unary(op, dtype, block).unwrap();
    let values: Vec<Scalar> = xs.iter().map(|&x| Scalar::from_bits(dtype, x)).collect();
    let n = values.len();
    let image = host::compile(&func, isa, options)
        .unwrap_or_else(|e| panic!("{} on {isa}: {e}", op.name()));
    let library = load(&image, &func).unwrap();
    let mut args = [
        Arg::Tensor(HostTensor::from_scalars(dtype, &[n], &values).unwrap()),
        Arg::Tensor(HostTensor::from_scalars(dtype, &[n], &vec![Scalar::zero(dtype); n]).unwrap()),
    ];
    let mut launch: Vec<_> = args.iter_mut().map(LaunchArg::from).collect();
    library
        .run([n.div_ceil(block) as u32, 1, 1], &mut launch)
        .unwrap_or_else(|e| panic!("{} on {isa}: {e}", op.name()));
    let Arg::Tensor(out) = &args[1] else {
        unreachable!("the output is a tensor")
    };
    (0..n).map(|i| out.get(&[i]).unwrap().to_bits()).collect()
}

#[test]
fn host_kernels_with_fast_math_compute_the_fast_library() {
    // Every 16th sample (65,563 values, a partial last tile), through a
    // vectorized kernel: bit for bit the scalar library's results, which
    // the test above bounds against the oracle.
    let xs: Vec<u64> = f32_samples().into_iter().step_by(16).collect();
    let fast = CodegenOptions {
        fast_math: true,
        ..CodegenOptions::default()
    };
    let inputs: Vec<[u64; 3]> = xs.iter().map(|&x| [x, 0, 0]).collect();
    // The first nine functions, and some of the others (cbrt rounds
    // correctly on these samples in both libraries).
    let ops = FAST[..9].iter().chain(&[
        UnaryOp::Atan,
        UnaryOp::Sinh,
        UnaryOp::Sigmoid,
        UnaryOp::Log1p,
    ]);
    for isa in HostIsa::for_this_architecture() {
        if !isa.runs_here() {
            eprintln!("skipped: this CPU does not run {isa} code");
            continue;
        }
        for &op in ops.clone() {
            let want = run_probe(&ThreadOpKind::Unary(op), &[DType::F32], &inputs, true).unwrap();
            let got = run_host_unary(op, DType::F32, &xs, isa, &fast);
            for ((&x, &g), &w) in xs.iter().zip(&got).zip(&want) {
                assert_eq!(
                    g,
                    w,
                    "fast {} of {x:#x} on {isa}: the kernel gives {g:#x}, the library {w:#x}",
                    op.name()
                );
            }
            // Without the option the same kernel is the oracle's, and for
            // some inputs differs from the fast library.
            let exact = run_host_unary(op, DType::F32, &xs, isa, &CodegenOptions::default());
            let oracle = |x: u64| {
                eval::unary(op, Scalar::from_bits(DType::F32, x))
                    .unwrap()
                    .to_bits()
            };
            assert!(xs.iter().zip(&exact).all(|(&x, &e)| e == oracle(x)));
            assert_ne!(exact, got, "fast {} equals the exact library", op.name());
        }
    }
}

#[test]
fn fast_host_softmax_has_no_f64_arithmetic() {
    let func = samples::softmax(4, 256).unwrap();
    let f64_ops = |ir: &str| {
        ir.lines()
            .filter(|l| l.contains(" double") && !l.trim_start().starts_with("declare"))
            .count()
    };
    let fast = CodegenOptions {
        fast_math: true,
        ..CodegenOptions::default()
    };
    for isa in HostIsa::for_this_architecture() {
        let exact = host::compile(&func, isa, &CodegenOptions::default()).unwrap();
        let quick = host::compile(&func, isa, &fast).unwrap();
        assert!(
            f64_ops(exact.llvm_ir_opt()) > 0,
            "{isa}: the exact exp computes in f64"
        );
        assert_eq!(
            f64_ops(quick.llvm_ir_opt()),
            0,
            "{isa}: {}",
            quick.llvm_ir_opt()
        );
    }
}
