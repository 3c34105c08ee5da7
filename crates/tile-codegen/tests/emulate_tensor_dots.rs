//! Random `dot`s of precision `tensor` (tile-testgen's `dot_case`) on
//! sm_80's, gfx1100's, gfx1200's, gfx1201's, gfx950's, gfx942's and
//! gfx90a's tensor cores, and of precision
//! `tf32` (`tf32_dot_case`) on sm_80's, and FP8 ones (`fp8_dot_case`) on
//! sm_89's, gfx1200's and gfx950's and, cast to f16, on sm_80's, and block-scaled ones
//! (`scaled_dot_case`) on sm_80's, OCP MX ones of FP8, FP6 and FP4
//! (`mx_dot_case`) on sm_120a's block-scaled `mma.sync` and MXFP8 ones
//! (`mxfp8_dot_case`) on gfx950's scaled MFMA, through the
//! lockstep emulator and through the emulation target (the NVPTX module
//! with its `mma.sync` intrinsics, the AMDGPU ones with their WMMA or
//! MFMA): both bit for bit the product summed in the instruction's steps
//! of `K` (`products::stepped`, from plain row-major matrices) and within
//! the `tensor` bound of the interpreter's in-order chain.

mod emulated;

use tile_codegen::CodegenOptions;
use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg};
use tile_testgen::products::{
    dot_case, fp8_dot_case, loop_case, mx_dot_case, mxfp8_dot_case, scaled_dot_case, stepped,
    tf32_dot_case, within_tensor_bound, DotCase,
};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::ThreadOpKind;

/// The number of random dots.
const CASES: u64 = 24;

fn values(arg: &Arg) -> Vec<f32> {
    match arg {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_f64() as f32).collect(),
        Arg::Tensors(ts) => ts
            .iter()
            .flat_map(|t| values(&Arg::Tensor(t.clone())))
            .collect(),
        Arg::Scalar(s) => vec![s.to_f64() as f32],
    }
}

/// `got` is `want` bit for bit (any NaN equal to any NaN).
fn same(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()))
}

/// The instructions of a target the lowering may pick, in its order of
/// preference: `(M, N, K)` and the lanes that issue one (docs/lowering.md).
struct Instructions {
    shapes: &'static [(usize, usize, usize)],
    lanes: usize,
}

/// The instruction a dot of `dims` on `warps` warps runs on, restated from
/// the documented rule rather than taken from the lowering: the first
/// shape whose blocks tile `M × N × K` and can be split evenly among the
/// block's warps (MFMA: its 64-lane waves), the factors of two of the
/// block counts covering the warp count.
fn expected_shape(
    cores: &Instructions,
    (m, k, n): (usize, usize, usize),
    warps: u32,
) -> Option<(usize, usize, usize)> {
    let threads = 32 * warps as usize;
    if !threads.is_multiple_of(cores.lanes) {
        return None;
    }
    let units = threads / cores.lanes;
    cores.shapes.iter().copied().find(|&(bm, bn, bk)| {
        let tiles = m.is_multiple_of(bm) && n.is_multiple_of(bn) && k.is_multiple_of(bk);
        tiles && (m / bm).trailing_zeros() + (n / bn).trailing_zeros() >= units.trailing_zeros()
    })
}

/// `mma.sync.m16n8k16`.
const MMA_SYNC: Instructions = Instructions {
    shapes: &[(16, 8, 16)],
    lanes: 32,
};

#[test]
fn random_tensor_dots_on_mma_sync() {
    let least = CASES as usize * 2 / 3;
    random_tensor_dots(Target::Nvptx(Sm::Sm80), &MMA_SYNC, None, least);
}

/// `mma.sync.m16n8k8.tf32`: `f32` operands, each rounded to TF32 (a
/// program that did not round would be truncated by the instruction, and
/// differ from the steps of the rounded values).
const MMA_SYNC_TF32: Instructions = Instructions {
    shapes: &[(16, 8, 8)],
    lanes: 32,
};

