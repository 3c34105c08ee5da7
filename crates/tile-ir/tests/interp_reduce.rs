//! Reductions, arg-reductions, scans and folds by combine functions:
//! results and the sequential left-to-right order of accumulation, against
//! plain Rust folds.

mod interp_support;

use interp_support::{apply, f32_tensor, indices, linear, random_f32, random_i32};
use rand::{rngs::SmallRng, SeedableRng};
use tile_ir::interp::HostTensor;
use tile_ir::{ArgKind, ReduceKind, ScanKind};

/// The lanes of `shape` along `axis`: for each position of the other axes
/// (row-major), the row-major indices of the lane's elements in axis order.
fn lanes(shape: &[usize], axis: usize) -> Vec<Vec<usize>> {
    let mut outer = shape.to_vec();
    outer[axis] = 1;
    indices(&outer)
        .iter()
        .map(|o| {
            (0..shape[axis])
                .map(|k| {
                    let mut i = o.clone();
                    i[axis] = k;
                    linear(&i, shape)
                })
                .collect()
        })
        .collect()
}

fn reduced_shape(shape: &[usize], axis: usize, keepdim: bool) -> Vec<usize> {
    let mut s = shape.to_vec();
    if keepdim {
        s[axis] = 1;
    } else {
        s.remove(axis);
    }
    if s.is_empty() {
        vec![1] // a scalar result is stored as [1]
    } else {
        s
    }
}

#[test]
fn f32_reductions_fold_sequentially_left_to_right() {
    let shape = [3, 5, 4];
    let mut rng = SmallRng::seed_from_u64(40);
    // Mixed magnitudes make the order of a float sum observable.
    let v: Vec<f32> = random_f32(&mut rng, 60)
        .iter()
        .enumerate()
        .map(|(i, x)| x * 10f32.powi((i % 7) as i32 - 3))
        .collect();
    let x = f32_tensor(&shape, v.clone());
    type Fold = fn(f32, f32) -> f32;
    let kinds: [(ReduceKind, Fold); 4] = [
        (ReduceKind::Sum, |a, b| a + b),
        (ReduceKind::Prod, |a, b| a * b),
        (ReduceKind::Max, f32::max),
        (ReduceKind::Min, f32::min),
    ];
    for axis in 0..3 {
        for keepdim in [false, true] {
            for (kind, f) in kinds {
                let out = apply(&x, |b, t| b.reduce(kind, t, axis, keepdim));
                assert_eq!(out.shape(), reduced_shape(&shape, axis, keepdim).as_slice());
                let want: Vec<f32> = lanes(&shape, axis)
                    .iter()
                    .map(|lane| lane[1..].iter().fold(v[lane[0]], |acc, &i| f(acc, v[i])))
                    .collect();
                assert_eq!(
                    out.to_vec::<f32>().unwrap(),
                    want,
                    "{kind} axis {axis} keepdim {keepdim}"
                );
            }
        }
    }
}

#[test]
fn a_sum_is_not_reassociated() {
    // (1e8 + 1) - 1e8 = 0 in f32 left to right; any pairing of the last two
    // first would give 1.
    let x = f32_tensor(&[3], vec![1e8, 1.0, -1e8]);
    let out = apply(&x, |b, t| b.reduce(ReduceKind::Sum, t, 0, false));
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![0.0]);
    // A lone -0.0 stays -0.0 (no +0.0 identity is added).
    let x = f32_tensor(&[1], vec![-0.0]);
    let out = apply(&x, |b, t| b.reduce(ReduceKind::Sum, t, 0, true));
    assert_eq!(
        out.to_vec::<f32>().unwrap()[0].to_bits(),
        (-0.0f32).to_bits()
    );
}

#[test]
fn narrow_float_sums_round_to_the_dtype_at_every_step() {
    // In f16, 2048 + 1 is a tie that rounds back to 2048, so adding 1 twice
    // leaves 2048; accumulating in f32 and rounding at the end would give 2050.
    let x = HostTensor::from_vec(
        &[3],
        vec![half::f16::from_f32(2048.0), half::f16::ONE, half::f16::ONE],
    )
    .unwrap();
    let out = apply(&x, |b, t| b.reduce(ReduceKind::Sum, t, 0, false));
    assert_eq!(
        out.to_vec::<half::f16>().unwrap(),
        vec![half::f16::from_f32(2048.0)]
    );
    let out = apply(&x, |b, t| b.scan(ScanKind::CumSum, t, 0));
    assert_eq!(
        out.to_vec::<half::f16>().unwrap(),
        vec![half::f16::from_f32(2048.0); 3]
    );
}

