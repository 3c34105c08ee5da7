//! The host's `exp` is a replica of the oracle's (`libm::exp` of libm
//! 0.2.16), bit for bit: as the function itself (JIT-compiled from
//! `host::exp_probe`, NaN payloads included) and inlined into a compiled
//! kernel, where LLVM vectorizes it, at every instruction-set level that runs
//! here. And in the x86-64-v3 softmax, the `exp` loop runs on 256-bit
//! vectors.

mod common;

use common::load;
use inkwell::context::Context;
use inkwell::execution_engine::JitFunction;
use inkwell::targets::{InitializationConfig, Target};
use inkwell::OptimizationLevel;
use tile_codegen::host;
use tile_codegen::tools;
use tile_codegen::CodegenOptions;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{eval, samples, DType, Scalar, UnaryOp};
use tile_runtime::cpu::HostIsa;
use tile_runtime::LaunchArg;

/// A deterministic generator of 64-bit words (splitmix64).
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// `bits` and its 2·`n` neighbouring bit patterns.
fn around(out: &mut Vec<u64>, bits: u64, n: u64) {
    out.extend(bits.saturating_sub(n)..=bits.saturating_add(n));
}

/// The inputs, as bits: specials, NaNs with payloads, libm's thresholds and
/// the high-word boundaries of its cases with their neighbours, the points
/// where `k` changes, every exponent of both signs, random bits and random
/// values over the finite range and the subnormal results (about 1.8M).
#[allow(clippy::excessive_precision)] // libm's thresholds, as it writes them
fn inputs() -> Vec<u64> {
    let mut out = vec![
        0,
        1 << 63,
        f64::INFINITY.to_bits(),
        f64::NEG_INFINITY.to_bits(),
        f64::MAX.to_bits(),
        f64::MIN.to_bits(),
        1,
        (1 << 63) | 1,
    ];
    // NaNs: quiet and signalling, both signs, several payloads.
    for payload in [
        1,
        2,
        0x1234_5678,
        0x4_0000_0000_0000,
        0x8_0000_0000_0001,
        (1 << 52) - 1,
    ] {
        for sign in [0, 1u64 << 63] {
            out.push(sign | 0x7ff0_0000_0000_0000 | payload);
        }
    }
    // The overflow and underflow thresholds, libm's first test (|x| ≥
    // 708.39), the limits of the finite results, 1.
    for x in [
        709.782712893383973096_f64,
        -745.13321910194110842,
        -708.39641853226410622,
        708.39641853226410622,
        709.782712893384,
        -745.1332191019412,
        -744.4400719213812,
        1.0,
        -1.0,
    ] {
        around(&mut out, x.to_bits(), 64);
    }
    // libm's case boundaries on the high word of |x|, both signs.
    for high in [
        0x4086_232b_u64,
        0x3fd6_2e42,
        0x3ff0_a2b2,
        0x3e30_0000,
        0x7ff0_0000,
    ] {
        for sign in [0, 1u64 << 63] {
            for low in [0, 0xffff_ffff] {
                around(&mut out, sign | high << 32 | low, 16);
            }
        }
    }
    // Where k = trunc(x/ln 2 ± ½) changes, and the multiples of ln 2.
    for k in -1080..=1030 {
        let k = f64::from(k);
        for x in [
            (k + 0.5) * std::f64::consts::LN_2,
            k * std::f64::consts::LN_2,
        ] {
            around(&mut out, x.to_bits(), 4);
        }
    }
    let mut rng = Bits(0x5eed);
    // Every exponent, both signs.
    for exponent in 0..2048u64 {
        for sign in [0, 1u64 << 63] {
            for _ in 0..96 {
                out.push(sign | exponent << 52 | rng.next() >> 12);
            }
        }
    }
    for _ in 0..400_000 {
        out.push(rng.next());
    }
    for _ in 0..800_000 {
        out.push(rng.uniform(-746.0, 710.0).to_bits());
    }
    // Subnormal and smallest normal results.
    for _ in 0..200_000 {
        out.push(rng.uniform(-745.2, -708.3).to_bits());
    }
    out
}

type Probe = unsafe extern "C" fn(f64) -> f64;