/// (Smaller tiles than `dot_case`'s: more of them have fewer 16×8 blocks
/// than warps, and stay FMA chains: 13 of the 24 run on the instruction.)
#[test]
fn random_tf32_dots_on_mma_sync() {
    let least = CASES as usize / 2;
    random_dots(
        tf32_dot_case,
        Target::Nvptx(Sm::Sm80),
        &MMA_SYNC_TF32,
        None,
        least,
    );
}

/// `mma.sync.m16n8k32` on `e4m3` or `e5m2` (sm_89 and later), as inline
/// PTX that the emulation target replaces; a dot whose `K` it does not
/// divide is widened to f16's `m16n8k16`.
const MMA_SYNC_FP8: Instructions = Instructions {
    shapes: &[(16, 8, 32), (16, 8, 16)],
    lanes: 32,
};

#[test]
fn random_fp8_dots_on_mma_sync() {
    let least = CASES as usize / 3;
    random_dots(
        fp8_dot_case,
        Target::Nvptx(Sm::Sm89),
        &MMA_SYNC_FP8,
        None,
        least,
    );
}

/// RDNA 4's FP8 WMMA (`v_wmma_f32_16x16x16_{fp8_fp8,bf8_bf8}`, OCP
/// formats, 8 consecutive `k` a lane).
#[test]
fn random_fp8_dots_on_rdna4_wmma() {
    let least = CASES as usize / 4;
    random_dots(
        fp8_dot_case,
        Target::Amdgpu(Gfx::Gfx1200),
        &WMMA,
        None,
        least,
    );
}

/// CDNA 4's FP8 MFMA (`v_mfma_f32_{32x32x16,16x16x32}_{fp8_fp8,bf8_bf8}`,
/// OCP formats on gfx950; CDNA 3's FP8 forms, FNUZ, are not taken), both
/// of them; a dot whose `K` they do not divide is widened to f16's
/// CDNA 3 forms.
#[test]
fn random_fp8_dots_on_cdna4_mfma() {
    let target = Target::Amdgpu(Gfx::Gfx950);
    let ran = random_dots(fp8_dot_case, target, &MFMA_CDNA4, None, CASES as usize / 4);
    for shape in &MFMA_CDNA4.shapes[..2] {
        assert!(
            ran.contains(shape),
            "gfx950: no FP8 dot ran on {shape:?}: {ran:?}"
        );
    }
}

/// Without FP8 instructions (sm_80) the same dots run on f16's
/// `mma.sync.m16n8k16`, their operands cast exactly to f16: bit for bit the
/// product stepped by 16.
#[test]
fn random_fp8_dots_on_f16_mma_sync() {
    let least = CASES as usize / 3;
    random_dots(
        fp8_dot_case,
        Target::Nvptx(Sm::Sm80),
        &MMA_SYNC,
        None,
        least,
    );
}

/// Block-scaled dots (`scaled_dot_case`) on sm_80: each operand scaled and
/// rounded to bf16 or f16 (`expand-scaled-dots`), then on
/// `mma.sync.m16n8k16`: bit for bit the stepped product of the scaled
/// operands, written from the definition.
#[test]
fn random_scaled_dots_on_mma_sync() {
    let least = CASES as usize / 3;
    random_dots(
        scaled_dot_case,
        Target::Nvptx(Sm::Sm80),
        &MMA_SYNC,
        None,
        least,
    );
}

/// OCP MX dots of FP8, FP6 or FP4 (`mx_dot_case`) on sm_120a: on the
/// block-scaled `mma.sync.m16n8k32` with the scales (bit for bit the
/// product of the scaled operands stepped by 32; the emulation target's
/// instruction reads FP4 from bits 5..2 of each byte, as the hardware
/// does), or where the warps cannot share its blocks, expanded onto
/// bf16's `m16n8k16`.
#[test]
fn random_mx_dots_on_block_scaled_mma_sync() {
    let target = Target::Nvptx(Sm::Sm120a);
    let ran = random_dots(mx_dot_case, target, &MMA_SYNC_FP8, None, CASES as usize / 2);
    assert!(ran.contains(&(16, 8, 32)), "{ran:?}");
    for seed in 0..CASES {
        let case = mx_dot_case(seed);
        let lowering = LowerOptions::warps(case.warps).with_tensor_cores(target.tensor_cores());
        let program = lower(&case.func, &lowering).unwrap();
        for (_, op) in program.ops.iter() {
            if let ThreadOpKind::Mma { kind } = op.kind {
                assert_eq!(
                    kind.is_block_scaled(),
                    kind.shape() == (16, 8, 32),
                    "seed {seed}"
                );
            }
        }
    }
}

