//! NaN payloads, signed zeros and infinities through reductions, on every
//! GPU stage: the lockstep emulator and the LLVM IR an sm_80, gfx942 and
//! gfx1100 receive (on the emulation target) must store the interpreter's
//! bits. The GPU code leaves a NaN as the hardware makes it wherever no use
//! sees its bits (`gpu/nan.rs`: through arithmetic, selects and shuffles)
//! and canonicalizes it where a use does; f32 `max`/`min` are LLVM's
//! `llvm.maximum`/`llvm.minimum` on sm_80 and AMD (`max.NaN.f32`,
//! `v_max_f32` and a NaN select), whose NaN is not the interpreter's.

mod emulated;

use emulated::TARGETS;

use tile_codegen::{CodegenOptions, Gfx, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{samples, verify, DType, Function};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Each row's maximum, minimum and sum, and the maximum of each row's
/// squares (whose NaN the squaring makes, then the shuffles move).
const ROWS: &str = r#"kernel @rows(%x: tensor<f32, 2>, %hi: tensor<f32, 2>, %lo: tensor<f32, 2>, %sum: tensor<f32, 2>, %sq: tensor<f32, 2>) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [4, 64] : view<f32, [4, 64]>
  %t = load %vx[%pid, %zero] : tile<4x64xf32>
  %m = reduce max %t axis 1 keepdim : tile<4x1xf32>
  %n = reduce min %t axis 1 keepdim : tile<4x1xf32>
  %s = reduce sum %t axis 1 keepdim : tile<4x1xf32>
  %t2 = mul %t, %t : tile<4x64xf32>
  %q = reduce max %t2 axis 1 keepdim : tile<4x1xf32>
  %vhi = partition_view %hi [4, 1] : view<f32, [4, 1]>
  store %m, %vhi[%pid, %zero]
  %vlo = partition_view %lo [4, 1] : view<f32, [4, 1]>
  store %n, %vlo[%pid, %zero]
  %vs = partition_view %sum [4, 1] : view<f32, [4, 1]>
  store %s, %vs[%pid, %zero]
  %vq = partition_view %sq [4, 1] : view<f32, [4, 1]>
  store %q, %vq[%pid, %zero]
}"#;

/// Eight rows of 64: plain values, then in row 1 a quiet NaN with a
/// payload, in row 2 a negative signalling-pattern NaN, in row 3 both
/// zeros only, in row 4 ±∞ (whose sum is a NaN), in row 5 -0 beside
/// negatives, in row 6 a NaN in the last column, in row 7 +∞ and a NaN.
fn input() -> Vec<f32> {
    let mut x: Vec<f32> = (0..8 * 64)
        .map(|i| ((i * 37 + 11) % 97) as f32 * 0.25 - 9.0)
        .collect();
    let nan = |bits: u32| f32::from_bits(bits);
    x[64 + 17] = nan(0x7fc0_1234);
    x[2 * 64 + 40] = nan(0xff80_0001);
    for (i, v) in x[3 * 64..4 * 64].iter_mut().enumerate() {
        *v = if i % 3 == 0 { -0.0 } else { 0.0 };
    }
    x[4 * 64 + 5] = f32::INFINITY;
    x[4 * 64 + 50] = f32::NEG_INFINITY;
    for (i, v) in x[5 * 64..6 * 64].iter_mut().enumerate() {
        *v = if i == 30 { -0.0 } else { -1.0 - i as f32 };
    }
    x[6 * 64 + 63] = nan(0x7f80_4321);
    x[7 * 64] = f32::INFINITY;
    x[7 * 64 + 9] = nan(0xffc0_0000);
    x
}

/// The first output element whose bits differ, as (output, index, got,
/// want), if any.
fn first_difference(got: &[Vec<u32>], want: &[Vec<u32>]) -> Option<(usize, usize, u32, u32)> {
    got.iter().zip(want).enumerate().find_map(|(o, (g, w))| {
        g.iter()
            .zip(w)
            .position(|(a, b)| a != b)
            .map(|i| (o, i, g[i], w[i]))
    })
}

fn run_all(func: &Function, args: impl Fn() -> Vec<Arg>, grid: [u32; 3]) {
    verify::verify(func).unwrap();
    let bits =
        |args: &[Arg]| -> Vec<Vec<u32>> { args[1..].iter().map(emulated::f32_bits).collect() };
    let mut want = args();
    interp::run(func, grid, &mut want).unwrap();
    let want = bits(&want);
    for warps in [1, 4] {
        let program = lower(func, &LowerOptions::warps(warps)).unwrap();
        let mut got = args();
        emulate::run(&program, grid, &mut got).unwrap();
        let diff = first_difference(&bits(&got), &want);
        assert_eq!(diff, None, "{}: lockstep, {warps} warps", func.name);
        for target in TARGETS {
            let mut got = args();
            emulated::run(func, target, warps, grid, &mut got)
                .unwrap_or_else(|e| panic!("{}: {target}, {warps} warps: {e}", func.name));
            let diff = first_difference(&bits(&got), &want);
            assert_eq!(diff, None, "{}: {target}, {warps} warps", func.name);
        }
    }
}

