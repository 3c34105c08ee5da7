//! Float sums that may combine in any order (`fast_math`:
//! `LowerOptions::reassociate_sums`): trees of in-thread adds, shuffles and
//! a cross-warp step instead of the interpreter's left-to-right fold, within
//! the bound of docs/semantics.md §6.

use tile_ir::builder::Builder;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{samples, DType, Function, Padding, ReduceKind, Scalar, TensorType, Type};
use tile_testgen::inputs::{blocks, tensor, values};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::Program;

/// `out[r] = Σ_c x[r, c]`: each program sums `rows` rows of at most `cols`
/// columns (`keepdim`, into an `[R, 1]` tensor).
fn row_sums(rows: usize, cols: usize) -> Function {
    let mut b = Builder::new("row_sums");
    let x = b.param("x", Type::Tensor(TensorType::new(DType::F32, 2)));
    let out = b.param("out", Type::Tensor(TensorType::new(DType::F32, 2)));
    let build = |b: &mut Builder| -> Result<(), tile_ir::builder::BuildError> {
        let pid = b.program_id(0)?;
        let zero = b.constant(Scalar::I32(0))?;
        let vx = b.partition_view(x, &[rows, cols])?;
        let vo = b.partition_view(out, &[rows, 1])?;
        let t = b.load_masked(vx, &[pid, zero], Padding::Zero)?;
        let total = b.reduce(ReduceKind::Sum, t, 1, true)?;
        b.store_masked(total, vo, &[pid, zero])
    };
    build(&mut b).unwrap();
    b.finish().unwrap()
}

/// `func` lowered for `warps` warps with sums reassociated.
fn lowered(func: &Function, warps: u32) -> Program {
    let options = LowerOptions::warps(warps).with_reassociated_sums(true);
    let program = lower(func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    program
}

/// The f32 elements of a tensor argument.
fn floats(arg: &Arg) -> Vec<f32> {
    match arg {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_f64() as f32).collect(),
        Arg::Tensors(ts) => ts
            .iter()
            .flat_map(|t| t.to_scalars())
            .map(|s| s.to_f64() as f32)
            .collect(),
        Arg::Scalar(s) => vec![s.to_f64() as f32],
    }
}

/// The bound of §6 for a sum of `n` terms whose magnitudes add to
/// `magnitude`: `2 · γ(n) · magnitude`, `γ(n) = n·u / (1 − n·u)`,
/// `u = 2⁻²⁴`.
fn sum_bound(n: usize, magnitude: f64) -> f64 {
    let nu = n as f64 * (-24f64).exp2();
    2.0 * nu / (1.0 - nu) * magnitude
}

/// Runs `program` (lowered from `row_sums(rows, ..)`) and the interpreter
/// on an `m × n` matrix of [`values`] of `seed`; each row's sum must lie
/// within the bound of the fold. Returns (emulated, interpreted) sums.
fn sums_within_the_bound(
    func: &Function,
    program: &Program,
    rows: usize,
    (m, n): (usize, usize),
    seed: u64,
) -> (Vec<f32>, Vec<f32>) {
    let xs = values(seed, m * n);
    let x = Arg::Tensor(HostTensor::from_vec(&[m, n], xs.clone()).unwrap());
    let args = vec![x, Arg::Tensor(HostTensor::zeros(DType::F32, &[m, 1]))];
    let grid = [blocks(m, rows), 1, 1];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(program, grid, &mut emulated).unwrap();
    interp::run(func, grid, &mut reference).unwrap();
    let (got, want) = (floats(&emulated[1]), floats(&reference[1]));
    for r in 0..m {
        let magnitude: f64 = xs[r * n..(r + 1) * n]
            .iter()
            .map(|&v| f64::from(v).abs())
            .sum();
        let error = (f64::from(got[r]) - f64::from(want[r])).abs();
        assert!(
            error <= sum_bound(n, magnitude),
            "{m}x{n}, row {r}: {} against {}",
            got[r],
            want[r]
        );
    }
    (got, want)
}

#[test]
fn reassociated_row_sums_are_trees_within_the_bound() {
    for (rows, cols, warps) in [(2, 256, 2), (4, 1024, 4), (1, 1024, 8), (8, 64, 4)] {
        let func = row_sums(rows, cols);
        let program = lowered(&func, warps);
        let text = program.to_string();
        // No lane is folded element by element from shared memory: at
        // most the cross-warp step reads each warp's total.
        assert!(text.contains("shfl.bfly"), "{rows}x{cols}: {text}");
        assert!(
            text.matches("ld.shared").count() <= 8,
            "{rows}x{cols}: a sequential fold"
        );
        let (m, n) = (3 * rows + 1, cols - 3);
        let seed = u64::try_from(cols).unwrap();
        let (got, want) = sums_within_the_bound(&func, &program, rows, (m, n), seed);
        // The tree is another order: some row comes out with other bits.
        assert_ne!(got, want, "{rows}x{cols}: the same bits as the fold");
    }
}