/// gfx1100's WMMA, whose blocks are 16 wide: the dots whose `N` is an odd
/// multiple of 8 stay FMA chains there.
const WMMA: Instructions = Instructions {
    shapes: &[(16, 16, 16)],
    lanes: 32,
};

#[test]
fn random_tensor_dots_on_wmma() {
    let least = CASES as usize / 3;
    random_tensor_dots(Target::Amdgpu(Gfx::Gfx1100), &WMMA, None, least);
}

/// RDNA 4's WMMA (gfx1200, gfx1201): RDNA 3's blocks, operands not held
/// twice.
#[test]
fn random_tensor_dots_on_rdna4_wmma() {
    let least = CASES as usize / 3;
    for gfx in [Gfx::Gfx1200, Gfx::Gfx1201] {
        random_tensor_dots(Target::Amdgpu(gfx), &WMMA, None, least);
    }
}

/// The MFMA of CDNA: 32×32×8 where the blocks and waves allow it, else
/// 16×16×16, each bit for bit the product stepped by its own `K`; one warp
/// (half a wave) and `N` an odd multiple of 8 stay FMA chains.
const MFMA: Instructions = Instructions {
    shapes: &[(32, 32, 8), (16, 16, 16)],
    lanes: 64,
};

#[test]
fn random_tensor_dots_on_mfma_gfx942() {
    random_tensor_dots_on_mfma(Gfx::Gfx942, None, CASES as usize / 4);
}

/// gfx90a's module has the same intrinsics (its code object other
/// instruction names): the first 6 cases that run on MFMA, to keep the
/// test short.
#[test]
fn random_tensor_dots_on_mfma_gfx90a() {
    random_tensor_dots_on_mfma(Gfx::Gfx90a, Some(6), 6);
}

/// CDNA 4's MFMA (gfx950): its forms of twice the `K` first, then CDNA 3's
/// for the dots whose `K` they do not divide.
const MFMA_CDNA4: Instructions = Instructions {
    shapes: &[(32, 32, 16), (16, 16, 32), (32, 32, 8), (16, 16, 16)],
    lanes: 64,
};

/// gfx950's scaled MFMA first (`v_mfma_scale_f32_{32x32x64,16x16x128}`),
/// then, for a `dot_scaled` expanded onto bf16, the forms above.
const MFMA_CDNA4_SCALED: Instructions = Instructions {
    shapes: &[
        (32, 32, 64),
        (16, 16, 128),
        (32, 32, 16),
        (16, 16, 32),
        (32, 32, 8),
        (16, 16, 16),
    ],
    lanes: 64,
};

/// MXFP8 dots (`mxfp8_dot_case`) on gfx950: on the scaled MFMA of either
/// block with the scales (bit for bit the product of the scaled operands
/// stepped by its `K`), or, where neither fits, expanded onto bf16's
/// forms.
#[test]
fn random_mxfp8_dots_on_scaled_mfma() {
    let target = Target::Amdgpu(Gfx::Gfx950);
    let ran = random_dots(
        mxfp8_dot_case,
        target,
        &MFMA_CDNA4_SCALED,
        None,
        CASES as usize / 3,
    );
    for shape in &MFMA_CDNA4_SCALED.shapes[..2] {
        assert!(
            ran.contains(shape),
            "gfx950: no MXFP8 dot ran on {shape:?}: {ran:?}"
        );
    }
}