#[test]
fn row_reductions_store_the_interpreters_nans_and_zeros() {
    let func = parse_function(ROWS).unwrap();
    let args = || {
        let mut a = vec![Arg::Tensor(
            HostTensor::from_vec(&[8, 64], input()).unwrap(),
        )];
        a.extend((0..4).map(|_| Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 1]))));
        a
    };
    // The interpreter's own answers for the rows that test something.
    let mut want = args();
    interp::run(&func, [2, 1, 1], &mut want).unwrap();
    let col = |i: usize| match &want[i] {
        Arg::Tensor(t) => t.to_vec::<f32>().unwrap(),
        _ => unreachable!(),
    };
    let (hi, lo, sum) = (col(1), col(2), col(3));
    assert_eq!(hi[1].to_bits(), 0x7fc0_0000, "a NaN's maximum is canonical");
    assert_eq!(lo[3].to_bits(), (-0.0f32).to_bits(), "-0 is below +0");
    assert_eq!(hi[3].to_bits(), 0.0f32.to_bits(), "+0 is above -0");
    assert_eq!(hi[5].to_bits(), (-0.0f32).to_bits());
    assert_eq!(sum[4].to_bits(), 0x7fc0_0000, "∞ - ∞");
    run_all(&func, args, [2, 1, 1]);
}

/// The same reductions' AMD code: each f32 maximum and minimum is the
/// hardware's `v_max_f32`/`v_min_f32` (CDNA 4 and RDNA 4: `v_maximum3_f32`,
/// `v_maximum_f32`) beside an ordered compare for the NaN, not the
/// emitter's compares of signs and values, which LLVM leaves as eight
/// instructions (`v_cmp_nlt_f32`, `v_cmp_neq_f32` and a sign test).
#[test]
fn amd_maxima_and_minima_are_the_hardwares() {
    let func = parse_function(ROWS).unwrap();
    for gfx in [Gfx::Gfx942, Gfx::Gfx950, Gfx::Gfx1100, Gfx::Gfx1201] {
        let target = Target::Amdgpu(gfx);
        let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
        let program = lower(&func, &options).unwrap();
        let amd = tile_codegen::gpu::emit(&program, target, &CodegenOptions::default())
            .unwrap()
            .assembly;
        let (max, min) = if matches!(gfx, Gfx::Gfx942 | Gfx::Gfx1100) {
            ("v_max_f32", "v_min_f32")
        } else {
            ("v_maximum", "v_minimum")
        };
        assert!(amd.contains(max) && amd.contains(min), "{gfx}:\n{amd}");
        for expansion in ["v_cmp_nlt_f32", "v_cmp_neq_f32", "v_cmp_ngt_f32"] {
            assert!(!amd.contains(expansion), "{gfx}: {expansion} in\n{amd}");
        }
    }
}

#[test]
fn softmax_of_rows_with_nans_stores_the_interpreters_bits() {
    let func = samples::softmax(4, 64).unwrap();
    let args = || {
        vec![
            Arg::Tensor(HostTensor::from_vec(&[8, 64], input()).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 64])),
        ]
    };
    run_all(&func, args, [2, 1, 1]);
}

/// The square roots of a tile holding negatives, stored as they are and
/// padded by a column before and a row after, in f32 and f64: every NaN
/// stored must be the interpreter's canonical one. LLVM takes a square
/// root's NaN for any NaN and removed the canonicalizing select after it
/// (x86's `sqrtsd` of a negative, which the emulation target runs, then
/// stored the negative NaN; `sqrt.rn.f64` its own). Found by generated
/// program 37 on gfx942.
#[test]
fn square_roots_of_negatives_store_the_canonical_nan() {
    for dtype in ["f32", "f64"] {
        for (body, out) in [
            ("%p = sqrt %t : tile<6x8xDT>", "6, 8"),
            (
                "%r = sqrt %t : tile<6x8xDT>\n  %p = pad %r low [0, 1] high [1, 0] value -1.0 : tile<7x9xDT>",
                "7, 9",
            ),
        ] {
            let body = body.replace("DT", dtype);
            let func = parse_function(&format!(
                r#"kernel @roots(%x: tensor<{dtype}, 2>, %y: tensor<{dtype}, 2>) {{
  %zero = constant 0 : i32
  %vx = partition_view %x [6, 8] : view<{dtype}, [6, 8]>
  %t = load %vx[%zero, %zero] : tile<6x8x{dtype}>
  {body}
  %vy = partition_view %y [{out}] : view<{dtype}, [{out}]>
  store %p, %vy[%zero, %zero]
}}"#
            ))
            .unwrap();
            let dt = if dtype == "f32" { DType::F32 } else { DType::F64 };
            let shape: Vec<usize> = out.split(", ").map(|d| d.parse().unwrap()).collect();
            let args = || {
                let x: Vec<f64> = (0..48).map(|i| (i % 5) as f64 - 2.0).collect();
                let x: Vec<tile_ir::Scalar> = x
                    .into_iter()
                    .map(|v| tile_ir::eval::cast(tile_ir::Scalar::F64(v), dt))
                    .collect();
                vec![
                    Arg::Tensor(HostTensor::from_scalars(dt, &[6, 8], &x).unwrap()),
                    Arg::Tensor(HostTensor::zeros(dt, &shape)),
                ]
            };
            let bits = |args: &[Arg]| match &args[1] {
                Arg::Tensor(t) => t.data().to_vec(),
                _ => unreachable!(),
            };
            let mut want = args();
            interp::run(&func, [1, 1, 1], &mut want).unwrap();
            let want = bits(&want);
            for warps in [1, 2] {
                for target in TARGETS {
                    let mut got = args();
                    emulated::run(&func, target, warps, [1, 1, 1], &mut got)
                        .unwrap_or_else(|e| panic!("{target}, {warps} warps: {e}"));
                    assert!(bits(&got) == want, "{dtype} {out}: {target}, {warps} warps");
                }
            }
        }
    }
}

