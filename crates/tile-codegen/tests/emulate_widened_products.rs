//! Products whose operands the tensor cores cannot multiply as they are,
//! rewritten onto f16 instructions (`tile_thread::lower`'s
//! `widen_products`): i8 dots, exact and wrapping in `i32`, as
//! `c + cast(dot(f16(a), f16(b), 0), i32)` where `K ≤ 1024` keeps every
//! partial sum an integer below 2²⁴. On sm_80's `mma.sync`, sm_90a's
//! `wgmma` and gfx942's MFMA, through the lockstep emulator and the
//! emulation target, bit for bit the interpreter's, with the operands'
//! extremes (−128 · −128 summed `K` times) and an accumulator that wraps.

mod emulated;

use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::ThreadOpKind;

/// `out = c + a·b` over one `[m, k] × [k, n]` block of i8 tiles.
fn i8_dot([m, k, n]: [usize; 3]) -> Function {
    let text = format!(
        r#"kernel @i8_dot(%a: tensor<i8, 2>, %b: tensor<i8, 2>, %c: tensor<i32, 2>, %out: tensor<i32, 2>) {{
  %zero = constant 0 : i32
  %va = partition_view %a [{m}, {k}] : view<i8, [{m}, {k}]>
  %vb = partition_view %b [{k}, {n}] : view<i8, [{k}, {n}]>
  %vc = partition_view %c [{m}, {n}] : view<i32, [{m}, {n}]>
  %ta = load %va[%zero, %zero] : tile<{m}x{k}xi8>
  %tb = load %vb[%zero, %zero] : tile<{k}x{n}xi8>
  %tc = load %vc[%zero, %zero] : tile<{m}x{n}xi32>
  %r = dot ieee %ta, %tb, %tc : tile<{m}x{n}xi32>
  %vo = partition_view %out [{m}, {n}] : view<i32, [{m}, {n}]>
  store %r, %vo[%zero, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// `a`, `b` (every other row of `a` all −128, the rest pseudo-random),
/// `c` near `i32::MAX` so that the sums wrap, and a zero `out`.
fn args([m, k, n]: [usize; 3]) -> Vec<Arg> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) as i64
    };
    let i8s = |rows: usize, cols: usize, next: &mut dyn FnMut() -> i64| -> Vec<Scalar> {
        (0..rows * cols)
            .map(|i| match (i / cols) % 2 {
                0 => Scalar::I8(-128),
                _ => Scalar::I8((next() % 256 - 128) as i8),
            })
            .collect()
    };
    let a = i8s(m, k, &mut next);
    let b = i8s(k, n, &mut next);
    let c: Vec<Scalar> = (0..m * n)
        .map(|_| Scalar::I32(i32::MAX - (next() % 1000) as i32))
        .collect();
    let tensor = |dtype, shape: &[usize], v: &[Scalar]| {
        Arg::Tensor(HostTensor::from_scalars(dtype, shape, v).unwrap())
    };
    vec![
        tensor(DType::I8, &[m, k], &a),
        tensor(DType::I8, &[k, n], &b),
        tensor(DType::I32, &[m, n], &c),
        tensor(DType::I32, &[m, n], &vec![Scalar::I32(0); m * n]),
    ]
}

fn out_bits(args: &[Arg]) -> Vec<u64> {
    match &args[3] {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_bits()).collect(),
        _ => unreachable!("out is a tensor"),
    }
}

#[test]
fn i8_dots_run_on_f16_tensor_cores_exactly() {
    let targets = [
        Target::Nvptx(Sm::Sm80),
        Target::Nvptx(Sm::Sm90a),
        Target::Amdgpu(Gfx::Gfx942),
    ];
    for (shape, warps) in [([64, 64, 64], 4), ([32, 1024, 16], 2), ([64, 128, 128], 4)] {
        let func = i8_dot(shape);
        let mut want = args(shape);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        for target in targets {
            let what = format!("{shape:?} on {target}, {warps} warps");
            let lowering = LowerOptions::warps(warps).with_tensor_cores(target.tensor_cores());
            let program = lower(&func, &lowering).unwrap();
            let on_cores = program.ops.iter().any(|(_, op)| {
                matches!(
                    op.kind,
                    ThreadOpKind::Mma { .. } | ThreadOpKind::Wgmma { .. }
                )
            });
            assert!(on_cores, "{what}: no tensor-core instruction");
            let mut lockstep = args(shape);
            tile_thread::emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
            assert_eq!(out_bits(&lockstep), out_bits(&want), "{what}: lockstep");
            let mut emulated = args(shape);
            emulated::run(&func, target, warps, [1, 1, 1], &mut emulated)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(
                out_bits(&emulated),
                out_bits(&want),
                "{what}: emulation target"
            );
        }
    }
}

/// Past `K = 1024` a partial sum could leave f32's integers: the dot stays
/// the exact chain, still the interpreter's.
#[test]
fn longer_i8_dots_stay_exact_chains() {
    let shape = [16, 1040, 8];
    let func = i8_dot(shape);
    let program = lower(
        &func,
        &LowerOptions::warps(1).with_tensor_cores(Target::Nvptx(Sm::Sm80).tensor_cores()),
    )
    .unwrap();
    assert!(!program
        .ops
        .iter()
        .any(|(_, op)| matches!(op.kind, ThreadOpKind::Mma { .. })));
    let mut want = args(shape);
    interp::run(&func, [1, 1, 1], &mut want).unwrap();
    let mut lockstep = args(shape);
    tile_thread::emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
    assert_eq!(out_bits(&lockstep), out_bits(&want));
}