#[test]
fn random_tensor_dots_on_mfma_gfx950() {
    let ran = random_tensor_dots(
        Target::Amdgpu(Gfx::Gfx950),
        &MFMA_CDNA4,
        None,
        CASES as usize / 4,
    );
    for shape in &MFMA_CDNA4.shapes[..2] {
        assert!(
            ran.contains(shape),
            "gfx950: no dot ran on {shape:?}: {ran:?}"
        );
    }
}

/// [`random_tensor_dots`] on `gfx`'s MFMA, which must have run dots on
/// both instructions.
fn random_tensor_dots_on_mfma(gfx: Gfx, only: Option<usize>, least: usize) {
    let ran = random_tensor_dots(Target::Amdgpu(gfx), &MFMA, only, least);
    for shape in MFMA.shapes {
        assert!(
            ran.contains(shape),
            "{gfx}: no dot ran on {shape:?}: {ran:?}"
        );
    }
}

/// Every [`dot_case`] on `target` (with `Some(n)`, only the first `n` the
/// tensor cores take), whose tensor cores are `cores`; at least `least` of
/// them must use them. The shapes that ran, one per dot on tensor cores.
fn random_tensor_dots(
    target: Target,
    cores: &Instructions,
    only: Option<usize>,
    least: usize,
) -> Vec<(usize, usize, usize)> {
    random_dots(dot_case, target, cores, only, least)
}

/// [`random_tensor_dots`] of the cases `cases` makes of each seed.
fn random_dots(
    cases: fn(u64) -> DotCase,
    target: Target,
    cores: &Instructions,
    only: Option<usize>,
    least: usize,
) -> Vec<(usize, usize, usize)> {
    let lowering_cores = target.tensor_cores();
    let mut ran = Vec::new();
    for seed in 0..CASES {
        let case = cases(seed);
        let shape = expected_shape(cores, case.dims, case.warps);
        if only.is_some_and(|n| shape.is_none() || ran.len() == n) {
            continue;
        }
        let what = format!("seed {seed}: {:?} on {} warps", case.dims, case.warps);
        let [a, b, c] = &case.values;
        let mut reference = case.args.clone();
        interp::run(&case.func, [1, 1, 1], &mut reference).unwrap();
        let lowering = LowerOptions::warps(case.warps).with_tensor_cores(lowering_cores);
        let program = lower(&case.func, &lowering).unwrap();
        let (m, k, n) = case.dims;
        let shapes: Vec<(usize, usize, usize)> = program
            .ops
            .iter()
            .filter_map(|(_, op)| match op.kind {
                ThreadOpKind::Mma { kind } => Some(kind.shape()),
                _ => None,
            })
            .collect();
        // Every block once per k-step, shared by the warps (waves).
        let expected = shape.map_or(0, |(bm, bn, bk)| {
            let units = 32 * case.warps as usize / cores.lanes;
            (m / bm) * (n / bn) * (k / bk) / units
        });
        assert_eq!(shapes.len(), expected, "{what}");
        assert!(
            shapes.iter().all(|s| Some(*s) == shape),
            "{what}: {shapes:?}"
        );
        ran.extend(shape.filter(|_| expected > 0));
        let mut lockstep = case.args.clone();
        tile_thread::emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
        let mut emulated = case.args.clone();
        emulated::run(&case.func, target, case.warps, [1, 1, 1], &mut emulated)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        for (path, args) in [("lockstep", &lockstep), ("emulation target", &emulated)] {
            let got = values(args.last().expect("the output"));
            if let Some((_, _, bk)) = shape {
                assert!(
                    same(&got, &stepped(a, b, c, case.dims, bk)),
                    "{what}: the {path} differs from the steps of {bk}"
                );
            }
            let want = values(reference.last().expect("the output"));
            within_tensor_bound(&got, &want, a, b, c, case.dims)
                .unwrap_or_else(|e| panic!("{what}, {path}: {e}"));
        }
    }
    assert!(
        ran.len() >= least,
        "only {} dots ran on the tensor cores of {target}",
        ran.len()
    );
    ran
}

