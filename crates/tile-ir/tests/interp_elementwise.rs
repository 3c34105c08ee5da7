//! Elementwise ops through the interpreter, and the softmax, layernorm and
//! transpose samples against plain Rust.

mod interp_support;

use half::f16;
use interp_support::{apply, f32_tensor, map_kernel, random_f32, run_map};
use rand::{rngs::SmallRng, SeedableRng};
use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::{eval, samples, BinaryOp, CmpPred, DType, Scalar, UnaryOp};

#[test]
fn tile_ops_apply_eval_to_every_element() {
    let mut rng = SmallRng::seed_from_u64(70);
    let (a, b, c) = (
        random_f32(&mut rng, 12),
        random_f32(&mut rng, 12),
        random_f32(&mut rng, 12),
    );
    let shape = [3, 4];
    let tensors = vec![
        f32_tensor(&shape, a.clone()),
        f32_tensor(&shape, b.clone()),
        f32_tensor(&shape, c.clone()),
    ];
    let s = |v: f32| Scalar::F32(v);
    let inputs = [(&shape[..], DType::F32); 3];

    let kernel = map_kernel(&inputs, |bld, t| {
        let lt = bld.cmp(CmpPred::Lt, t[0], t[1])?;
        let fma = bld.fma(t[0], t[1], t[2])?;
        let div = bld.binary(BinaryOp::Div, t[0], t[2])?;
        bld.select(lt, fma, div)
    });
    let out = run_map(&kernel, tensors.clone()).unwrap().to_scalars();
    for i in 0..12 {
        let want = if a[i] < b[i] {
            eval::fma(s(a[i]), s(b[i]), s(c[i])).unwrap()
        } else {
            eval::binary(BinaryOp::Div, s(a[i]), s(c[i])).unwrap()
        };
        assert_eq!(out[i], want);
    }

    let kernel = map_kernel(&inputs[..1], |bld, t| {
        let h = bld.cast(t[0], DType::F16)?;
        let e = bld.unary(UnaryOp::Exp, h)?;
        bld.unary(UnaryOp::Tanh, e)
    });
    let out = run_map(&kernel, tensors[..1].to_vec())
        .unwrap()
        .to_vec::<f16>()
        .unwrap();
    for i in 0..12 {
        let h = eval::cast(s(a[i]), DType::F16);
        let want = eval::unary(UnaryOp::Tanh, eval::unary(UnaryOp::Exp, h).unwrap()).unwrap();
        assert_eq!(Scalar::F16(out[i]), want);
    }
}

#[test]
fn scalar_ops_compute_on_scalars() {
    let x = f32_tensor(&[1], vec![0.0]);
    let out = apply(&x, |b, _| {
        let seven = b.constant(Scalar::I32(7))?;
        let minus_two = b.constant(Scalar::I32(-2))?;
        let q = b.binary(BinaryOp::Div, seven, minus_two)?;
        let r = b.binary(BinaryOp::Rem, seven, minus_two)?;
        let sum = b.binary(BinaryOp::Shl, q, r)?;
        b.cast(sum, DType::F32)
    });
    // 7 / -2 = -3, 7 % -2 = 1, -3 << 1 = -6.
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![-6.0]);
}

#[test]
fn transpose_sample_transposes_with_partial_tiles() {
    let (m, n) = (11, 6);
    let mut rng = SmallRng::seed_from_u64(71);
    let x = random_f32(&mut rng, m * n);
    let func = samples::transpose(4, 4).unwrap();
    let mut args = vec![
        Arg::Tensor(f32_tensor(&[m, n], x.clone())),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[n, m])),
    ];
    run(&func, [3, 2, 1], &mut args).unwrap();
    let Arg::Tensor(out) = &args[1] else {
        unreachable!()
    };
    let want: Vec<f32> = (0..n * m).map(|k| x[(k % m) * n + k / m]).collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn softmax_sample_matches_rust() {
    let (rows, cols) = (5, 7);
    let mut rng = SmallRng::seed_from_u64(72);
    let x = random_f32(&mut rng, rows * cols);
    let func = samples::softmax(2, 8).unwrap();
    let mut args = vec![
        Arg::Tensor(f32_tensor(&[rows, cols], x.clone())),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[rows, cols])),
    ];
    run(&func, [3, 1, 1], &mut args).unwrap();
    let Arg::Tensor(out) = &args[1] else {
        unreachable!()
    };
    let got = out.to_vec::<f32>().unwrap();
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = row
            .iter()
            .map(|v| (f64::from(v - max).exp()) as f32)
            .collect();
        let total = e.iter().fold(0.0f32, |acc, v| acc + v);
        for c in 0..cols {
            let want = e[c] / total;
            assert!(
                (got[r * cols + c] - want).abs() <= 2.0 * f32::EPSILON * want,
                "[{r}, {c}]"
            );
        }
    }
}

#[test]
fn layernorm_sample_matches_rust() {
    let (rows, cols) = (3, 10);
    let mut rng = SmallRng::seed_from_u64(73);
    let x = random_f32(&mut rng, rows * cols);
    let w = random_f32(&mut rng, cols);
    let bias = random_f32(&mut rng, cols);
    let eps = 1e-5f32;
    let func = samples::layernorm(2, 16).unwrap();
    let mut args = vec![
        Arg::Tensor(f32_tensor(&[rows, cols], x.clone())),
        Arg::Tensor(f32_tensor(&[cols], w.clone())),
        Arg::Tensor(f32_tensor(&[cols], bias.clone())),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[rows, cols])),
        Arg::Scalar(Scalar::F32(eps)),
    ];
    run(&func, [2, 1, 1], &mut args).unwrap();
    let Arg::Tensor(out) = &args[3] else {
        unreachable!()
    };
    let got = out.to_vec::<f32>().unwrap();
    for r in 0..rows {
        let row: Vec<f64> = x[r * cols..(r + 1) * cols]
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
        for c in 0..cols {
            let want = (row[c] - mean) / (var + f64::from(eps)).sqrt() * f64::from(w[c])
                + f64::from(bias[c]);
            assert!(
                (f64::from(got[r * cols + c]) - want).abs() < 1e-5,
                "[{r}, {c}]"
            );
        }
    }
}
