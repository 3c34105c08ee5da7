//! Tensor-core operands read through rank-3 and rank-4 partition views and
//! reshaped into matrices (a batch's `[1, BM, BK]` tile, a head's `[1, BK,
//! 1, BN]`), as batched and per-head kernels read them: copied with
//! `cp.async` straight into the operand's shared layout and
//! software-pipelined like a rank-2 view's, and the interpreter's bits on
//! the lockstep emulator and on sm_80, gfx942 and gfx1100.

mod emulated;

use emulated::{padded, TARGETS};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{eval, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::ThreadOpKind;

/// `c[z] = a[z] × b[:, z, :]` in f16 for each batch `z` (grid axis 2):
/// `a` is `[Z, M, K]`, `b` is `[K, Z, 1, N]`, read through views of
/// `[1, 32, 16]` and `[16, 1, 1, 32]` tiles reshaped into the operands.
fn batched_matmul() -> Function {
    parse_function(
        r#"kernel @batched_matmul(%a: tensor<f16, 3>, %b: tensor<f16, 4>, %c: tensor<f32, 3>) {
  %pm = program_id 0 : i32
  %pn = program_id 1 : i32
  %z = program_id 2 : i32
  %zero = constant 0 : i32
  %va = partition_view %a [1, 32, 16] : view<f16, [1, 32, 16]>
  %vb = partition_view %b [16, 1, 1, 32] : view<f16, [16, 1, 1, 32]>
  %vc = partition_view %c [1, 32, 32] : view<f32, [1, 32, 32]>
  %k = dim %a axis 2 : i32
  %bk = constant 16 : i32
  %k15 = constant 15 : i32
  %ks = add %k, %k15 : i32
  %kt = div %ks, %bk : i32
  %one = constant 1 : i32
  %init = full 0.0 : tile<32x32xf32>
  %acc = for %kk = %zero to %kt step %one iter(%s = %init) : tile<32x32xf32> {
    %la = load_masked %va[%z, %pm, %kk] pad(zero) : tile<1x32x16xf16>
    %ta = reshape %la to [32, 16] : tile<32x16xf16>
    %lb = load_masked %vb[%kk, %z, %zero, %pn] pad(zero) : tile<16x1x1x32xf16>
    %tb = reshape %lb to [16, 32] : tile<16x32xf16>
    %d = dot tensor %ta, %tb, %s : tile<32x32xf32>
    yield %d
  }
  %r = reshape %acc to [1, 32, 32] : tile<1x32x32xf32>
  store_masked %r, %vc[%z, %pm, %pn]
}"#,
    )
    .unwrap()
}

/// A tensor of `dtype` and `shape` (row-major, its last axis padded to
/// `pitch` elements) holding small integers, so that every product and sum
/// of a short K loop is exact in any order.
fn small_integers(dtype: DType, shape: &[usize], pitch: usize) -> HostTensor {
    let rows: usize = shape[..shape.len() - 1].iter().product();
    let cols = shape[shape.len() - 1];
    let flat = padded(dtype, (rows, cols), (pitch, 0), |i| {
        ((i * 7 + 3) % 9) as f64 - 4.0
    });
    let mut strides = vec![pitch as isize; shape.len()];
    strides[shape.len() - 1] = 1;
    for axis in (0..shape.len() - 1).rev() {
        let inner = if axis + 1 == shape.len() - 1 {
            pitch
        } else {
            shape[axis + 1] * strides[axis + 1] as usize
        };
        strides[axis] = inner as isize;
    }
    HostTensor::with_strides(dtype, shape, &strides, 0, flat.data().to_vec()).unwrap()
}

fn copies(func: &Function, stages: u32) -> usize {
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(stages);
    let program = lower(func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    program
        .ops
        .iter()
        .filter(|(_, op)| matches!(op.kind, ThreadOpKind::CopyAsync { .. }))
        .count()
}

#[test]
fn reshaped_operands_are_copied_ahead_like_matrices() {
    let func = batched_matmul();
    let (one, three) = (copies(&func, 1), copies(&func, 3));
    assert!(one > 0, "the operands are copied with cp.async");
    // Two stages copied ahead before the loop, one in it.
    assert_eq!(three, 3 * one);
}

#[test]
fn batched_operands_agree_on_every_stage() {
    let func = batched_matmul();
    // Z = 2 batches, M = 40, K = 40 (two and a half blocks), N = 36: edge
    // tiles on every axis; rows padded so that chunks are whole for `a`
    // and element by element for `b` (a pitch of 37).
    let (z, m, k, n) = (2, 40, 40, 36);
    let args = || {
        vec![
            Arg::Tensor(small_integers(DType::F16, &[z, m, k], 48)),
            Arg::Tensor(small_integers(DType::F16, &[k, z, 1, n], 37)),
            Arg::Tensor(
                HostTensor::from_scalars(
                    DType::F32,
                    &[z, m, n],
                    &vec![eval::cast(Scalar::F32(0.0), DType::F32); z * m * n],
                )
                .unwrap(),
            ),
        ]
    };
    let grid = [2, 2, z as u32];
    let mut want = args();
    interp::run(&func, grid, &mut want).unwrap();
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(3);
    let mut got = args();
    emulate::run(&lower(&func, &options).unwrap(), grid, &mut got).unwrap();
    assert_eq!(
        emulated::bytes(&got, 2),
        emulated::bytes(&want, 2),
        "lockstep"
    );
    for target in TARGETS {
        let mut got = args();
        emulated::run_staged(&func, target, (4, 3), grid, &mut got)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(
            emulated::bytes(&got, 2),
            emulated::bytes(&want, 2),
            "{target}"
        );
    }
}
