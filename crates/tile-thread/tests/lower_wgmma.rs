//! `dot`s of precision `tensor` on Hopper's `wgmma.m64n64k16` (sm_90a):
//! the operands staged in the canonical swizzled layouts, one
//! instruction per warpgroup, 64×64 block and `k`-step, and the lockstep
//! emulator reading them through `tile_hw::wgmma`'s descriptors: bit for
//! bit the product stepped by 16 and within the `tensor` bound of the
//! interpreter, with and without a software pipeline.

mod tensor_check;

use tile_ir::{samples, DType};
use tile_testgen::inputs::{tensor_of, zeros};
use tile_thread::emulate::{self, LockstepFault};
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::{Program, ThreadOpKind};

fn count(program: &Program, want: fn(&ThreadOpKind) -> bool) -> usize {
    program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
}

/// The matmul sample with `tiles` on `warps` warps and `stages` stages:
/// `wgmmas` instructions per warpgroup and K tile, checked as every
/// tensor-core dot is.
fn matmul(dtype: DType, tiles: (usize, usize, usize), warps: u32, stages: u32, wgmmas: usize) {
    let (bm, bn, bk) = tiles;
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let options = LowerOptions::warps(warps)
        .with_tensor_cores(TensorCores::Wgmma)
        .with_stages(stages);
    let program = lower(&func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let what = format!("{dtype} {bm}x{bn}x{bk} on {warps} warps, {stages} stages");
    assert_eq!(
        count(&program, |k| matches!(k, ThreadOpKind::Wgmma { .. })),
        wgmmas,
        "{what}"
    );
    assert_eq!(
        count(&program, |k| matches!(k, ThreadOpKind::Mma { .. })),
        0,
        "{what}"
    );
    let text = program.to_string();
    assert_eq!(tile_thread::parse_program(&text).unwrap().to_string(), text);
    tensor_check::check(&func, &program, tiles, dtype, [51, 52], 16, &what);
}

#[test]
fn matmuls_run_on_wgmma() {
    for dtype in [DType::F16, DType::BF16] {
        // One warpgroup, one 64×64 block, four k-steps.
        matmul(dtype, (64, 64, 64), 4, 1, 4);
        // Two warpgroups down a 128×128 tile: each two blocks across.
        matmul(dtype, (128, 128, 64), 8, 1, 8);
        // One warpgroup repeating its block down, K in two 64-blocks.
        matmul(dtype, (128, 64, 128), 4, 1, 16);
    }
}

#[test]
fn pipelined_matmuls_run_on_wgmma() {
    for stages in [2, 3] {
        matmul(DType::F16, (128, 128, 64), 8, stages, 8);
        matmul(DType::BF16, (64, 128, 128), 4, stages, 16);
    }
}

/// A `K` of 32 or 16 stages A in one block of rows of 64 or 32 bytes under
/// the 64- or 32-byte swizzle (`.sw64`, `.sw32`): still `wgmma`, bit for bit
/// the stepped product, pipelined or not; the TMA, whose boxes are 128-byte
/// rows, leaves such a loop to `cp.async`.
#[test]
fn narrow_k_tiles_run_on_wgmma_with_narrower_swizzles() {
    for dtype in [DType::F16, DType::BF16] {
        matmul(dtype, (64, 64, 32), 4, 1, 2);
        matmul(dtype, (64, 64, 16), 4, 1, 1);
        matmul(dtype, (128, 128, 32), 8, 3, 4);
        matmul(dtype, (128, 64, 16), 4, 2, 2);
    }
    for (bk, suffix) in [(32, ".sw64 @s"), (16, ".sw32 @s")] {
        let (func, program) = tma_matmul(DType::F16, (64, 64, bk), 4, 2);
        let text = program.to_string();
        assert!(
            text.contains(&format!("wgmma.m64n64k16.f16{suffix}")),
            "{text}"
        );
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::TmaLoad { .. })),
            0
        );
        assert!(count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. })) > 0);
        tensor_check::check(
            &func,
            &program,
            (64, 64, bk),
            DType::F16,
            [53, 54],
            16,
            "tma",
        );
    }
}

/// Tiles `wgmma` does not fit (`K` of 48, `N` of 32) take `mma.sync`.
#[test]
fn other_tiles_take_mma_sync() {
    for tiles in [(64, 64, 48), (64, 32, 64)] {
        let func = samples::matmul(tiles.0, tiles.1, tiles.2, DType::F16).unwrap();
        let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::Wgmma);
        let program = lower(&func, &options).unwrap();
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::Wgmma { .. })),
            0
        );
        assert!(count(&program, |k| matches!(k, ThreadOpKind::Mma { .. })) > 0);
    }
}