/// The matmul sample on operands whose rows are padded to whole 16-byte
/// chunks: the NVPTX module copies them with `cp.async` (the edge chunks
/// partly, zero-filled), bit for bit the stepped product.
#[test]
fn padded_operands_are_copied_asynchronously() {
    use tile_ir::{samples, DType};
    use tile_testgen::inputs::{blocks, padded_rows, zeros};
    for dtype in [DType::F16, DType::BF16] {
        let func = samples::matmul(64, 32, 32, dtype).unwrap();
        let (m, k, n) = (100, 75, 45);
        let args = vec![
            padded_rows(31, m, k, 80, dtype),
            padded_rows(32, k, n, 48, dtype),
            zeros(&[m, n]),
        ];
        let grid = [blocks(m, 64), blocks(n, 32), 1];
        let mut emulated = args.clone();
        emulated::run(&func, Target::Nvptx(Sm::Sm80), 4, grid, &mut emulated)
            .unwrap_or_else(|e| panic!("{dtype}: {e}"));
        let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
        let got = values(&emulated[2]);
        assert!(same(&got, &stepped(&a, &b, &c, (m, k, n), 16)), "{dtype}");
    }
}

/// Random K-loop matmuls (`products::loop_case`: 1 to 4 stages, aligned
/// and unaligned rows, partial tiles) on sm_80 through the emulation
/// target: the stepped product bit for bit where the loop runs on the
/// tensor cores, the interpreter's chain where it does not; no copy is
/// touched while in flight.
#[test]
fn random_pipelined_matmuls_on_mma_sync() {
    let target = Target::Nvptx(Sm::Sm80);
    let mut pipelined = 0;
    for seed in 0..16 {
        let case = loop_case(seed);
        let what = format!(
            "seed {seed}: tiles {:?}, {:?} on {} warps, {} stages",
            case.tiles, case.dims, case.warps, case.stages
        );
        let lowering = LowerOptions::warps(case.warps)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(case.stages);
        let module =
            emulated::lowered_module(&case.func, target, &lowering, &CodegenOptions::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        let on_tensor_cores = module.llvm_ir_opt.contains("@llvm.nvvm.mma.");
        if case.stages > 1 && module.llvm_ir_opt.contains("cp.async.wait.group(i32 ") {
            let waits = format!("cp.async.wait.group(i32 {})", case.stages - 2);
            pipelined += usize::from(module.llvm_ir_opt.contains(&waits));
        }
        let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut args = case.args.clone();
        emulated::launch(&kernel, case.grid, case.warps, &mut args)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (m, k, n) = case.dims;
        let want = if on_tensor_cores {
            stepped(
                &case.values[0],
                &case.values[1],
                &vec![0.0; m * n],
                (m, k, n),
                16,
            )
        } else {
            let mut reference = case.args.clone();
            interp::run(&case.func, case.grid, &mut reference).unwrap();
            values(&reference[2])
        };
        assert!(same(&values(&args[2]), &want), "{what}");
    }
    assert!(pipelined >= 6, "{pipelined} of 16 loops pipelined");
}

/// A three-stage pipeline whose wait leaves one group too many in flight
/// reads a stage before its copies land: the emulation target stops it.
#[test]
fn a_pipeline_that_waits_too_little_fails() {
    use tile_ir::{samples, DType};
    use tile_testgen::inputs::{tensor_of, zeros};
    let target = Target::Nvptx(Sm::Sm80);
    let func = samples::matmul(32, 32, 16, DType::F16).unwrap();
    let lowering = LowerOptions::warps(4)
        .with_tensor_cores(target.tensor_cores())
        .with_stages(3);
    let mut module =
        emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default()).unwrap();
    let wait = "@llvm.nvvm.cp.async.wait.group(i32 1)";
    assert!(module.llvm_ir_opt.contains(wait), "{}", module.llvm_ir_opt);
    module.llvm_ir_opt = module
        .llvm_ir_opt
        .replace(wait, "@llvm.nvvm.cp.async.wait.group(i32 2)");
    let kernel = emulated::image(&module).unwrap();
    let (m, k, n) = (64, 80, 40);
    let mut args = vec![
        tensor_of(41, &[m, k], DType::F16),
        tensor_of(42, &[k, n], DType::F16),
        zeros(&[m, n]),
    ];
    let error = emulated::launch(&kernel, [2, 2, 1], 4, &mut args).unwrap_err();
    assert!(error.to_string().contains("in flight"), "{error}");
}

