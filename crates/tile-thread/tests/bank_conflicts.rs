//! The emulator's bank-conflict counter on stagings read across rows: a
//! transpose (`permute`) and a layout conversion, with and without the XOR
//! swizzle of the staging, equal to the interpreter either way.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{samples, Function};
use tile_thread::emulate::{self, RunStats};
use tile_thread::lower::{lower, LowerOptions};

/// An `f32` tensor of `shape` with distinct values.
fn tensor(shape: &[usize]) -> Arg {
    let n: usize = shape.iter().product();
    Arg::Tensor(HostTensor::from_vec(shape, (0..n).map(|i| i as f32 - 7.5).collect()).unwrap())
}

/// Runs `func` lowered with `warps` warps, swizzled or not, over `grid` on
/// `args`; asserts the outputs equal the interpreter's; returns the stats.
fn stats(func: &Function, warps: u32, swizzle: bool, grid: [u32; 3], args: &[Arg]) -> RunStats {
    let mut expected = args.to_vec();
    interp::run(func, grid, &mut expected).unwrap();
    let options = LowerOptions::warps(warps).with_swizzle_shared(swizzle);
    let program = lower(func, &options).unwrap();
    let mut actual = args.to_vec();
    let stats = emulate::run_with_stats(&program, grid, &mut actual).unwrap();
    assert_eq!(actual, expected, "swizzle {swizzle}, {warps} warps");
    stats
}

#[test]
fn the_swizzle_removes_the_bank_conflicts_of_a_transpose() {
    // (tile, warps, conflicts without the swizzle, with it); the shared
    // accesses are the same either way.
    let cases = [
        ((32, 32), 4, 320, 0),
        ((32, 32), 1, 320, 0),
        ((64, 64), 4, 2304, 384),
        ((16, 16), 1, 48, 24),
        ((8, 32), 2, 32, 8),
        ((32, 8), 2, 80, 24),
    ];
    for ((bm, bn), warps, before, after) in cases {
        let func = samples::transpose(bm, bn).unwrap();
        let args = [tensor(&[bm, bn]), tensor(&[bn, bm])];
        let plain = stats(&func, warps, false, [1, 1, 1], &args);
        let swizzled = stats(&func, warps, true, [1, 1, 1], &args);
        assert_eq!(plain.shared_accesses, swizzled.shared_accesses);
        assert_eq!(
            (plain.bank_conflicts, swizzled.bank_conflicts),
            (before, after),
            "{bm}x{bn}, {warps} warps"
        );
    }
}

#[test]
fn a_partial_edge_tile_is_transposed_exactly_with_the_swizzle() {
    // 40x24 over 32x32 tiles: partial tiles, dead registers, a rounded-up
    // allocation.
    let func = samples::transpose(32, 32).unwrap();
    let args = [tensor(&[40, 24]), tensor(&[24, 40])];
    let swizzled = stats(&func, 4, true, [2, 1, 1], &args);
    let plain = stats(&func, 4, false, [2, 1, 1], &args);
    assert!(swizzled.bank_conflicts < plain.bank_conflicts);
}
