//! Tensor arrays in host code, run by the CPU device's library: a grouped
//! matmul over problems of their own sizes and a loop over an array's
//! tensors store the interpreter's bytes, and an index outside the array
//! is the `get_tensor`'s fault, with the op and the count.

mod common;

use common::{host_agrees, run_host, HostRun};
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{samples, DType};
use tile_runtime::cpu::{HostFault, RunError};
use tile_testgen::inputs::f32_vectors;

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

#[test]
fn a_loop_over_an_arrays_tensors() {
    let func = samples::double_each(64).unwrap();
    let lengths = [100, 3, 0, 64, 129];
    host_agrees(
        &func,
        [3, 1, 1],
        vec![f32_vectors(&lengths, 0), f32_vectors(&lengths, 7)],
    );
}

#[test]
fn an_index_outside_the_array_is_a_fault() {
    let func = samples::double_each(64).unwrap();
    // `ys` holds one tensor more than `xs`: its last index is outside `xs`.
    let mut args = vec![f32_vectors(&[4, 4], 0), f32_vectors(&[4, 4, 4], 0)];
    let err = run_host(&func, [1, 1, 1], &mut args).unwrap_err();
    let HostRun::Run(RunError::Op { fault, op, .. }) = &err else {
        panic!("expected an op error, found {err}");
    };
    assert_eq!(*fault, HostFault::TensorIndex { index: 2, count: 2 });
    assert!(op.contains("get_tensor %xs, "), "{op}");
    assert_eq!(
        fault.to_string(),
        "tensor index 2 is outside the tensor array of 2 tensors"
    );
}
