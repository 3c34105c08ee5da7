//! `dot_scaled` against plain Rust (each element times its group's scale,
//! rounded once to the compute dtype, then sequential `f32` fused
//! multiply-adds), the `expand-scaled-dots` rewrite against the op, and
//! the op's typing errors.

mod interp_support;

use interp_support::{map_kernel, run_map, MapKernel};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use tile_ir::interp::HostTensor;
use tile_ir::passes::PassManager;
use tile_ir::{DType, Scalar};

/// One side of a product: its element dtype and its scales' dtype, if any.
#[derive(Clone, Copy)]
struct Side {
    dtype: DType,
    scale: Option<DType>,
}

const fn side(dtype: DType, scale: Option<DType>) -> Side {
    Side { dtype, scale }
}

/// The format pairs tried: OCP MX of each element format, NVFP4, and the
/// mixed products with an unscaled `bf16` or `f16` side.
const PAIRS: [(Side, Side); 7] = [
    (
        side(DType::F4E2M1, Some(DType::F8E8M0)),
        side(DType::F4E2M1, Some(DType::F8E8M0)),
    ),
    (
        side(DType::F8E4M3, Some(DType::F8E8M0)),
        side(DType::F8E5M2, Some(DType::F8E8M0)),
    ),
    (
        side(DType::F6E2M3, Some(DType::F8E8M0)),
        side(DType::F6E3M2, Some(DType::F8E8M0)),
    ),
    (
        side(DType::F4E2M1, Some(DType::F8E4M3)),
        side(DType::F4E2M1, Some(DType::F8E4M3)),
    ),
    (
        side(DType::BF16, None),
        side(DType::F4E2M1, Some(DType::F8E8M0)),
    ),
    (
        side(DType::F8E5M2, Some(DType::F8E8M0)),
        side(DType::F16, None),
    ),
    (side(DType::BF16, None), side(DType::BF16, None)),
];

/// The elements of a scale dtype's group.
fn group(scale: DType) -> usize {
    tile_ir::scaled::scale_group(scale).unwrap()
}

/// `n` random values of `dtype`: every bit pattern of the narrow formats
/// (the scales' NaN and extremes among them), moderate values of the
/// 16-bit ones.
fn random(rng: &mut SmallRng, dtype: DType, n: usize) -> Vec<Scalar> {
    (0..n)
        .map(|_| match dtype {
            DType::BF16 | DType::F16 | DType::F32 => {
                tile_ir::eval::cast(Scalar::F64(rng.gen_range(-4.0..4.0)), dtype)
            }
            _ => Scalar::from_bits(dtype, u64::from(rng.gen::<u8>())),
        })
        .collect()
}

/// A product's operands: `a: [m, k]`, its scales `[m, k / G]`, `b: [k, n]`,
/// its scales `[n, k / G]`, `c: [m, n]` of `f32`.
struct Problem {
    sides: (Side, Side),
    dims: (usize, usize, usize),
    a: Vec<Scalar>,
    a_scale: Vec<Scalar>,
    b: Vec<Scalar>,
    b_scale: Vec<Scalar>,
    c: Vec<Scalar>,
}

impl Problem {
    fn random((a, b): (Side, Side), (m, k, n): (usize, usize, usize), seed: u64) -> Problem {
        let mut rng = SmallRng::seed_from_u64(seed);
        let scales = |rng: &mut SmallRng, s: Side, rows: usize| match s.scale {
            Some(d) => random(rng, d, rows * k / group(d)),
            None => Vec::new(),
        };
        Problem {
            sides: (a, b),
            dims: (m, k, n),
            a: random(&mut rng, a.dtype, m * k),
            a_scale: scales(&mut rng, a, m),
            b: random(&mut rng, b.dtype, k * n),
            b_scale: scales(&mut rng, b, n),
            c: random(&mut rng, DType::F32, m * n),
        }
    }