#[test]
fn integer_reductions_wrap() {
    let x = HostTensor::from_vec(&[2, 3], vec![i32::MAX, 1, 1, -5, 7, 2]).unwrap();
    let out = apply(&x, |b, t| b.reduce(ReduceKind::Sum, t, 1, false));
    assert_eq!(out.to_vec::<i32>().unwrap(), vec![i32::MIN + 1, 4]);
    let out = apply(&x, |b, t| b.reduce(ReduceKind::Min, t, 0, true));
    assert_eq!(out.to_vec::<i32>().unwrap(), vec![-5, 1, 1]);
}

#[test]
fn max_and_min_reductions_propagate_nan() {
    let x = f32_tensor(&[4], vec![1.0, f32::NAN, 3.0, -1.0]);
    for kind in [ReduceKind::Max, ReduceKind::Min, ReduceKind::Sum] {
        let out = apply(&x, |b, t| b.reduce(kind, t, 0, false));
        assert!(out.to_vec::<f32>().unwrap()[0].is_nan(), "{kind}");
    }
}

#[test]
fn arg_reductions_give_the_first_extreme_index() {
    let shape = [4, 6];
    let mut rng = SmallRng::seed_from_u64(41);
    // Few distinct values, so ties are common.
    let v: Vec<i32> = random_i32(&mut rng, 24).iter().map(|x| x % 4).collect();
    let x = HostTensor::from_vec(&shape, v.clone()).unwrap();
    for axis in 0..2 {
        for keepdim in [false, true] {
            for kind in [ArgKind::ArgMax, ArgKind::ArgMin] {
                let out = apply(&x, |b, t| b.arg_reduce(kind, t, axis, keepdim));
                assert_eq!(out.shape(), reduced_shape(&shape, axis, keepdim).as_slice());
                let want: Vec<i32> = lanes(&shape, axis)
                    .iter()
                    .map(|lane| {
                        let values: Vec<i32> = lane.iter().map(|&i| v[i]).collect();
                        let best = match kind {
                            ArgKind::ArgMax => *values.iter().max().unwrap(),
                            ArgKind::ArgMin => *values.iter().min().unwrap(),
                        };
                        values.iter().position(|&x| x == best).unwrap() as i32
                    })
                    .collect();
                assert_eq!(out.to_vec::<i32>().unwrap(), want, "{kind} axis {axis}");
            }
        }
    }
}

#[test]
fn arg_reductions_treat_nan_as_the_extreme_and_order_signed_zeros() {
    let x = f32_tensor(&[5], vec![1.0, 5.0, f32::NAN, 7.0, f32::NAN]);
    for kind in [ArgKind::ArgMax, ArgKind::ArgMin] {
        let out = apply(&x, |b, t| b.arg_reduce(kind, t, 0, false));
        assert_eq!(out.to_vec::<i32>().unwrap(), vec![2], "{kind}");
    }
    let x = f32_tensor(&[3], vec![0.0, -0.0, 0.0]);
    let max = apply(&x, |b, t| b.arg_reduce(ArgKind::ArgMax, t, 0, false));
    let min = apply(&x, |b, t| b.arg_reduce(ArgKind::ArgMin, t, 0, false));
    assert_eq!(max.to_vec::<i32>().unwrap(), vec![0]);
    assert_eq!(min.to_vec::<i32>().unwrap(), vec![1]);
}

