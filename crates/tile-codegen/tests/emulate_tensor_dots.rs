//! Random `dot`s of precision `tensor` (tile-testgen's `dot_case`) on
//! sm_80's and gfx1100's tensor cores, through the lockstep emulator and
//! through the emulation target (the NVPTX module with its `mma.sync`
//! intrinsics, the AMDGPU one with its WMMA): both
//! bit for bit the product summed in the instruction's steps
//! (`products::stepped`, from plain row-major matrices) and within the
//! `tensor` bound of the interpreter's in-order chain.

mod emulated;

use tile_codegen::CodegenOptions;
use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg};
use tile_testgen::products::{dot_case, loop_case, stepped, within_tensor_bound};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::ThreadOpKind;

/// The number of random dots.
const CASES: u64 = 24;

fn values(arg: &Arg) -> Vec<f32> {
    match arg {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_f64() as f32).collect(),
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

#[test]
fn random_tensor_dots_on_mma_sync() {
    random_tensor_dots(Target::Nvptx(Sm::Sm80), 8, CASES as usize * 2 / 3);
}

/// The same on gfx1100's WMMA, whose blocks are 16 wide: the dots whose
/// `N` is an odd multiple of 8 stay FMA chains there.
#[test]
fn random_tensor_dots_on_wmma() {
    random_tensor_dots(Target::Amdgpu(Gfx::Gfx1100), 16, CASES as usize / 3);
}

/// Every [`dot_case`] on `target`, whose tensor cores take blocks
/// `block_n` wide; at least `least` of them must use them.
fn random_tensor_dots(target: Target, block_n: usize, least: usize) {
    let cores = target.tensor_cores();
    let mut on_tensor_cores = 0;
    for seed in 0..CASES {
        let case = dot_case(seed);
        let what = format!("seed {seed}: {:?} on {} warps", case.dims, case.warps);
        let [a, b, c] = &case.values;
        let want = stepped(a, b, c, case.dims, 16);
        let mut reference = case.args.clone();
        interp::run(&case.func, [1, 1, 1], &mut reference).unwrap();
        let lowering = LowerOptions::warps(case.warps).with_tensor_cores(cores);
        let program = lower(&case.func, &lowering).unwrap();
        let (m, k, n) = case.dims;
        let blocks = (m / 16) * (n / block_n);
        let mmas = program
            .ops
            .iter()
            .filter(|(_, op)| matches!(op.kind, ThreadOpKind::Mma { .. }))
            .count();
        // Every block once per k-step, shared by the warps when they can
        // split the blocks evenly: the factors of two of the block counts
        // must cover the warp count.
        let twos = (m / 16).trailing_zeros() + (n / block_n).trailing_zeros();
        let expected = if n % block_n == 0 && twos >= case.warps.trailing_zeros() {
            blocks * (k / 16) / case.warps as usize
        } else {
            0
        };
        assert_eq!(mmas, expected, "{what}");
        on_tensor_cores += usize::from(mmas > 0);
        let mut lockstep = case.args.clone();
        tile_thread::emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
        let mut emulated = case.args.clone();
        emulated::run(&case.func, target, case.warps, [1, 1, 1], &mut emulated)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        for (path, args) in [("lockstep", &lockstep), ("emulation target", &emulated)] {
            let got = values(&args[3]);
            if mmas > 0 {
                assert!(
                    same(&got, &want),
                    "{what}: the {path} differs from the steps"
                );
            }
            within_tensor_bound(&got, &values(&reference[3]), a, b, c, case.dims)
                .unwrap_or_else(|e| panic!("{what}, {path}: {e}"));
        }
    }
    assert!(
        on_tensor_cores >= least,
        "only {on_tensor_cores} of {CASES} dots ran on the tensor cores of {target}"
    );
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