/// Without its `fence.proxy.async`, a `wgmma` reads operands whose writes
/// the asynchronous proxy need not see: the emulator says so.
#[test]
fn a_wgmma_without_the_proxy_fence_is_caught() {
    let func = samples::matmul(64, 64, 64, DType::F16).unwrap();
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::Wgmma);
    let mut program = lower(&func, &options).unwrap();
    let fences: Vec<_> = program
        .ops
        .iter()
        .filter(|(_, op)| op.kind == ThreadOpKind::FenceProxyAsync)
        .map(|(id, _)| id)
        .collect();
    assert_eq!(fences.len(), 1);
    // A fence that orders nothing: a second wgmma.fence in its place.
    program.ops[fences[0]].kind = ThreadOpKind::WgmmaFence;
    let (m, k, n) = (64, 64, 64);
    let mut args = vec![
        tensor_of(61, &[m, k], DType::F16),
        tensor_of(62, &[k, n], DType::F16),
        zeros(&[m, n]),
    ];
    let error = emulate::run(&program, [1, 1, 1], &mut args).unwrap_err();
    assert!(
        matches!(*error.fault, LockstepFault::UnfencedAsyncRead { .. }),
        "{error}"
    );
}

/// The matmul sample on `warps` warps, `stages` stages, its pipelined
/// operands copied by the TMA.
fn tma_matmul(
    dtype: DType,
    (bm, bn, bk): (usize, usize, usize),
    warps: u32,
    stages: u32,
) -> (tile_ir::Function, Program) {
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let options = LowerOptions::warps(warps)
        .with_tensor_cores(TensorCores::Wgmma)
        .with_stages(stages)
        .with_tma(true);
    let program = lower(&func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    (func, program)
}

/// The matmul's operands `[m, k]`, `[k, n]` and a zero `[m, n]`.
fn operands(dtype: DType, (m, k, n): (usize, usize, usize)) -> Vec<tile_ir::interp::Arg> {
    vec![
        tensor_of(71, &[m, k], dtype),
        tensor_of(72, &[k, n], dtype),
        zeros(&[m, n]),
    ]
}

/// Pipelined `wgmma` operands copied by the TMA: one thread issues a box
/// of 64 columns per 128-byte block of each stage, and every thread waits
/// on the stage's mbarrier; no `cp.async` is left. On problems of partial
/// tiles whose rows the TMA can describe (16-byte multiples), bit for bit
/// the product stepped by 16 and within the bound of the interpreter's; the
/// program prints and parses back.
#[test]
fn pipelined_wgmma_operands_come_by_the_tma() {
    use tile_testgen::products::{stepped, within_tensor_bound};
    for (dtype, tiles, warps, stages, boxes) in [
        (DType::F16, (128, 128, 64), 8, 3, 3),
        (DType::BF16, (64, 128, 128), 4, 2, 4),
    ] {
        let (func, program) = tma_matmul(dtype, tiles, warps, stages);
        let what = format!("{dtype} {tiles:?}, {stages} stages");
        let loads = count(&program, |k| matches!(k, ThreadOpKind::TmaLoad { .. }));
        // Each issue (the prologue's `stages − 1` and the loop's) copies
        // `boxes` boxes: A's `bk / 64` and B's `bn / 64`.
        assert_eq!(loads, stages as usize * boxes, "{what}");
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. })),
            0
        );
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::MbarrierWait { .. })),
            1
        );
        let text = program.to_string();
        assert!(text.contains("tma.load @s"), "{what}");
        assert_eq!(tile_thread::parse_program(&text).unwrap().to_string(), text);
        let (bm, bn, bk) = tiles;
        let (m, k, n) = (2 * bm + 24, 3 * bk - 8, bn + 40);
        let args = operands(dtype, (m, k, n));
        let grid = [m.div_ceil(bm) as u32, n.div_ceil(bn) as u32, 1];
        let mut emulated = args.clone();
        emulate::run(&program, grid, &mut emulated).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut reference = args.clone();
        tile_ir::interp::run(&func, grid, &mut reference).unwrap();
        let (a, b, c) = (
            tensor_check::values(&args[0]),
            tensor_check::values(&args[1]),
            tensor_check::values(&args[2]),
        );
        let got = tensor_check::values(&emulated[2]);
        assert_eq!(got, stepped(&a, &b, &c, (m, k, n), 16), "{what}");
        within_tensor_bound(
            &got,
            &tensor_check::values(&reference[2]),
            &a,
            &b,
            &c,
            (m, k, n),
        )
        .unwrap();
    }
}

