//! `approx_math`'s tanh on the emulation targets, which run the GPU image
//! with each approximate instruction modeled as its function rounded once
//! (`tile_abi::emulation::ApproxFn::model`): within docs/backends.md's
//! bound of the correctly rounded result (the oracle) over samples of every
//! exponent and densely where the polynomial meets the exponential, with
//! special values exact; and computed on the hardware's exp2.

mod emulated;

use emulated::image;
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{eval, verify, DType, Function, Scalar, UnaryOp};

/// Elements each program maps.
const BLOCK: usize = 1024;

/// The bound asserted on the emulation targets, in f32 ulps (the measured
/// largest error is printed).
const TANH_BOUND: u64 = 2;

/// `y = tanh(x)` over rows of [`BLOCK`] elements.
fn tanh_kernel() -> Function {
    let text = format!(
        r#"kernel @tanh(%x: tensor<f32, 2>, %y: tensor<f32, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [1, {BLOCK}] : view<f32, [1, {BLOCK}]>
  %t = load %vx[%pid, %zero] : tile<1x{BLOCK}xf32>
  %h = tanh %t : tile<1x{BLOCK}xf32>
  %vy = partition_view %y [1, {BLOCK}] : view<f32, [1, {BLOCK}]>
  store %h, %vy[%pid, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// Every 2^16-th f32 bit pattern (both signs, every exponent, ±∞ and
/// NaNs), every 64th f32 of [0.5, 1) and of (−1, −0.5] (where the
/// polynomial hands over to the exponential and the error peaks), and the
/// special values; padded to whole rows with zeros.
fn samples() -> Vec<f32> {
    let mut xs: Vec<f32> = (0..1u64 << 16)
        .map(|i| f32::from_bits((i << 16 | (i * 40_503) & 0xffff) as u32))
        .collect();
    let (half, one) = (0.5f32.to_bits(), 1.0f32.to_bits());
    for bits in (half..one).step_by(64) {
        xs.extend([f32::from_bits(bits), -f32::from_bits(bits)]);
    }
    xs.extend([
        0.0,
        -0.0,
        0.625,
        -0.625,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-45,
        -1e-45,
        9.01,
        45.0,
        -89.0,
        f32::MAX,
    ]);
    xs.resize(xs.len().div_ceil(BLOCK) * BLOCK, 0.0);
    xs
}

/// The distance in f32 ulps between `a` and `b` of one sign.
fn ulps(a: f32, b: f32) -> u64 {
    let key = |v: f32| {
        let bits = i64::from(v.to_bits() & 0x7fff_ffff);
        if v.is_sign_negative() {
            -bits
        } else {
            bits
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

#[test]
fn approximate_tanh_is_within_its_bound_on_the_emulation_targets() {
    let func = tanh_kernel();
    let xs = samples();
    let rows = xs.len() / BLOCK;
    let options = CodegenOptions {
        fast_math: true,
        approx_math: true,
        ..CodegenOptions::default()
    };
    for (target, exp2) in [
        (Target::Nvptx(Sm::Sm80), "@llvm.nvvm.ex2.approx.f32("),
        (Target::Amdgpu(Gfx::Gfx942), "@llvm.amdgcn.exp2.f32("),
    ] {
        let module = emulated::module(&func, target, 4, &options).unwrap();
        // The hardware's exp2, not the fast library's Cody–Waite
        // reduction (whose `rint` it does not need).
        let ir = &module.llvm_ir_opt;
        assert!(ir.contains(exp2), "{target}: no {exp2} in\n{ir}");
        assert!(!ir.contains("@llvm.rint.f32("), "{target}: {ir}");
        let kernel = image(&module).unwrap();
        let mut args = vec![
            Arg::Tensor(HostTensor::from_vec(&[rows, BLOCK], xs.clone()).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[rows, BLOCK])),
        ];
        emulated::launch(&kernel, [rows as u32, 1, 1], 4, &mut args)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = emulated::f32_bits(&args[1]);
        let mut worst = 0;
        for (&x, &g) in xs.iter().zip(&got) {
            let want = eval::unary(UnaryOp::Tanh, Scalar::F32(x))
                .expect("the oracle")
                .to_f64() as f32;
            let g = f32::from_bits(g);
            if want.is_nan() {
                assert!(g.is_nan(), "{target}: tanh({x}) = {g}, not NaN");
                continue;
            }
            let special = x == 0.0 || x.is_infinite();
            let d = if g.is_sign_negative() == want.is_sign_negative() {
                ulps(g, want)
            } else {
                u64::MAX
            };
            let limit = if special { 0 } else { TANH_BOUND };
            assert!(
                d <= limit,
                "{target}: tanh({x:e}) = {g:e}, the oracle {want:e} ({d} ulps)"
            );
            worst = worst.max(d);
        }
        println!(
            "approx tanh on {target}: {} samples, max {worst} ulp",
            xs.len()
        );
    }
}
