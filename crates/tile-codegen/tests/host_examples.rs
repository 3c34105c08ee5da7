//! The example kernels compiled for the host (`tile_codegen::host`) and run
//! in parallel over program instances, equal bit for bit to the reference
//! interpreter, on shapes that leave partial edge tiles; and the host's
//! bounds errors: an out-of-bounds unmasked access fails with the
//! interpreter's error and touches no memory. Layout views are in
//! `host_lview.rs`.

mod common;

use common::{blocks, bytes, host_agrees, run_host, tensor, tensor_of, HostRun};

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{samples, DType, Function, Scalar};
use tile_runtime::cpu::{HostFault, RunError};

#[test]
fn vector_add() {
    for (block, n) in [(64, 150), (100, 250), (32, 32), (1024, 3000)] {
        let func = samples::vector_add(block).unwrap();
        let grid = [blocks(n, block), 1, 1];
        let args = vec![tensor(1, &[n]), tensor(2, &[n]), tensor(3, &[n])];
        host_agrees(&func, grid, args);
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
        host_agrees(&func, grid, args);
    }
}

#[test]
fn layernorm() {
    for (br, bc, rows, cols) in [(2, 16, 3, 11), (4, 12, 5, 12), (2, 128, 7, 100)] {
        let func = samples::layernorm(br, bc).unwrap();
        let grid = [blocks(rows, br), 1, 1];
        let args = vec![
            tensor(6, &[rows, cols]),
            tensor(7, &[cols]),
            tensor(8, &[cols]),
            tensor(9, &[rows, cols]),
            Arg::Scalar(Scalar::F32(1e-5)),
        ];
        host_agrees(&func, grid, args);
    }
}

#[test]
fn transpose() {
    for (bm, bn, m, n) in [(8, 16, 13, 21), (5, 7, 9, 10), (32, 32, 70, 33)] {
        let func = samples::transpose(bm, bn).unwrap();
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let args = vec![tensor(10, &[m, n]), tensor(11, &[n, m])];
        host_agrees(&func, grid, args);
    }
}

#[test]
fn matmul() {
    for (bm, bn, bk, m, n, k, dtype) in [
        (8, 8, 4, 10, 9, 7, DType::F32),
        (4, 16, 8, 6, 17, 9, DType::F16),
        (16, 8, 3, 16, 8, 5, DType::BF16),
        (32, 32, 16, 70, 45, 50, DType::F32),
        (16, 16, 8, 20, 18, 19, DType::F8E4M3),
        // Blocks of the micro-kernel: whole row blocks and vectors, a row
        // remainder (6 = 4 + 2) and a column tail (40 = 2 · 16 + 8).
        (64, 64, 32, 100, 90, 70, DType::F32),
        (6, 40, 5, 13, 83, 11, DType::F32),
        (6, 40, 5, 13, 83, 11, DType::F8E5M2),
    ] {
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let args = vec![
            tensor_of(12, &[m, k], dtype),
            tensor_of(13, &[k, n], dtype),
            tensor(14, &[m, n]),
        ];
        host_agrees(&func, grid, args);
    }
}

/// A kernel that copies partition `program_id + shift` of `x` to partition
/// `program_id` of `out` without masks.
fn shifted_copy(shift: i32) -> Function {
    let text = format!(
        "kernel @shifted_copy(%x: tensor<f32, 1>, %out: tensor<f32, 1>) {{
  %p = program_id 0 : i32
  %s = constant {shift} : i32
  %q = add %p, %s : i32
  %vx = partition_view %x [8] : view<f32, [8]>
  %vo = partition_view %out [8] : view<f32, [8]>
  %t = load %vx[%q] : tile<8xf32>
  store %t, %vo[%p]
}}"
    );
    tile_ir::text::parse_function(&text).unwrap()
}

#[test]
fn unmasked_access_out_of_bounds_fails_and_touches_nothing() {
    // 20 elements: partition 2 is partial (16..24), partition 3 outside.
    for (shift, index_space) in [(2, false), (3, true), (-1, true)] {
        let func = shifted_copy(shift);
        let args = vec![tensor(20, &[20]), tensor(21, &[20])];
        let mut expected = args.clone();
        let oracle = interp::run(&func, [1, 1, 1], &mut expected).unwrap_err();
        let mut actual = args.clone();
        let err = run_host(&func, [1, 1, 1], &mut actual).unwrap_err();
        let HostRun::Run(RunError::Op { program, fault, .. }) = &err else {
            panic!("shift {shift}: expected an op error, found {err}");
        };
        assert_eq!(*program, [0, 0, 0]);
        let index = vec![i64::from(shift)];
        let want = if index_space {
            HostFault::IndexSpace { index }
        } else {
            HostFault::PartialPartition { index }
        };
        assert_eq!(*fault, want, "shift {shift}: {err} (interpreter: {oracle})");
        assert!(
            bytes(&actual) == bytes(&args),
            "shift {shift}: memory was written"
        );
    }
}