    /// The kernel: the inputs in the op's order, then the output.
    fn kernel(&self) -> MapKernel {
        let (m, k, n) = self.dims;
        let (sa, sb) = self.sides;
        let mut inputs: Vec<(Vec<usize>, DType)> = vec![(vec![m, k], sa.dtype)];
        inputs.extend(sa.scale.map(|d| (vec![m, k / group(d)], d)));
        inputs.push((vec![k, n], sb.dtype));
        inputs.extend(sb.scale.map(|d| (vec![n, k / group(d)], d)));
        inputs.push((vec![m, n], DType::F32));
        let shapes: Vec<(&[usize], DType)> = inputs.iter().map(|(s, d)| (&s[..], *d)).collect();
        map_kernel(&shapes, |bld, t| {
            let a_scale = sa.scale.map(|_| t[1]);
            let b_at = 1 + usize::from(a_scale.is_some());
            let b_scale = sb.scale.map(|_| t[b_at + 1]);
            bld.dot_scaled((t[0], a_scale), (t[b_at], b_scale), t[t.len() - 1])
        })
    }

    fn inputs(&self) -> Vec<HostTensor> {
        let (m, k, n) = self.dims;
        let (sa, sb) = self.sides;
        let mut inputs = vec![HostTensor::from_scalars(sa.dtype, &[m, k], &self.a).unwrap()];
        if let Some(d) = sa.scale {
            inputs.push(HostTensor::from_scalars(d, &[m, k / group(d)], &self.a_scale).unwrap());
        }
        inputs.push(HostTensor::from_scalars(sb.dtype, &[k, n], &self.b).unwrap());
        if let Some(d) = sb.scale {
            inputs.push(HostTensor::from_scalars(d, &[n, k / group(d)], &self.b_scale).unwrap());
        }
        inputs.push(HostTensor::from_scalars(DType::F32, &[m, n], &self.c).unwrap());
        inputs
    }

    /// The definition in plain Rust.
    fn expected(&self) -> Vec<f32> {
        let (m, k, n) = self.dims;
        let (sa, sb) = self.sides;
        let f16_side = sa.dtype == DType::F16 || sb.dtype == DType::F16;
        let round = |x: f64| -> f32 {
            if f16_side {
                half::f16::from_f64(x).to_f32()
            } else {
                half::bf16::from_f64(x).to_f32()
            }
        };
        let scaled = |x: Scalar, scale: Option<Scalar>| {
            round(x.to_f64() * scale.map_or(1.0, Scalar::to_f64))
        };
        let a_scale = |r: usize, kk: usize| {
            sa.scale
                .map(|d| self.a_scale[r * (k / group(d)) + kk / group(d)])
        };
        let b_scale = |col: usize, kk: usize| {
            sb.scale
                .map(|d| self.b_scale[col * (k / group(d)) + kk / group(d)])
        };
        let mut out = Vec::with_capacity(m * n);
        for r in 0..m {
            for col in 0..n {
                let mut acc = self.c[r * n + col].to_f64() as f32;
                for kk in 0..k {
                    let x = scaled(self.a[r * k + kk], a_scale(r, kk));
                    let y = scaled(self.b[kk * n + col], b_scale(col, kk));
                    acc = x.mul_add(y, acc);
                }
                out.push(acc);
            }
        }
        out
    }
}

#[test]
fn dot_scaled_rounds_each_scaled_element_once_then_sums_in_order() {
    for (seed, &sides) in PAIRS.iter().enumerate() {
        let p = Problem::random(sides, (3, 64, 5), seed as u64);
        let got = run_map(&p.kernel(), p.inputs()).unwrap().to_scalars();
        for (i, (g, want)) in got.iter().zip(p.expected()).enumerate() {
            let g = g.to_f64() as f32;
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "pair {seed}, element {i}: {g} against {want}"
            );
        }
    }
}

#[test]
fn the_expansion_computes_what_the_op_does_bit_for_bit() {
    for (seed, &sides) in PAIRS.iter().enumerate() {
        let p = Problem::random(sides, (4, 96, 3), 100 + seed as u64);
        let kernel = p.kernel();
        let mut expanded = MapKernel {
            func: kernel.func.clone(),
            out_shape: kernel.out_shape.clone(),
            out_dtype: kernel.out_dtype,
        };
        let mut pm = PassManager::new();
        pm.add("expand-scaled-dots").unwrap();
        pm.run(&mut expanded.func, |_, _| {}).unwrap();
        let text = expanded.func.to_string();
        assert!(
            !text.contains("dot_scaled") && text.contains("dot tensor"),
            "{text}"
        );
        let direct = run_map(&kernel, p.inputs()).unwrap().to_scalars();
        let rewritten = run_map(&expanded, p.inputs()).unwrap().to_scalars();
        let bits = |v: &[Scalar]| v.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&direct), bits(&rewritten), "pair {seed}");
    }
}
