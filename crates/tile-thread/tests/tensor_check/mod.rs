//! The check the tensor-core lowering tests share: a lowered matmul sample
//! run by the lockstep emulator on a problem of partial tiles, bit for bit
//! the product stepped by the instruction's `K` (`products::stepped`, from
//! plain row-major matrices) and within the `tensor` bound of the
//! interpreter's in-order chain, from which the inputs tell it apart.
#![allow(dead_code)] // each test binary uses its own subset

use tile_ir::interp::{self, Arg};
use tile_ir::{DType, Function};
use tile_testgen::inputs::{blocks, tensor_of, zeros};
use tile_testgen::products::{stepped, within_tensor_bound};
use tile_thread::{emulate, Program};

/// A tensor argument's elements as `f32`.
pub fn values(arg: &Arg) -> Vec<f32> {
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

/// A checked run: the emulated product and its row-major operands.
pub struct Run {
    /// The emulated `c`.
    pub got: Vec<f32>,
    /// `a`, `b` and the initial `c`.
    pub operands: [Vec<f32>; 3],
    /// `(M, K, N)`.
    pub dims: (usize, usize, usize),
}

/// Runs `program` (`func`, the matmul sample with `bm × bn × bk` tiles of
/// `dtype`, lowered) on an `[M, K] × [K, N]` problem of partial tiles, the
/// operands from `seeds`, and checks it against the product stepped by
/// `step` and the interpreter (`what` names the case in failures).
pub fn check(
    func: &Function,
    program: &Program,
    tiles: (usize, usize, usize),
    dtype: DType,
    seeds: [u64; 2],
    step: usize,
    what: &str,
) -> Run {
    check_reading(func, program, tiles, (dtype, |x| x), seeds, step, what)
}

/// [`check`] of a program whose instruction reads each operand element `x`
/// as `read(x)` (TF32's rounding), which the stepped product applies too.
pub fn check_reading(
    func: &Function,
    program: &Program,
    tiles: (usize, usize, usize),
    reading: (DType, fn(f32) -> f32),
    seeds: [u64; 2],
    step: usize,
    what: &str,
) -> Run {
    let (run, reference) = run_checked(func, program, tiles, reading, seeds, step, what);
    assert_ne!(
        run.got, reference,
        "{what}: the inputs should tell the two orders apart"
    );
    run
}

/// [`check`] without asking the inputs to tell the orders apart: FP8
/// products are so short that an in-order `f32` chain of them is often
/// exact, and then every order agrees.
pub fn check_stepped(
    func: &Function,
    program: &Program,
    tiles: (usize, usize, usize),
    dtype: DType,
    seeds: [u64; 2],
    step: usize,
    what: &str,
) -> Run {
    run_checked(func, program, tiles, (dtype, |x| x), seeds, step, what).0
}

/// The run of [`check_reading`] and the interpreter's product.
fn run_checked(
    func: &Function,
    program: &Program,
    (bm, bn, bk): (usize, usize, usize),
    (dtype, read): (DType, fn(f32) -> f32),
    seeds: [u64; 2],
    step: usize,
    what: &str,
) -> (Run, Vec<f32>) {
    let (m, n, k) = (2 * bm + 3, bn + 5, 3 * bk - 7);
    let args = vec![
        tensor_of(seeds[0], &[m, k], dtype),
        tensor_of(seeds[1], &[k, n], dtype),
        zeros(&[m, n]),
    ];
    let grid = [blocks(m, bm), blocks(n, bn), 1];
    let mut emulated = args.clone();
    emulate::run(program, grid, &mut emulated).unwrap();
    let mut reference = args.clone();
    interp::run(func, grid, &mut reference).unwrap();
    let read_all = |v: Vec<f32>| -> Vec<f32> { v.into_iter().map(read).collect() };
    let (a, b, c) = (
        read_all(values(&args[0])),
        read_all(values(&args[1])),
        values(&args[2]),
    );
    let got = values(&emulated[2]);
    assert_eq!(got, stepped(&a, &b, &c, (m, k, n), step), "{what}");
    let reference = values(&reference[2]);
    within_tensor_bound(&got, &reference, &a, &b, &c, (m, k, n)).unwrap();
    let run = Run {
        got,
        operands: [a, b, c],
        dims: (m, k, n),
    };
    (run, reference)
}

/// A `rows × cols` f16 matrix of small integers, its rows `stride`
/// elements apart: every product and sum of a short K loop is exact, in any
/// order.
pub fn small_integer_rows(seed: u64, rows: usize, cols: usize, stride: usize) -> Arg {
    let mut bytes = vec![0u8; rows * stride * 2];
    let values = tile_testgen::inputs::values(seed, rows * stride);
    for (i, v) in values.into_iter().enumerate() {
        let element = tile_ir::eval::cast(tile_ir::Scalar::F32(v.round()), DType::F16);
        element.write_le(&mut bytes[i * 2..]).unwrap();
    }
    Arg::Tensor(
        interp::HostTensor::with_strides(
            DType::F16,
            &[rows, cols],
            &[stride as isize, 1],
            0,
            bytes,
        )
        .unwrap(),
    )
}
