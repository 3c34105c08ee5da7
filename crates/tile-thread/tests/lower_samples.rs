//! The example kernels through the lowering and the lockstep emulator, equal
//! bit for bit to the reference interpreter, for several specializations and
//! warp counts on shapes that leave partial edge tiles.

use tile_testgen::inputs::{blocks, tensor, tensor_of};

use tile_ir::interp::{self, Arg};
use tile_ir::{samples, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

fn bits(args: &[Arg]) -> Vec<Vec<u64>> {
    args.iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_bits()).collect(),
            Arg::Tensors(ts) => ts
                .iter()
                .flat_map(|t| t.to_scalars())
                .map(|s| s.to_bits())
                .collect(),
            Arg::Scalar(s) => vec![s.to_bits()],
        })
        .collect()
}

/// Runs `func` through the interpreter and, for each warp count, through the
/// lowering and the emulator; all outputs must be bit-identical.
fn check(func: &Function, grid: [u32; 3], args: Vec<Arg>, warps: &[u32]) {
    let mut expected = args.clone();
    interp::run(func, grid, &mut expected).unwrap();
    for &num_warps in warps {
        let program = lower(func, &LowerOptions::warps(num_warps)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let mut actual = args.clone();
        emulate::run(&program, grid, &mut actual)
            .unwrap_or_else(|e| panic!("{num_warps} warps: {e}"));
        assert_eq!(
            bits(&actual),
            bits(&expected),
            "{} with {num_warps} warps",
            func.name
        );
    }
}

#[test]
fn vector_add() {
    for (block, n) in [(64, 150), (100, 250), (32, 32)] {
        let func = samples::vector_add(block).unwrap();
        let grid = [blocks(n, block), 1, 1];
        let args = vec![tensor(1, &[n]), tensor(2, &[n]), tensor(3, &[n])];
        check(&func, grid, args, &[1, 2, 4, 8]);
    }
}

#[test]
fn softmax() {
    for (br, bc, rows, cols) in [
        (2, 16, 5, 13),
        (4, 24, 6, 24),
        (1, 40, 3, 33),
        (8, 128, 9, 100),
    ] {
        let func = samples::softmax(br, bc).unwrap();
        let grid = [blocks(rows, br), 1, 1];
        let args = vec![tensor(4, &[rows, cols]), tensor(5, &[rows, cols])];
        check(&func, grid, args, &[1, 2, 8]);
    }
}

#[test]
fn layernorm() {
    for (br, bc, rows, cols) in [(2, 16, 3, 11), (4, 12, 5, 12)] {
        let func = samples::layernorm(br, bc).unwrap();
        let grid = [blocks(rows, br), 1, 1];
        let args = vec![
            tensor(6, &[rows, cols]),
            tensor(7, &[cols]),
            tensor(8, &[cols]),
            tensor(9, &[rows, cols]),
            Arg::Scalar(Scalar::F32(1e-5)),
        ];
        check(&func, grid, args, &[1, 4]);
    }
}

#[test]
fn transpose() {
    for (bm, bn, m, n) in [(8, 16, 13, 21), (5, 7, 9, 10)] {
        let func = samples::transpose(bm, bn).unwrap();
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let args = vec![tensor(10, &[m, n]), tensor(11, &[n, m])];
        check(&func, grid, args, &[1, 2]);
    }
}

#[test]
fn matmul() {
    for (bm, bn, bk, m, n, k, dtype) in [
        (8, 8, 4, 10, 9, 7, DType::F32),
        (4, 16, 8, 6, 17, 9, DType::F16),
        (16, 8, 3, 16, 8, 5, DType::BF16),
    ] {
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let args = vec![
            tensor_of(12, &[m, k], dtype),
            tensor_of(13, &[k, n], dtype),
            tensor(14, &[m, n]),
        ];
        check(&func, grid, args, &[1, 2]);
    }
}
