//! Vector accesses: layouts with several consecutive elements per thread get
//! `w`-wide loads and stores behind a runtime contiguity and alignment test;
//! contiguous, misaligned and strided tensors all give the interpreter's
//! results (the vector path and the fallback are both exercised).

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{samples, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// A tensor of `shape` with the given strides and offset (in elements) over
/// a buffer of `len` elements `0, 1, 2, …` (as f32).
fn strided(shape: &[usize], strides: &[isize], offset: usize, len: usize) -> Arg {
    let data: Vec<u8> = (0..len)
        .flat_map(|i| (i as f32 * 0.5 - 3.0).to_le_bytes())
        .collect();
    Arg::Tensor(HostTensor::with_strides(DType::F32, shape, strides, offset, data).unwrap())
}

fn check(func: &Function, grid: [u32; 3], args: Vec<Arg>) {
    let mut expected = args.clone();
    interp::run(func, grid, &mut expected).unwrap();
    for warps in [1, 2] {
        let program = lower(func, &LowerOptions::warps(warps)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let mut actual = args.clone();
        emulate::run(&program, grid, &mut actual).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(actual, expected, "{} with {warps} warps", func.name);
    }
}

#[test]
fn vector_add_emits_vector_accesses_behind_a_test() {
    let text = lower(&samples::vector_add(64).unwrap(), &LowerOptions::warps(1))
        .unwrap()
        .to_string();
    assert!(text.contains("ld.global.v4 x[") && text.contains("st.global.v4 out["));
    // Each vector carries its runtime test and its elements' own offsets,
    // for the element-by-element path; there is no second copy of the
    // accesses.
    assert!(text.contains("] if(%") && text.contains(") else[%"));
    assert!(!text.contains("ld.global.v1 x[") && !text.contains("st.global.v1 out["));
    assert!(text.contains("align x"));
    // An odd tile has one element per thread and no vector form.
    let text = lower(&samples::vector_add(63).unwrap(), &LowerOptions::warps(1))
        .unwrap()
        .to_string();
    assert!(!text.contains("ld.global.v4") && !text.contains("if("));
}

#[test]
fn vector_add_contiguous_misaligned_and_strided() {
    let func = samples::vector_add(64).unwrap();
    let n = 150;
    let grid = [3, 1, 1];
    let out = || Arg::Tensor(HostTensor::from_vec(&[n], vec![0.0f32; n]).unwrap());
    // Contiguous and aligned: the vector path.
    check(
        &func,
        grid,
        vec![strided(&[n], &[1], 0, n), strided(&[n], &[1], 0, n), out()],
    );
    // Element zero one element off a 16-byte boundary: the fallback.
    check(
        &func,
        grid,
        vec![
            strided(&[n], &[1], 1, n + 1),
            strided(&[n], &[1], 4, n + 4),
            out(),
        ],
    );
    // Every other element: the fallback.
    check(
        &func,
        grid,
        vec![
            strided(&[n], &[2], 0, 2 * n),
            strided(&[n], &[1], 0, n),
            out(),
        ],
    );
    // A strided output.
    let out2 = strided(&[n], &[3], 2, 3 * n + 2);
    check(
        &func,
        grid,
        vec![strided(&[n], &[1], 0, n), strided(&[n], &[1], 0, n), out2],
    );
}

#[test]
fn transpose_row_major_and_column_major() {
    let func = samples::transpose(8, 12).unwrap();
    let (m, n) = (13, 20);
    let grid = [2, 2, 1];
    let out = || Arg::Tensor(HostTensor::from_vec(&[n, m], vec![0.0f32; n * m]).unwrap());
    // Rows of 20 elements: strides multiple of 4, the vector path for x.
    check(
        &func,
        grid,
        vec![strided(&[m, n], &[20, 1], 0, m * n), out()],
    );
    // Rows padded to 22 elements: not a multiple of 4, the fallback.
    check(
        &func,
        grid,
        vec![strided(&[m, n], &[22, 1], 0, m * 22), out()],
    );
    // Column-major x: the innermost stride is not 1.
    check(
        &func,
        grid,
        vec![strided(&[m, n], &[1, 13], 0, m * n), out()],
    );
}

#[test]
fn layernorm_with_vectorized_weights() {
    let func = samples::layernorm(2, 8).unwrap();
    let (rows, cols) = (5, 8);
    let args = vec![
        strided(&[rows, cols], &[8, 1], 0, rows * cols),
        strided(&[cols], &[1], 0, cols),
        strided(&[cols], &[1], 3, cols + 3),
        Arg::Tensor(HostTensor::from_vec(&[rows, cols], vec![0.0f32; rows * cols]).unwrap()),
        Arg::Scalar(Scalar::F32(1e-5)),
    ];
    check(&func, [3, 1, 1], args);
}
