//! The example kernels, lowered from Rust syntax, optimized, printed to the
//! embedded IR text and parsed back, compute the right results in the
//! reference interpreter, with partial edge tiles.

mod common;

use common::EXAMPLES;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{Function, Scalar};

/// The example's IR as the generated code embeds it, parsed back.
fn embedded(name: &str) -> Function {
    let (_, attr, src) = EXAMPLES
        .iter()
        .find(|e| e.0 == name)
        .expect("example exists");
    let item: syn::ItemFn = syn::parse_str(src).expect("example parses");
    let mut lowered =
        tile_frontend::translate_kernel(attr.parse().expect("attribute tokens"), &item)
            .expect("example lowers");
    let (_, mut f) = lowered.remove(0);
    tile_codegen::driver::optimize(&mut f).expect("passes run");
    tile_ir::text::parse_function(&f.to_string()).expect("embedded IR parses")
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 200) as f32 / 50.0
                - 2.0
        })
        .collect()
}

fn tensor(shape: &[usize], values: Vec<f32>) -> Arg {
    Arg::Tensor(HostTensor::from_vec(shape, values).expect("tensor"))
}

fn output(args: &[Arg], i: usize) -> Vec<f32> {
    match &args[i] {
        Arg::Tensor(t) => t.to_vec::<f32>().expect("f32 tensor"),
        _ => panic!("argument {i} is not a tensor"),
    }
}

fn close(got: &[f32], want: &[f32], name: &str) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
            "{name}: element {i} is {g}, expected {w}"
        );
    }
}

#[test]
fn vector_add_adds() {
    let n = 1500;
    let (x, y) = (data(n, 1), data(n, 2));
    let mut args = [
        tensor(&[n], x.clone()),
        tensor(&[n], y.clone()),
        tensor(&[n], vec![0.0; n]),
    ];
    interp::run(&embedded("vector_add"), [2, 1, 1], &mut args).expect("runs");
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    close(&output(&args, 2), &want, "vector_add");
}

fn softmax_ref(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = row.iter().map(|v| (v - m).exp()).collect();
        let s: f32 = e.iter().sum();
        out.extend(e.iter().map(|v| v / s));
    }
    out
}

#[test]
fn softmax_normalizes_rows() {
    let (rows, cols) = (5, 100);
    let x = data(rows * cols, 3);
    let mut args = [
        tensor(&[rows, cols], x.clone()),
        tensor(&[rows, cols], vec![0.0; rows * cols]),
    ];
    interp::run(&embedded("softmax"), [3, 1, 1], &mut args).expect("runs");
    close(&output(&args, 1), &softmax_ref(&x, rows, cols), "softmax");
}

#[test]
fn layernorm_normalizes_rows() {
    let (rows, cols) = (3, 100);
    let (x, w, b) = (data(rows * cols, 4), data(cols, 5), data(cols, 6));
    let eps = 1e-5f32;
    let mut args = [
        tensor(&[rows, cols], x.clone()),
        tensor(&[cols], w.clone()),
        tensor(&[cols], b.clone()),
        tensor(&[rows, cols], vec![0.0; rows * cols]),
        Arg::Scalar(Scalar::F32(eps)),
    ];
    interp::run(&embedded("layernorm"), [2, 1, 1], &mut args).expect("runs");
    let mut want = Vec::new();
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let mean = row.iter().sum::<f32>() / cols as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / cols as f32;
        let rstd = 1.0 / (var + eps).sqrt();
        want.extend(
            row.iter()
                .enumerate()
                .map(|(c, v)| (v - mean) * rstd * w[c] + b[c]),
        );
    }
    close(&output(&args, 3), &want, "layernorm");
}

#[test]
fn matmul_multiplies() {
    let (m, k, n) = (40, 20, 36);
    let (a, b) = (data(m * k, 7), data(k * n, 8));
    let mut args = [
        tensor(&[m, k], a.clone()),
        tensor(&[k, n], b.clone()),
        tensor(&[m, n], vec![0.0; m * n]),
    ];
    interp::run(&embedded("matmul"), [2, 2, 1], &mut args).expect("runs");
    let mut want = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    close(&output(&args, 2), &want, "matmul");
}

#[test]
fn transpose_transposes() {
    let (m, n) = (40, 20);
    let x = data(m * n, 9);
    let mut args = [
        tensor(&[m, n], x.clone()),
        tensor(&[n, m], vec![0.0; m * n]),
    ];
    interp::run(&embedded("transpose"), [2, 2, 1], &mut args).expect("runs");
    let want: Vec<f32> = (0..n * m).map(|idx| x[(idx % m) * n + idx / m]).collect();
    close(&output(&args, 1), &want, "transpose");
}