#[test]
fn the_function_is_libm_exp_bit_for_bit() {
    Target::initialize_native(&InitializationConfig::default()).expect("the native target");
    let ctx = Context::create();
    let module = host::exp_probe(&ctx).expect("the probe module");
    let engine = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .expect("a JIT for the host");
    // SAFETY: `exp_probe` defines EXP_PROBE as `double (double)`, and the
    // engine outlives every call below.
    let probe: JitFunction<Probe> =
        unsafe { engine.get_function(host::EXP_PROBE) }.expect("the probe function");
    let inputs = inputs();
    assert!(inputs.len() > 1_800_000, "{} inputs", inputs.len());
    let mut wrong = Vec::new();
    for &bits in &inputs {
        let x = f64::from_bits(bits);
        // SAFETY: the probe computes on its argument and touches no memory.
        let got = unsafe { probe.call(x) }.to_bits();
        let want = libm::exp(x).to_bits();
        if got != want {
            wrong.push((bits, got, want));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} inputs differ (input, got, libm): {:#018x?}",
        wrong.len(),
        inputs.len(),
        &wrong[..wrong.len().min(8)]
    );
}

/// Runs the exp kernel of `dtype` on `values` at each level that runs here
/// and compares every result with the oracle's (`tile_ir::eval`: libm's
/// value rounded once to the dtype, NaN canonical).
fn kernel_agrees(dtype: DType, values: Vec<Scalar>) {
    let block = 1024;
    let func = samples::unary(UnaryOp::Exp, dtype, block).unwrap();
    let n = values.len();
    let want: Vec<u64> = values
        .iter()
        .map(|&v| eval::unary(UnaryOp::Exp, v).unwrap().to_bits())
        .collect();
    let input = HostTensor::from_scalars(dtype, &[n], &values).unwrap();
    let zeros = vec![Scalar::zero(dtype); n];
    for isa in HostIsa::for_this_architecture() {
        if !isa.runs_here() {
            eprintln!("skipped: this CPU does not run {isa} code");
            continue;
        }
        let image = host::compile(&func, isa, &CodegenOptions::default()).unwrap();
        let library = load(&image, &func).unwrap();
        let mut args = [
            Arg::Tensor(input.clone()),
            Arg::Tensor(HostTensor::from_scalars(dtype, &[n], &zeros).unwrap()),
        ];
        let mut launch: Vec<_> = args.iter_mut().map(LaunchArg::from).collect();
        library
            .run([n.div_ceil(block) as u32, 1, 1], &mut launch)
            .unwrap_or_else(|e| panic!("{isa}: {e}"));
        let Arg::Tensor(out) = &args[1] else {
            unreachable!("the output is a tensor")
        };
        let got: Vec<u64> = (0..n).map(|i| out.get(&[i]).unwrap().to_bits()).collect();
        let wrong: Vec<_> = (0..n)
            .filter(|&i| got[i] != want[i])
            .map(|i| (values[i].to_bits(), got[i], want[i]))
            .take(8)
            .collect();
        assert!(
            wrong.is_empty(),
            "{dtype} ({isa}): inputs differ (input, got, oracle): {wrong:#018x?}"
        );
    }
}

#[test]
fn kernels_equal_the_oracle_on_f64() {
    let values = inputs()
        .into_iter()
        .map(|b| Scalar::F64(f64::from_bits(b)))
        .collect();
    kernel_agrees(DType::F64, values);
}

#[test]
fn kernels_equal_the_oracle_on_f32() {
    // Every 4099th f32 bit pattern (about a million, all exponents).
    let values = (0..=u32::MAX)
        .step_by(4099)
        .map(|b| Scalar::F32(f32::from_bits(b)))
        .collect();
    kernel_agrees(DType::F32, values);
}

#[test]
fn the_softmax_exp_loop_runs_on_256_bit_vectors() {
    if !HostIsa::for_this_architecture().contains(&HostIsa::X86_64V3) {
        eprintln!("skipped: not an x86-64 build");
        return;
    }
    let image = host::compile(
        &samples::softmax(4, 256).unwrap(),
        HostIsa::X86_64V3,
        &CodegenOptions::default(),
    )
    .unwrap();
    let listing = tools::disassemble(image.shared_object()).unwrap();
    // The replica's f64 quotient and its float-to-int conversion of k only
    // occur on the exp path (softmax's own division is in f32).
    for op in ["vdivpd", "vcvttpd2dq"] {
        assert!(
            listing
                .lines()
                .any(|l| l.contains(op) && l.contains("%ymm")),
            "no 256-bit {op} in the x86-64-v3 softmax"
        );
    }
    // Slot 0 of the math table is exp's: nothing loads from the table.
    assert!(
        !image
            .llvm_ir_opt()
            .lines()
            .any(|l| l.contains("load") && l.contains("@tile_host_math")),
        "the softmax still calls exp through the table"
    );
}