#[test]
fn the_first_failing_program_in_order_is_reported() {
    // Programs 0 and 1 succeed, 2 reads a partial partition, 3 and 4 read
    // outside the index space: the error is program 2's, and the stores of
    // programs 0 and 1 happened.
    let func = shifted_copy(0);
    let mut args = vec![tensor(22, &[20]), tensor(23, &[40])];
    let err = run_host(&func, [5, 1, 1], &mut args).unwrap_err();
    let HostRun::Run(RunError::Op { program, fault, op }) = &err else {
        panic!("expected an op error, found {err}");
    };
    assert_eq!(*program, [2, 0, 0], "{err}");
    assert_eq!(*fault, HostFault::PartialPartition { index: vec![2] });
    assert!(op.contains("load"), "{op}");
    let (Arg::Tensor(x), Arg::Tensor(out)) = (&args[0], &args[1]) else {
        unreachable!()
    };
    assert_eq!(out.to_scalars()[..16], x.to_scalars()[..16]);
}

#[test]
fn a_masked_store_writes_only_inside_the_tensor() {
    // A 6-element tensor at offset 2 in a 10-element buffer: the masked
    // store of partition 1 (elements 4..8) writes 4 and 5 only.
    let text = "kernel @fill(%out: tensor<f32, 1>) {
  %p = program_id 0 : i32
  %v = partition_view %out [4] : view<f32, [4]>
  %t = full 7.0 : tile<4xf32>
  store_masked %t, %v[%p]
}";
    let func = tile_ir::text::parse_function(text).unwrap();
    let buffer: Vec<u8> = (0..10u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let out = HostTensor::with_strides(DType::F32, &[6], &[1], 2, buffer).unwrap();
    host_agrees(&func, [2, 1, 1], vec![Arg::Tensor(out)]);
}

#[test]
fn aliasing_tensors_are_refused() {
    let func = samples::vector_add(4).unwrap();
    let broadcast = HostTensor::with_strides(DType::F32, &[8], &[0], 0, vec![0; 4]).unwrap();
    let mut args = vec![Arg::Tensor(broadcast), tensor(1, &[8]), tensor(2, &[8])];
    let err = run_host(&func, [2, 1, 1], &mut args).unwrap_err();
    assert!(
        matches!(err, HostRun::Run(RunError::Aliasing { index: 0, .. })),
        "{err}"
    );
}

/// `out = reduce(x) along the last axis` (keepdim) and `cum = scan(x)` of an
/// `[rows, cols]` f32 tile; the rows' folds run interleaved on the host.
fn fold_rows(rows: usize, cols: usize, reduce: tile_ir::ReduceKind) -> Function {
    use tile_ir::builder::Builder;
    use tile_ir::{Padding, ScanKind, TensorType, Type};
    let ty = |rank| Type::Tensor(TensorType::new(DType::F32, rank));
    let mut b = Builder::new("fold_rows");
    let x = b.param("x", ty(2));
    let out = b.param("out", ty(2));
    let cum = b.param("cum", ty(2));
    let zero = b.constant(Scalar::I32(0)).unwrap();
    let vx = b.partition_view(x, &[rows, cols]).unwrap();
    let t = b.load_masked(vx, &[zero, zero], Padding::Zero).unwrap();
    let r = b.reduce(reduce, t, 1, true).unwrap();
    let vo = b.partition_view(out, &[rows, 1]).unwrap();
    b.store_masked(r, vo, &[zero, zero]).unwrap();
    let s = b.scan(ScanKind::CumSum, t, 1).unwrap();
    let vc = b.partition_view(cum, &[rows, cols]).unwrap();
    b.store_masked(s, vc, &[zero, zero]).unwrap();
    b.finish().unwrap()
}

#[test]
fn folds_along_rows_keep_each_rows_order() {
    use tile_ir::ReduceKind;
    for kind in [
        ReduceKind::Sum,
        ReduceKind::Prod,
        ReduceKind::Max,
        ReduceKind::Min,
    ] {
        for (rows, cols) in [(2, 37), (5, 16), (8, 3)] {
            let func = fold_rows(rows, cols, kind);
            let mut x = tensor(14, &[rows, cols]);
            if let Arg::Tensor(t) = &mut x {
                // Specials in the middle of rows: NaN payloads, infinities, -0.
                let specials = [
                    f32::NAN,
                    f32::INFINITY,
                    -0.0,
                    f32::NEG_INFINITY,
                    f32::from_bits(0x7fc0_1234),
                ];
                for (k, v) in specials.iter().enumerate() {
                    let at = 4 * ((k * 7) % (rows * cols));
                    t.data_mut()[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
            let args = vec![x, tensor(15, &[rows, 1]), tensor(16, &[rows, cols])];
            host_agrees(&func, [1, 1, 1], args);
        }
    }
}