#[test]
fn many_warps_combine_their_totals_by_shuffles() {
    // 32 (then 8, two rows on 16 warps) warps along a row: each lane
    // reads one warp's total, of its one row, and the lanes combine them by
    // shuffles; reading all 32 in every thread held them in registers at
    // once.
    for (rows, cols, warps, along) in [(1, 4096, 32, 32u32), (2, 2048, 16, 8)] {
        let func = row_sums(rows, cols);
        let program = lowered(&func, warps);
        let text = program.to_string();
        assert_eq!(
            text.matches("ld.shared").count(),
            1,
            "{rows}x{cols}: one read of the totals: {text}"
        );
        let butterflies = 5 + along.trailing_zeros() as usize;
        assert_eq!(text.matches("shfl.bfly").count(), butterflies, "{text}");
        let (m, n) = (2 * rows + 1, cols - 5);
        sums_within_the_bound(&func, &program, rows, (m, n), 7);
    }
}

/// `out[c] = Σ_r x[r, c]` over one block of `rows` rows and `cols`
/// columns (`keepdim`, into a `[1, C]` tensor).
fn column_sums(rows: usize, cols: usize) -> Function {
    let mut b = Builder::new("column_sums");
    let x = b.param("x", Type::Tensor(TensorType::new(DType::F32, 2)));
    let out = b.param("out", Type::Tensor(TensorType::new(DType::F32, 2)));
    let build = |b: &mut Builder| -> Result<(), tile_ir::builder::BuildError> {
        let zero = b.constant(Scalar::I32(0))?;
        let vx = b.partition_view(x, &[rows, cols])?;
        let vo = b.partition_view(out, &[1, cols])?;
        let t = b.load_masked(vx, &[zero, zero], Padding::Zero)?;
        let total = b.reduce(ReduceKind::Sum, t, 0, true)?;
        b.store_masked(total, vo, &[zero, zero])
    };
    build(&mut b).unwrap();
    b.finish().unwrap()
}

#[test]
fn many_warps_along_columns_combine_only_their_own_column() {
    // The warps lie along the summed axis and the lanes across it (each
    // lane its own columns), or two lanes along it: the lanes that combine
    // the warps' totals by shuffles must hold one column, and read them
    // all between them.
    for (rows, cols, warps) in [(256, 32, 8), (512, 32, 16), (128, 16, 8)] {
        let func = column_sums(rows, cols);
        let program = lowered(&func, warps);
        let (m, n) = (rows - 3, cols - 1);
        let xs = values(5, m * n);
        let x = Arg::Tensor(HostTensor::from_vec(&[m, n], xs.clone()).unwrap());
        let args = vec![x, Arg::Tensor(HostTensor::zeros(DType::F32, &[1, n]))];
        let (mut emulated, mut reference) = (args.clone(), args);
        emulate::run(&program, [1, 1, 1], &mut emulated).unwrap();
        interp::run(&func, [1, 1, 1], &mut reference).unwrap();
        let (got, want) = (floats(&emulated[1]), floats(&reference[1]));
        for c in 0..n {
            let magnitude: f64 = (0..m).map(|r| f64::from(xs[r * n + c]).abs()).sum();
            let error = (f64::from(got[c]) - f64::from(want[c])).abs();
            assert!(
                error <= sum_bound(m, magnitude),
                "{rows}x{cols} on {warps} warps, column {c}: {} against {}",
                got[c],
                want[c]
            );
        }
    }
}

#[test]
fn padding_of_a_reassociated_sum_keeps_negative_zero() {
    // 48 columns spread over 64 lanes' worth of registers: the dead ones
    // must add `-0.0`, or a row of `-0.0`s would sum to `+0.0`.
    let func = row_sums(2, 48);
    let program = lowered(&func, 2);
    let (m, n) = (2, 48);
    let x = Arg::Tensor(HostTensor::from_vec(&[m, n], vec![-0.0f32; m * n]).unwrap());
    let args = vec![x, Arg::Tensor(HostTensor::zeros(DType::F32, &[m, 1]))];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(&program, [1, 1, 1], &mut emulated).unwrap();
    interp::run(&func, [1, 1, 1], &mut reference).unwrap();
    assert_eq!(emulated[1], reference[1]);
    assert!(floats(&emulated[1])
        .iter()
        .all(|v| v.to_bits() == (-0.0f32).to_bits()));
}

#[test]
fn softmax_without_shared_memory_when_sums_reassociate() {
    // The max and the sum both run as shuffle trees (the warps lie along
    // the rows); in order, the sum runs as a chain through the lanes
    // (`lower/scan_chain.rs`), without shared memory either.
    let func = samples::softmax(2, 16).unwrap();
    assert_eq!(lowered(&func, 2).shared.len(), 0);
    let in_order = lower(&func, &LowerOptions::warps(2)).unwrap();
    assert_eq!(in_order.shared.len(), 0);
    assert!(in_order.to_string().contains("shfl.idx"), "{in_order}");
    let args = vec![tensor(5, &[5, 13]), tensor(6, &[5, 13])];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(&lowered(&func, 2), [3, 1, 1], &mut emulated).unwrap();
    interp::run(&func, [3, 1, 1], &mut reference).unwrap();
    for (g, w) in floats(&emulated[1]).iter().zip(floats(&reference[1])) {
        // Sums of at most 16 terms in [0, 1], then one division.
        assert!(
            (g - w).abs() <= 4.0 * 16.0 * f32::EPSILON,
            "{g} against {w}"
        );
    }
}