/// The matmul sample on every MFMA instruction of gfx90a, gfx942 and
/// gfx950, through the emulation target over a grid of partial tiles:
/// 64×64×32 on 8 warps (2×2 waves of 32×32×8, on gfx950 of 32×32×16),
/// 32×32×16 on 4 warps (2×1 waves of 16×16×16), and on gfx950 32×32×32 on
/// 4 warps (2×1 waves of 16×16×32) and 32×32×8 on 2 warps (one wave of
/// 32×32×8), bit for bit the product stepped by each instruction's `K` and
/// within the bound of the interpreter.
#[test]
fn matmul_on_every_mfma_instruction() {
    use tile_ir::{samples, DType};
    use tile_testgen::inputs::{blocks, tensor_of, zeros};
    let cdna3 = [((64, 64, 32), 8, 8), ((32, 32, 16), 4, 16)];
    let cdna4 = [
        ((64, 64, 32), 8, 16),
        ((32, 32, 32), 4, 32),
        ((32, 32, 8), 2, 8),
        ((32, 32, 16), 4, 16),
    ];
    for (gfx, configs) in [
        (Gfx::Gfx90a, &cdna3[..]),
        (Gfx::Gfx942, &cdna3[..]),
        (Gfx::Gfx950, &cdna4[..]),
    ] {
        for dtype in [DType::F16, DType::BF16] {
            for &((bm, bn, bk), warps, step) in configs {
                let what = format!("{dtype} {bm}x{bn}x{bk} on {gfx}");
                let func = samples::matmul(bm, bn, bk, dtype).unwrap();
                let (m, n, k) = (bm + 29, 2 * bn + 3, 2 * bk + 5);
                let args = vec![
                    tensor_of(51, &[m, k], dtype),
                    tensor_of(52, &[k, n], dtype),
                    zeros(&[m, n]),
                ];
                let grid = [blocks(m, bm), blocks(n, bn), 1];
                let mut emulated = args.clone();
                emulated::run(&func, Target::Amdgpu(gfx), warps, grid, &mut emulated)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut reference = args.clone();
                interp::run(&func, grid, &mut reference).unwrap();
                let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
                let got = values(&emulated[2]);
                assert!(same(&got, &stepped(&a, &b, &c, (m, k, n), step)), "{what}");
                within_tensor_bound(&got, &values(&reference[2]), &a, &b, &c, (m, k, n))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            }
        }
    }
}

/// The matmul sample on sm_90a's `wgmma` through the emulation target: the
/// NVPTX module's inline PTX, its descriptors computed from the shared
/// addresses the image really has (A's swizzle as wide as its `K` allows),
/// over a grid of partial tiles, with and without a software pipeline: bit
/// for bit the product stepped by 16.
#[test]
fn matmuls_on_wgmma() {
    use tile_ir::{samples, DType};
    use tile_testgen::inputs::{blocks, tensor_of, zeros};
    let target = Target::Nvptx(Sm::Sm90a);
    for (dtype, (bm, bn, bk), warps, stages) in [
        (DType::F16, (64, 64, 64), 4, 1),
        (DType::BF16, (128, 128, 64), 8, 1),
        (DType::F16, (128, 128, 64), 8, 3),
        (DType::BF16, (64, 128, 64), 4, 2),
        // A's rows of 64 and 32 bytes: the 64- and 32-byte swizzles.
        (DType::F16, (64, 64, 32), 4, 2),
        (DType::BF16, (128, 64, 16), 4, 1),
    ] {
        let what = format!("{dtype} {bm}x{bn}x{bk} on {warps} warps, {stages} stages");
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let lowering = LowerOptions::warps(warps)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(stages);
        let module = emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            module
                .llvm_ir_opt
                .contains("wgmma.mma_async.sync.aligned.m64n64k16"),
            "{what}"
        );
        let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (m, n, k) = (bm + 29, 2 * bn - 5, 3 * bk - 24);
        let args = vec![
            tensor_of(61, &[m, k], dtype),
            tensor_of(62, &[k, n], dtype),
            zeros(&[m, n]),
        ];
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let mut emulated = args.clone();
        emulated::launch(&kernel, grid, warps, &mut emulated)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
        let got = values(&emulated[2]);
        assert!(same(&got, &stepped(&a, &b, &c, (m, k, n), 16)), "{what}");
    }
}

