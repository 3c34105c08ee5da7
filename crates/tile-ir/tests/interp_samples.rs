//! The sample kernels through the interpreter against plain Rust, on random
//! inputs whose shapes leave partial edge tiles, with tile shapes that are
//! not powers of two; and the pass pipeline preserving every result bit.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::passes::PassManager;
use tile_ir::{samples, DType, Function, Scalar};

fn random(rng: &mut SmallRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.gen_range(-4.0f32..4.0)).collect()
}

fn tensor(shape: &[usize], data: Vec<f32>) -> Arg {
    Arg::Tensor(HostTensor::from_vec(shape, data).unwrap())
}

fn output(args: &[Arg], index: usize) -> Vec<f32> {
    match &args[index] {
        Arg::Tensor(t) => t.to_vec::<f32>().unwrap(),
        _ => panic!("argument {index} is not a tensor"),
    }
}

/// Runs `func` as is and after the default pipeline; both must agree bit for
/// bit. Returns the arguments after the unoptimized run.
fn run_both(func: &Function, grid: [u32; 3], args: Vec<Arg>) -> Vec<Arg> {
    let mut plain = args.clone();
    run(func, grid, &mut plain).unwrap();
    let mut optimized_func = func.clone();
    PassManager::default_pipeline()
        .run(&mut optimized_func, |_, _| {})
        .unwrap();
    let mut optimized = args;
    run(&optimized_func, grid, &mut optimized).unwrap();
    assert_eq!(
        plain, optimized,
        "the pass pipeline changed a result of {}",
        func.name
    );
    plain
}

fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

fn grid_of(n: usize, block: usize) -> u32 {
    n.div_ceil(block) as u32
}

#[test]
fn vector_add_with_partial_edge_tiles() {
    let mut rng = SmallRng::seed_from_u64(1);
    for (n, block) in [(1000, 128), (7, 3), (129, 64), (5, 16)] {
        let (x, y) = (random(&mut rng, n), random(&mut rng, n));
        let args = vec![
            tensor(&[n], x.clone()),
            tensor(&[n], y.clone()),
            tensor(&[n], vec![0.0; n]),
        ];
        let func = samples::vector_add(block).unwrap();
        let args = run_both(&func, [grid_of(n, block), 1, 1], args);
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        assert_eq!(output(&args, 2), want, "n={n} block={block}");
    }
}

#[test]
fn softmax_rows_with_partial_tiles() {
    let mut rng = SmallRng::seed_from_u64(2);
    for (rows, cols, br, bc) in [(10, 13, 3, 16), (4, 100, 4, 100), (5, 1, 2, 3)] {
        let x = random(&mut rng, rows * cols);
        let args = vec![
            tensor(&[rows, cols], x.clone()),
            tensor(&[rows, cols], vec![0.0; rows * cols]),
        ];
        let func = samples::softmax(br, bc).unwrap();
        let args = run_both(&func, [grid_of(rows, br), 1, 1], args);
        let mut want = Vec::new();
        for row in x.chunks(cols) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = row.iter().map(|v| (v - max).exp()).collect();
            let sum: f32 = e.iter().sum();
            want.extend(e.iter().map(|v| v / sum));
        }
        assert_close(&output(&args, 1), &want, 1e-6, "softmax");
    }
}

#[test]
fn layernorm_rows_with_partial_tiles() {
    let mut rng = SmallRng::seed_from_u64(3);
    for (rows, cols, br, bc) in [(9, 20, 4, 24), (3, 7, 3, 7), (6, 33, 5, 40)] {
        let x = random(&mut rng, rows * cols);
        let (w, b) = (random(&mut rng, cols), random(&mut rng, cols));
        let eps = 1e-5f32;
        let args = vec![
            tensor(&[rows, cols], x.clone()),
            tensor(&[cols], w.clone()),
            tensor(&[cols], b.clone()),
            tensor(&[rows, cols], vec![0.0; rows * cols]),
            Arg::Scalar(Scalar::F32(eps)),
        ];
        let func = samples::layernorm(br, bc).unwrap();
        let args = run_both(&func, [grid_of(rows, br), 1, 1], args);
        let mut want = Vec::new();
        for row in x.chunks(cols) {
            let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / cols as f64;
            let var = row
                .iter()
                .map(|&v| (f64::from(v) - mean).powi(2))
                .sum::<f64>()
                / cols as f64;
            let rstd = 1.0 / (var + f64::from(eps)).sqrt();
            for (j, &v) in row.iter().enumerate() {
                want.push(
                    ((f64::from(v) - mean) * rstd * f64::from(w[j]) + f64::from(b[j])) as f32,
                );
            }
        }
        assert_close(&output(&args, 3), &want, 1e-5, "layernorm");
    }
}

#[test]
fn matmul_f32_equals_sequential_fma_bit_for_bit() {
    let mut rng = SmallRng::seed_from_u64(4);
    for (m, n, k, bm, bn, bk) in [
        (10, 7, 13, 4, 3, 5),
        (16, 16, 16, 8, 8, 8),
        (3, 5, 2, 4, 4, 4),
    ] {
        let (a, b) = (random(&mut rng, m * k), random(&mut rng, k * n));
        let args = vec![
            tensor(&[m, k], a.clone()),
            tensor(&[k, n], b.clone()),
            tensor(&[m, n], vec![0.0; m * n]),
        ];
        let func = samples::matmul(bm, bn, bk, DType::F32).unwrap();
        let args = run_both(&func, [grid_of(m, bm), grid_of(n, bn), 1], args);
        let mut want = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for kk in 0..k {
                    acc = a[i * k + kk].mul_add(b[kk * n + j], acc);
                }
                want[i * n + j] = acc;
            }
        }
        assert_eq!(
            output(&args, 2),
            want,
            "{m}x{n}x{k} in {bm}x{bn}x{bk} tiles"
        );
    }
}

#[test]
fn matmul_f16_operands_accumulate_in_f32() {
    let mut rng = SmallRng::seed_from_u64(5);
    let (m, n, k) = (9, 6, 11);
    let a: Vec<half::f16> = random(&mut rng, m * k)
        .into_iter()
        .map(half::f16::from_f32)
        .collect();
    let b: Vec<half::f16> = random(&mut rng, k * n)
        .into_iter()
        .map(half::f16::from_f32)
        .collect();
    let args = vec![
        Arg::Tensor(HostTensor::from_vec(&[m, k], a.clone()).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[k, n], b.clone()).unwrap()),
        tensor(&[m, n], vec![0.0; m * n]),
    ];
    let func = samples::matmul(4, 4, 4, DType::F16).unwrap();
    let args = run_both(&func, [3, 2, 1], args);
    let mut want = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc = a[i * k + kk].to_f32().mul_add(b[kk * n + j].to_f32(), acc);
            }
            want[i * n + j] = acc;
        }
    }
    assert_eq!(output(&args, 2), want);
}

#[test]
fn transpose_with_partial_tiles() {
    let mut rng = SmallRng::seed_from_u64(6);
    for (m, n, bm, bn) in [(10, 13, 4, 3), (7, 7, 8, 8), (1, 9, 1, 5)] {
        let x = random(&mut rng, m * n);
        let args = vec![
            tensor(&[m, n], x.clone()),
            tensor(&[n, m], vec![0.0; m * n]),
        ];
        let func = samples::transpose(bm, bn).unwrap();
        let args = run_both(&func, [grid_of(m, bm), grid_of(n, bn), 1], args);
        let mut want = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                want[j * m + i] = x[i * n + j];
            }
        }
        assert_eq!(output(&args, 1), want);
    }
}