/// A tensor no tensor map can describe (rows of 370 bytes): the emulator
/// refuses it as the runtime would refuse to run the image with it.
#[test]
fn the_tma_needs_rows_of_16_byte_multiples() {
    let (_, program) = tma_matmul(DType::F16, (64, 64, 64), 4, 2);
    let mut args = operands(DType::F16, (64, 185, 64));
    let error = emulate::run(&program, [1, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        error.fault.to_string(),
        "no tensor map for `a`: the tensor's row stride is 370 bytes; a tensor map needs a positive multiple of 16 below 2^40"
    );
}

/// Without its mbarrier wait, or waiting for the other parity (a phase
/// already over), a stage is read while its boxes are in flight; with fewer
/// bytes expected than copied, the wait never returns (a GPU would hang):
/// the emulator says so.
#[test]
fn tma_copies_are_read_only_after_their_phase() {
    let (_, program) = tma_matmul(DType::F16, (64, 64, 64), 4, 2);
    let find = |want: fn(&ThreadOpKind) -> bool| {
        program
            .ops
            .iter()
            .find(|(_, op)| want(&op.kind))
            .map(|(id, _)| id)
            .unwrap()
    };
    let wait = find(|k| matches!(k, ThreadOpKind::MbarrierWait { .. }));
    let expect = find(|k| matches!(k, ThreadOpKind::MbarrierExpectTx { .. }));
    let one = program.ops[find(|k| *k == ThreadOpKind::Const(tile_ir::Scalar::I32(1)))].results[0];
    let run = |program: &Program| {
        let mut args = operands(DType::F16, (64, 128, 64));
        *emulate::run(program, [1, 1, 1], &mut args)
            .unwrap_err()
            .fault
    };
    let mut no_wait = program.clone();
    no_wait.ops[wait].kind = ThreadOpKind::FenceProxyAsync;
    no_wait.ops[wait].operands.clear();
    assert!(matches!(run(&no_wait), LockstepFault::CopyInFlight { .. }));
    let mut other_parity = program.clone();
    other_parity.ops[wait].operands[1] = one;
    assert!(matches!(
        run(&other_parity),
        LockstepFault::CopyInFlight { .. }
    ));
    let mut too_few = program.clone();
    too_few.ops[expect].operands[1] = one;
    match run(&too_few) {
        LockstepFault::Mbarrier(why) => assert_eq!(
            why,
            "the wait on @s2[0] for phase parity 0 never returns: 0 arrivals missing, 1 bytes expected and 16384 copied"
        ),
        other => panic!("{other}"),
    }
}

/// An mbarrier initialized again while it is valid (undefined in the PTX
/// ISA, which invalidates it first) is an error of the emulator.
#[test]
fn an_mbarrier_is_initialized_once() {
    let (_, mut program) = tma_matmul(DType::F16, (64, 64, 64), 4, 2);
    let (position, init) = program
        .body
        .ops
        .iter()
        .enumerate()
        .find(|(_, &id)| matches!(program.ops[id].kind, ThreadOpKind::MbarrierInit { .. }))
        .map(|(position, &id)| (position, id))
        .expect("the pipeline initializes its mbarriers");
    let (kind, inputs) = (
        program.ops[init].kind.clone(),
        program.ops[init].operands.clone(),
    );
    let again = program.create_op(kind, inputs, &[], Vec::new());
    program.body.ops.insert(position + 1, again);
    let mut args = operands(DType::F16, (64, 128, 64));
    match *emulate::run(&program, [1, 1, 1], &mut args).unwrap_err().fault {
        LockstepFault::Mbarrier(why) => assert_eq!(
            why,
            "@s2[0] is initialized again while valid (the PTX ISA makes that undefined: an mbarrier is invalidated first)"
        ),
        other => panic!("{other}"),
    }
}

/// An mbarrier given a negative arrival count, or an `expect_tx` of a
/// negative byte count, is a malformed program, not a phase that wraps.
#[test]
fn negative_mbarrier_counts_are_malformed() {
    let (_, program) = tma_matmul(DType::F16, (64, 64, 64), 4, 2);
    let find = |want: fn(&ThreadOpKind) -> bool| {
        program
            .ops
            .iter()
            .find(|(_, op)| want(&op.kind))
            .map(|(id, _)| id)
            .unwrap()
    };
    let init = find(|k| matches!(k, ThreadOpKind::MbarrierInit { .. }));
    let expect = find(|k| matches!(k, ThreadOpKind::MbarrierExpectTx { .. }));
    for (op, what) in [
        (init, "@s2[0] is given -1 arrivals"),
        (expect, "@s2[0] expects -1 bytes"),
    ] {
        let mut bad = program.clone();
        let minus_one = bad.create_op(
            ThreadOpKind::Const(tile_ir::Scalar::I32(-1)),
            vec![],
            &[DType::I32],
            Vec::new(),
        );
        bad.body.ops.insert(0, minus_one);
        bad.ops[op].operands[1] = bad.ops[minus_one].results[0];
        let mut args = operands(DType::F16, (64, 128, 64));
        match *emulate::run(&bad, [1, 1, 1], &mut args).unwrap_err().fault {
            LockstepFault::Malformed(why) => assert_eq!(why, what),
            other => panic!("{other}"),
        }
    }
}
