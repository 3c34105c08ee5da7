//! `dot` for every operand dtype pair, and the matmul sample with partial
//! tiles, against sequential fused multiply-adds in plain Rust.

mod interp_support;

use half::{bf16, f16};
use interp_support::{map_kernel, run_map};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use tile_ir::f8::{F8E4M3, F8E5M2};
use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::{samples, DType, Scalar};

/// Random scalars of a float or i8 dtype, as `Scalar`s and as exact `f64`s.
fn random(rng: &mut SmallRng, dtype: DType, n: usize) -> Vec<Scalar> {
    (0..n)
        .map(|_| {
            let v: f64 = rng.gen_range(-3.0..3.0);
            match dtype {
                DType::F16 => Scalar::F16(f16::from_f64(v)),
                DType::BF16 => Scalar::BF16(bf16::from_f64(v)),
                DType::F8E4M3 => Scalar::F8E4M3(F8E4M3::from_f64(v)),
                DType::F8E5M2 => Scalar::F8E5M2(F8E5M2::from_f64(v)),
                DType::F32 => Scalar::F32(v as f32),
                DType::F64 => Scalar::F64(v),
                DType::I8 => Scalar::I8(rng.gen()),
                other => panic!("no dot operand of {other}"),
            }
        })
        .collect()
}

fn run_dot(
    m: usize,
    k: usize,
    n: usize,
    da: DType,
    db: DType,
    acc: DType,
    seed: u64,
) -> (Vec<Scalar>, Vec<Scalar>, Vec<Scalar>, Vec<Scalar>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let a = random(&mut rng, da, m * k);
    let b = random(&mut rng, db, k * n);
    let c = random(
        &mut rng,
        if acc == DType::I32 { DType::I8 } else { acc },
        m * n,
    )
    .into_iter()
    .map(|s| tile_ir::eval::cast(s, acc))
    .collect::<Vec<_>>();
    let kernel = map_kernel(&[(&[m, k], da), (&[k, n], db), (&[m, n], acc)], |bld, t| {
        bld.dot(t[0], t[1], t[2])
    });
    let inputs = vec![
        HostTensor::from_scalars(da, &[m, k], &a).unwrap(),
        HostTensor::from_scalars(db, &[k, n], &b).unwrap(),
        HostTensor::from_scalars(acc, &[m, n], &c).unwrap(),
    ];
    let out = run_map(&kernel, inputs).unwrap();
    (a, b, c, out.to_scalars())
}

#[test]
fn float_dot_is_sequential_fma_in_the_accumulator_dtype() {
    let pairs = [
        (DType::F16, DType::F16),
        (DType::BF16, DType::BF16),
        (DType::F8E4M3, DType::F8E4M3),
        (DType::F8E4M3, DType::F8E5M2),
        (DType::F8E5M2, DType::F8E4M3),
        (DType::F8E5M2, DType::F8E5M2),
        (DType::F32, DType::F32),
    ];
    let (m, k, n) = (3, 7, 5);
    for (seed, (da, db)) in pairs.into_iter().enumerate() {
        let (a, b, c, got) = run_dot(m, k, n, da, db, DType::F32, seed as u64);
        for row in 0..m {
            for col in 0..n {
                let mut acc = c[row * n + col].to_f64() as f32;
                for kk in 0..k {
                    let x = a[row * k + kk].to_f64() as f32;
                    let y = b[kk * n + col].to_f64() as f32;
                    acc = x.mul_add(y, acc);
                }
                assert_eq!(
                    got[row * n + col],
                    Scalar::F32(acc),
                    "{da}×{db} [{row}, {col}]"
                );
            }
        }
    }
}

#[test]
fn f64_dot_uses_f64_fma() {
    let (m, k, n) = (2, 9, 3);
    let (a, b, c, got) = run_dot(m, k, n, DType::F64, DType::F64, DType::F64, 50);
    for row in 0..m {
        for col in 0..n {
            let mut acc = c[row * n + col].to_f64();
            for kk in 0..k {
                acc = a[row * k + kk]
                    .to_f64()
                    .mul_add(b[kk * n + col].to_f64(), acc);
            }
            assert_eq!(got[row * n + col], Scalar::F64(acc));
        }
    }
}

#[test]
fn i8_dot_is_exact_wrapping_i32() {
    let (m, k, n) = (4, 16, 3);
    let (a, b, c, got) = run_dot(m, k, n, DType::I8, DType::I8, DType::I32, 51);
    let int = |s: Scalar| s.to_i128().unwrap() as i32;
    for row in 0..m {
        for col in 0..n {
            let mut acc = int(c[row * n + col]);
            for kk in 0..k {
                acc = acc.wrapping_add(int(a[row * k + kk]) * int(b[kk * n + col]));
            }
            assert_eq!(got[row * n + col], Scalar::I32(acc));
        }
    }
    // Accumulation wraps instead of failing.
    let kernel = map_kernel(
        &[
            (&[1, 2], DType::I8),
            (&[2, 1], DType::I8),
            (&[1, 1], DType::I32),
        ],
        |bld, t| bld.dot(t[0], t[1], t[2]),
    );
    let inputs = vec![
        HostTensor::from_vec(&[1, 2], vec![-128i8, -128]).unwrap(),
        HostTensor::from_vec(&[2, 1], vec![-128i8, -128]).unwrap(),
        HostTensor::from_vec(&[1, 1], vec![i32::MAX]).unwrap(),
    ];
    let out = run_map(&kernel, inputs).unwrap();
    assert_eq!(
        out.to_vec::<i32>().unwrap(),
        vec![i32::MAX.wrapping_add(32768)]
    );
}

#[test]
fn matmul_sample_with_partial_tiles_matches_sequential_fma() {
    let (m, k, n) = (10, 13, 7);
    let (bm, bn, bk) = (4, 3, 5);
    for (seed, dtype) in [DType::F32, DType::F16, DType::BF16, DType::F8E4M3]
        .into_iter()
        .enumerate()
    {
        let mut rng = SmallRng::seed_from_u64(60 + seed as u64);
        let a = random(&mut rng, dtype, m * k);
        let b = random(&mut rng, dtype, k * n);
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let mut args = vec![
            Arg::Tensor(HostTensor::from_scalars(dtype, &[m, k], &a).unwrap()),
            Arg::Tensor(HostTensor::from_scalars(dtype, &[k, n], &b).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[m, n])),
        ];
        run(
            &func,
            [m.div_ceil(bm) as u32, n.div_ceil(bn) as u32, 1],
            &mut args,
        )
        .unwrap();
        let Arg::Tensor(c) = &args[2] else {
            unreachable!()
        };
        let got = c.to_vec::<f32>().unwrap();
        for row in 0..m {
            for col in 0..n {
                let mut acc = 0f32;
                for kk in 0..k {
                    acc = (a[row * k + kk].to_f64() as f32)
                        .mul_add(b[kk * n + col].to_f64() as f32, acc);
                }
                assert_eq!(got[row * n + col], acc, "{dtype} [{row}, {col}]");
            }
        }
    }
}
