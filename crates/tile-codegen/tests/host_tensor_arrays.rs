//! Tensor arrays in host code, run by the CPU device's library: a grouped
//! matmul over problems of their own sizes and a loop over an array's
//! tensors store the interpreter's bytes, and an index outside the array
//! is the `get_tensor`'s fault, with the op and the count.

mod common;

use common::{host_agrees, run_host, HostRun};
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{samples, DType};
use tile_runtime::cpu::{HostFault, RunError};

fn matrices(shapes: &[(usize, usize)], seed: usize) -> Arg {
    Arg::Tensors(
        shapes
            .iter()
            .enumerate()
            .map(|(g, &(rows, cols))| {
                let values = (0..rows * cols)
                    .map(|i| ((i * 7 + g + seed) % 9) as f32 - 4.0)
                    .collect();
                HostTensor::from_vec(&[rows, cols], values).unwrap()
            })
            .collect(),
    )
}

#[test]
fn a_grouped_matmul() {
    let problems = [(40, 20, 24), (5, 33, 17), (1, 1, 1), (17, 9, 0)];
    let func = samples::grouped_matmul(16, 16, 8, DType::F32).unwrap();
    let shapes = |f: fn(&(usize, usize, usize)) -> (usize, usize)| {
        problems.iter().map(f).collect::<Vec<_>>()
    };
    let args = vec![
        matrices(&shapes(|&(m, _, k)| (m, k)), 0),
        matrices(&shapes(|&(_, n, k)| (k, n)), 1),
        matrices(&shapes(|&(m, n, _)| (m, n)), 2),
    ];
    host_agrees(&func, [3, 3, problems.len() as u32], args);
}

/// `ys[g] = 2 · xs[g]` for every `g`, in a loop over the array.
const DOUBLE_ALL: &str = "\
kernel @double_all(%xs: tensors<f32, 1>, %ys: tensors<f32, 1>) {
  %0 = program_id 0 : i32
  %1 = num_tensors %ys : i32
  %2 = constant 0 : i32
  %3 = constant 1 : i32
  for %4 = %2 to %1 step %3 {
    %5 = get_tensor %xs[%4] : tensor<f32, 1>
    %6 = get_tensor %ys[%4] : tensor<f32, 1>
    %7 = dim %5 axis 0 : i32
    %8 = constant 64 : i32
    %9 = mul %0, %8 : i32
    %10 = cmp lt %9, %7 : bool
    if %10 {
      %11 = partition_view %5 [64] : view<f32, [64]>
      %12 = partition_view %6 [64] : view<f32, [64]>
      %13 = load_masked %11[%0] pad(zero) : tile<64xf32>
      %14 = add %13, %13 : tile<64xf32>
      store_masked %14, %12[%0]
      yield
    } else {
      yield
    }
    yield
  }
}";

fn vectors(lengths: &[usize]) -> Arg {
    matrices(&lengths.iter().map(|&n| (1, n)).collect::<Vec<_>>(), 0)
}

fn flat(arg: Arg) -> Arg {
    match arg {
        Arg::Tensors(ts) => Arg::Tensors(
            ts.into_iter()
                .map(|t| {
                    let n = t.shape()[1];
                    HostTensor::from_vec(&[n], t.to_vec::<f32>().unwrap()).unwrap()
                })
                .collect(),
        ),
        other => other,
    }
}

#[test]
fn a_loop_over_an_arrays_tensors() {
    let func = parse_function(DOUBLE_ALL).unwrap();
    let lengths = [100, 3, 0, 64, 129];
    host_agrees(
        &func,
        [3, 1, 1],
        vec![flat(vectors(&lengths)), flat(vectors(&lengths))],
    );
}

#[test]
fn an_index_outside_the_array_is_a_fault() {
    let func = parse_function(DOUBLE_ALL).unwrap();
    // `ys` holds one tensor more than `xs`: its last index is outside `xs`.
    let mut args = vec![flat(vectors(&[4, 4])), flat(vectors(&[4, 4, 4]))];
    let err = run_host(&func, [1, 1, 1], &mut args).unwrap_err();
    let HostRun::Run(RunError::Op { fault, op, .. }) = &err else {
        panic!("expected an op error, found {err}");
    };
    assert_eq!(*fault, HostFault::TensorIndex { index: 2, count: 2 });
    assert!(op.contains("get_tensor %xs, %4"), "{op}");
    assert_eq!(
        fault.to_string(),
        "tensor index 2 is outside the tensor array of 2 tensors"
    );
}