#[test]
fn scans_are_inclusive_and_sequential() {
    let shape = [3, 4];
    let mut rng = SmallRng::seed_from_u64(42);
    let v = random_f32(&mut rng, 12);
    let x = f32_tensor(&shape, v.clone());
    for axis in 0..2 {
        for kind in [ScanKind::CumSum, ScanKind::CumProd] {
            let out = apply(&x, |b, t| b.scan(kind, t, axis));
            let mut want = v.clone();
            for lane in lanes(&shape, axis) {
                for k in 1..lane.len() {
                    want[lane[k]] = match kind {
                        ScanKind::CumSum => want[lane[k - 1]] + v[lane[k]],
                        ScanKind::CumProd => want[lane[k - 1]] * v[lane[k]],
                    };
                }
            }
            assert_eq!(out.to_vec::<f32>().unwrap(), want, "{kind} axis {axis}");
        }
    }
    let x = HostTensor::from_vec(&[4], vec![1u8, 200, 100, 3]).unwrap();
    let out = apply(&x, |b, t| b.scan(ScanKind::CumSum, t, 0));
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![1, 201, 45, 48]);
}

/// `reduce_with` and `scan_with` of a `[2, 3]` tile with `acc · 10 + x`
/// (neither associative nor commutative: the digits show the order), a
/// two-tile fold, and a rank-1 fold to a scalar.
#[test]
fn combine_functions_fold_left_to_right() {
    use tile_ir::builder::{BuildError, Builder};
    use tile_ir::interp::{run, Arg};
    use tile_ir::{BinaryOp, DType, Scalar, UnaryOp, Value};
    let digits = |b: &mut Builder, acc: Value, next: Value| -> Result<Value, BuildError> {
        let ten = b.constant(Scalar::I64(10))?;
        let shifted = b.binary(BinaryOp::Mul, acc, ten)?;
        b.binary(BinaryOp::Add, shifted, next)
    };
    let mut b = Builder::new("digits");
    let x = b.param("x", interp_support::tensor_ty(DType::I64, 2));
    let outs: Vec<(Value, Vec<usize>)> = [
        ("rows", vec![2, 1]),
        ("scanned", vec![2, 3]),
        ("columns", vec![1, 3]),
        ("differences", vec![1, 3]),
        ("all", vec![1]),
    ]
    .into_iter()
    .map(|(name, shape)| {
        (
            b.param(name, interp_support::tensor_ty(DType::I64, shape.len())),
            shape,
        )
    })
    .collect();
    let zero = b.constant(Scalar::I32(0)).unwrap();
    let vx = b.partition_view(x, &[2, 3]).unwrap();
    let t = b.load(vx, &[zero, zero]).unwrap();
    let negated = b.unary(UnaryOp::Neg, t).unwrap();
    let flat = b.reshape(t, &[6]).unwrap();
    let mut results = Vec::new();
    results.extend(
        b.combine(&[t], 1, Some(true), |b, a, n| {
            Ok(vec![digits(b, a[0], n[0])?])
        })
        .unwrap(),
    );
    results.extend(
        b.combine(&[t], 1, None, |b, a, n| Ok(vec![digits(b, a[0], n[0])?]))
            .unwrap(),
    );
    results.extend(
        b.combine(&[t, negated], 0, Some(true), |b, a, n| {
            Ok(vec![
                digits(b, a[0], n[0])?,
                b.binary(BinaryOp::Sub, a[1], n[1])?,
            ])
        })
        .unwrap(),
    );
    let all = b
        .combine(&[flat], 0, Some(false), |b, a, n| {
            Ok(vec![digits(b, a[0], n[0])?])
        })
        .unwrap()[0];
    results.push(b.broadcast(all, &[1]).unwrap());
    for (result, (out, shape)) in results.into_iter().zip(&outs) {
        let v = b.partition_view(*out, shape).unwrap();
        let index = vec![zero; shape.len()];
        b.store(result, v, &index).unwrap();
    }
    let func = b.finish().unwrap();
    let mut args = vec![Arg::Tensor(
        HostTensor::from_vec(&[2, 3], vec![1i64, 2, 3, 4, 5, 6]).unwrap(),
    )];
    for (_, shape) in &outs {
        args.push(Arg::Tensor(HostTensor::zeros(DType::I64, shape)));
    }
    run(&func, [1, 1, 1], &mut args).unwrap();
    let got: Vec<Vec<i64>> = args[1..]
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.to_vec::<i64>().unwrap(),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(got[0], [123, 456]);
    assert_eq!(got[1], [1, 12, 123, 4, 45, 456]);
    assert_eq!(got[2], [14, 25, 36]);
    assert_eq!(got[3], [3, 3, 3]);
    assert_eq!(got[4], [123456]);
}
