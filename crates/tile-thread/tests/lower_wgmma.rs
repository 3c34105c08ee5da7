//! `dot`s of precision `tensor` on Hopper's `wgmma.m64n64k16` (sm_90a):
//! the operands staged in the canonical 128-byte-swizzled layout, one
//! instruction per warpgroup, 64×64 block and `k`-step, and the lockstep
//! emulator reading them through `tile_abi::wgmma`'s descriptors: bit for
//! bit the product stepped by 16 and within the `tensor` bound of the
//! interpreter, with and without a software pipeline.

mod tensor_check;

use tile_ir::{samples, DType};
use tile_testgen::inputs::{tensor_of, zeros};
use tile_thread::emulate::{self, EmuFault};
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

/// Tiles `wgmma` does not fit (`K` of 16, `N` of 32) take `mma.sync`.
#[test]
fn other_tiles_take_mma_sync() {
    for tiles in [(64, 64, 16), (64, 32, 64)] {
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
        matches!(*error.fault, EmuFault::UnfencedAsyncRead { .. }),
        "{error}"
    );
}