/// The same module without its `fence.proxy.async` (the shared stores are
/// not made visible to `wgmma`'s asynchronous reads), and with the
/// `wgmma.fence` dropped instead: the emulation target stops each.
#[test]
fn wgmma_without_its_fences_fails() {
    use tile_ir::{samples, DType};
    use tile_testgen::inputs::{tensor_of, zeros};
    let target = Target::Nvptx(Sm::Sm90a);
    let func = samples::matmul(64, 64, 64, DType::F16).unwrap();
    let module = emulated::module(&func, target, 4, &CodegenOptions::default()).unwrap();
    for (fence, want) in [
        ("fence.proxy.async.shared::cta;", "no fence.proxy.async"),
        ("wgmma.fence.sync.aligned;", "no wgmma.fence"),
    ] {
        let call = format!("call void asm sideeffect \"{fence}\", \"~{{memory}}\"()");
        assert!(module.llvm_ir_opt.contains(&call), "{fence}");
        let mut broken = module.clone();
        broken.llvm_ir_opt = module
            .llvm_ir_opt
            .lines()
            .filter(|line| !line.contains(&call))
            .collect::<Vec<_>>()
            .join("\n");
        let kernel = emulated::image(&broken).unwrap();
        let mut args = vec![
            tensor_of(41, &[64, 64], DType::F16),
            tensor_of(42, &[64, 64], DType::F16),
            zeros(&[64, 64]),
        ];
        let error = emulated::launch(&kernel, [1, 1, 1], 4, &mut args).unwrap_err();
        assert!(error.to_string().contains(want), "{fence}: {error}");
    }
}

/// Pipelined `wgmma` loops whose operands the TMA copies, on sm_90a's
/// module through the emulation target: the kernel reads tensor maps
/// passed by value, one thread issues `cp.async.bulk.tensor` boxes onto the
/// stages' mbarriers and every thread waits for their phases; bit for bit
/// the product stepped by 16 and the lockstep emulator's result, on
/// problems of partial tiles whose rows the TMA can describe.
#[test]
fn tma_matmuls_on_wgmma() {
    use tile_ir::{samples, DType};
    use tile_testgen::inputs::{blocks, tensor_of, zeros};
    for (dtype, (bm, bn, bk), warps, stages) in [
        (DType::F16, (128, 128, 64), 8, 3),
        (DType::BF16, (64, 128, 128), 4, 2),
    ] {
        let what = format!("{dtype} {bm}x{bn}x{bk}, {stages} stages");
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let target = Target::Nvptx(tile_codegen::Sm::Sm90a);
        let lowering = LowerOptions::warps(warps)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(stages)
            .with_tma(true);
        let program = lower(&func, &lowering).unwrap();
        let module = emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (m, k, n) = (2 * bm + 24, 3 * bk - 8, bn + 40);
        let args = vec![
            tensor_of(81, &[m, k], dtype),
            tensor_of(82, &[k, n], dtype),
            zeros(&[m, n]),
        ];
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let mut emulated = args.clone();
        let maps = program.tma_maps();
        assert_eq!(maps, [(0, bm as u16), (1, bk as u16)], "{what}");
        emulated::launch_with_maps(&kernel, (grid, warps), &mut emulated, &|_, b| b, &maps)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut lockstep = args.clone();
        tile_thread::emulate::run(&program, grid, &mut lockstep).unwrap();
        let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
        let got = values(&emulated[2]);
        assert!(same(&got, &stepped(&a, &b, &c, (m, k, n), 16)), "{what}");
        assert!(same(&got, &values(&lockstep[2])), "{what}");
    }
}