/// Sums carried through a loop over four column tiles, from inputs with
/// NaN payloads and infinities of both signs: stored as they are (each
/// stored sum must be the canonical NaN where it is one), squared, and
/// rounded to f16 and back. The sums inside the loop keep the hardware's
/// NaN (`gpu/nan.rs`: no use observes them but the stores after the loop).
const CARRIED: &str = r#"kernel @carried(%x: tensor<f32, 2>, %sum: tensor<f32, 2>, %sq: tensor<f32, 2>, %half: tensor<f32, 2>) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %four = constant 4 : i32
  %vx = partition_view %x [4, 64] : view<f32, [4, 64]>
  %init = full 0.0 : tile<4x64xf32>
  %s = for %k = %zero to %four step %one iter(%acc = %init) : tile<4x64xf32> {
    %t = load %vx[%pid, %k] : tile<4x64xf32>
    %n = add %acc, %t : tile<4x64xf32>
    yield %n
  }
  %vs = partition_view %sum [4, 64] : view<f32, [4, 64]>
  store %s, %vs[%pid, %zero]
  %q = mul %s, %s : tile<4x64xf32>
  %vq = partition_view %sq [4, 64] : view<f32, [4, 64]>
  store %q, %vq[%pid, %zero]
  %h = cast %s to f16 : tile<4x64xf16>
  %w = cast %h to f32 : tile<4x64xf32>
  %vh = partition_view %half [4, 64] : view<f32, [4, 64]>
  store %w, %vh[%pid, %zero]
}"#;

#[test]
fn sums_carried_through_a_loop_store_the_interpreters_nans() {
    let func = parse_function(CARRIED).unwrap();
    let x: Vec<f32> = (0..8 * 256)
        .map(|i| match i % 97 {
            5 => f32::from_bits(0x7fc0_1234),
            17 => f32::from_bits(0xff80_0001),
            31 => f32::INFINITY,
            44 => f32::NEG_INFINITY,
            _ => ((i * 37 + 11) % 89) as f32 * 0.5 - 20.0,
        })
        .collect();
    let args = || {
        let mut a = vec![Arg::Tensor(
            HostTensor::from_vec(&[8, 256], x.clone()).unwrap(),
        )];
        a.extend((0..3).map(|_| Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 64]))));
        a
    };
    let mut want = args();
    interp::run(&func, [2, 1, 1], &mut want).unwrap();
    let sums = emulated::f32_bits(&want[1]);
    assert!(sums.contains(&0x7fc0_0000), "some sums are NaN");
    run_all(&func, args, [2, 1, 1]);
}

/// A choice between two computed values (a square root, whose NaN x86 and
/// PTX make negative, and `x − x`, a NaN from ±∞ or a NaN with a payload)
/// canonicalizes once, after the choice (`gpu/nan.rs`,
/// `canonicalizing_selects`); a choice between a loaded value and a
/// computed one keeps the loaded NaN's payload. Both stored, from rows of
/// NaN payloads, infinities and zeros: the interpreter's bits on every
/// stage.
const CHOICES: &str = r#"kernel @choices(%x: tensor<f32, 2>, %computed: tensor<f32, 2>, %loaded: tensor<f32, 2>) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [4, 64] : view<f32, [4, 64]>
  %t = load %vx[%pid, %zero] : tile<4x64xf32>
  %z = full 0.0 : tile<4x64xf32>
  %neg = cmp lt %t, %z : tile<4x64xbool>
  %root = sqrt %t : tile<4x64xf32>
  %diff = sub %t, %t : tile<4x64xf32>
  %a = select %neg, %root, %diff : tile<4x64xf32>
  %b = select %neg, %t, %root : tile<4x64xf32>
  %vc = partition_view %computed [4, 64] : view<f32, [4, 64]>
  store %a, %vc[%pid, %zero]
  %vl = partition_view %loaded [4, 64] : view<f32, [4, 64]>
  store %b, %vl[%pid, %zero]
}"#;

#[test]
fn a_choice_of_computed_values_stores_the_interpreters_nans() {
    let func = parse_function(CHOICES).unwrap();
    let args = || {
        vec![
            Arg::Tensor(HostTensor::from_vec(&[8, 64], input()).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 64])),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 64])),
        ]
    };
    run_all(&func, args, [2, 1, 1]);
}
