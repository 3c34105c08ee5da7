//! The memory-bound benchmarks: vector add, row softmax and layer norm in
//! f32, each a whole row (or a long run of elements) per program instance,
//! at the block sizes the autotuner chooses among.

use super::{Bench, Case, Inputs, Problem};
use tile::autotune::Candidate;
use tile::{tile_kernel, Device, Error, LaunchArg};

/// The targets of the benchmark kernels: Ampere's PTX (which the driver
/// also compiles for Ada), Hopper's, and CDNA3's.
#[tile_kernel(
    targets = "sm_80,sm_90a,gfx942",
    aligned(x, y, out),
    configs(B = 1024),
    configs(B = 4096),
    configs(B = 8192)
)]
pub fn vector_add<const B: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let (px, py) = (partition_view(x, [B]), partition_view(y, [B]));
    partition_view(out, [B]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
}

/// Row softmax, `R` rows of at most `C` columns per program instance.
#[tile_kernel(
    targets = "sm_80,sm_90a,gfx942",
    aligned(x, out),
    fast_math,
    configs(R = 1, C = 1024),
    configs(R = 2, C = 1024),
    configs(R = 4, C = 1024)
)]
pub fn softmax<const R: usize, const C: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid = program_id(0);
    let t = partition_view(x, [R, C]).load_masked_with(Padding::NegInf, pid, 0);
    let e = (t - t.max_along_keepdim(1)).exp();
    partition_view(out, [R, C]).store_masked(e / e.sum_keepdim(1), pid, 0);
}

/// Layer norm forward, `R` rows of at most `C` columns per program instance.
#[tile_kernel(
    targets = "sm_80,sm_90a,gfx942",
    aligned(x, out),
    fast_math,
    configs(R = 1, C = 1024),
    configs(R = 2, C = 1024),
    configs(R = 4, C = 1024)
)]
pub fn layernorm<const R: usize, const C: usize>(
    x: &Tensor<f32, 2>,
    w: &Tensor<f32>,
    bias: &Tensor<f32>,
    out: &mut Tensor<f32, 2>,
    eps: f32,
) {
    let pid = program_id(0);
    let cols = x.dim(1);
    let n = cols.cast::<f32>();
    let t = partition_view(x, [R, C]).load_masked(pid, 0);
    let mean = t.sum_keepdim(1) / n;
    let inside = iota::<i32>([C]).broadcast_to([R, C]) < cols;
    let centered = select(inside, t - mean, zeros::<f32>([R, C]));
    let rstd = ((centered * centered).sum_keepdim(1) / n + eps).rsqrt();
    let wt = partition_view(w, [C]).load_masked(0);
    let bt = partition_view(bias, [C]).load_masked(0);
    partition_view(out, [R, C]).store_masked(fma(centered * rstd, wt, bt), pid, 0);
}

/// Vector add of `n` f32 elements: 12 bytes moved per element.
pub fn vector_add_bench(dev: &Device, n: usize) -> Result<Option<Bench>, Error> {
    let mut rng = Inputs::default();
    let (xs, ys) = (rng.take(n), rng.take(n));
    let x = dev.tensor_from_slice(&xs, &[n])?;
    let y = dev.tensor_from_slice(&ys, &[n])?;
    let mut out = dev.zeros::<f32>(&[n])?;
    let grid = |b: usize| [n.div_ceil(b) as u32, 1, 1];
    let candidates = [
        Candidate {
            spec: vector_add::<1024>::kernel_spec(),
            grid: grid(1024),
        },
        Candidate {
            spec: vector_add::<4096>::kernel_spec(),
            grid: grid(4096),
        },
        Candidate {
            spec: vector_add::<8192>::kernel_spec(),
            grid: grid(8192),
        },
    ];
    let case = Case {
        name: "vector add f32".into(),
        kind: "vector_add",
        params: vec![("n", n)],
        problem: Problem::Bytes(12.0 * n as f64),
    };
    let args: Vec<LaunchArg<'_>> = vec![(&x).into(), (&y).into(), (&mut out).into()];
    let Some(mut bench) = Bench::run(dev, case, &candidates, args)? else {
        return Ok(None);
    };
    // Every element is checked: the sum is exact in f32.
    let got = out.to_vec()?;
    bench.error = (0..n)
        .map(|i| f64::from((got[i] - (xs[i] + ys[i])).abs()))
        .fold(0.0, f64::max);
    bench.tolerance = 0.0;
    Ok(Some(bench))
}

/// Softmax of each row of a `[rows, cols]` f32 matrix: 8 bytes per element.
pub fn softmax_bench(dev: &Device, rows: usize, cols: usize) -> Result<Option<Bench>, Error> {
    let mut rng = Inputs::default();
    let xs = rng.take(rows * cols);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let grid = |r: usize| [rows.div_ceil(r) as u32, 1, 1];
    let candidates = [
        Candidate {
            spec: softmax::<1, 1024>::kernel_spec(),
            grid: grid(1),
        },
        Candidate {
            spec: softmax::<2, 1024>::kernel_spec(),
            grid: grid(2),
        },
        Candidate {
            spec: softmax::<4, 1024>::kernel_spec(),
            grid: grid(4),
        },
    ];
    let case = Case {
        name: "softmax f32".into(),
        kind: "softmax",
        params: vec![("rows", rows), ("cols", cols)],
        problem: Problem::Bytes(8.0 * (rows * cols) as f64),
    };
    let args: Vec<LaunchArg<'_>> = vec![(&x).into(), (&mut out).into()];
    let Some(mut bench) = Bench::run(dev, case, &candidates, args)? else {
        return Ok(None);
    };
    let got = out.to_vec()?;
    bench.error = super::sampled_rows(rows, |r| {
        let row = &xs[r * cols..(r + 1) * cols];
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f64 = row.iter().map(|&v| f64::from(v - max).exp()).sum();
        (0..cols)
            .map(|c| (f64::from(got[r * cols + c]) - f64::from(row[c] - max).exp() / sum).abs())
            .fold(0.0, f64::max)
    });
    bench.tolerance = 1e-6;
    Ok(Some(bench))
}

/// Layer norm of each row of a `[rows, cols]` f32 matrix: 8 bytes per
/// element (the weights and biases stay in cache).
pub fn layernorm_bench(dev: &Device, rows: usize, cols: usize) -> Result<Option<Bench>, Error> {
    let mut rng = Inputs::default();
    let (xs, ws, bs) = (rng.take(rows * cols), rng.take(cols), rng.take(cols));
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let b = dev.tensor_from_slice(&bs, &[cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let eps = 1e-5f32;
    let grid = |r: usize| [rows.div_ceil(r) as u32, 1, 1];
    let candidates = [
        Candidate {
            spec: layernorm::<1, 1024>::kernel_spec(),
            grid: grid(1),
        },
        Candidate {
            spec: layernorm::<2, 1024>::kernel_spec(),
            grid: grid(2),
        },
        Candidate {
            spec: layernorm::<4, 1024>::kernel_spec(),
            grid: grid(4),
        },
    ];
    let case = Case {
        name: "layer norm f32".into(),
        kind: "layernorm",
        params: vec![("rows", rows), ("cols", cols)],
        problem: Problem::Bytes(8.0 * (rows * cols) as f64),
    };
    let args: Vec<LaunchArg<'_>> = vec![
        (&x).into(),
        (&w).into(),
        (&b).into(),
        (&mut out).into(),
        LaunchArg::scalar(eps),
    ];
    let Some(mut bench) = Bench::run(dev, case, &candidates, args)? else {
        return Ok(None);
    };
    let got = out.to_vec()?;
    bench.error = super::sampled_rows(rows, |r| {
        let row = &xs[r * cols..(r + 1) * cols];
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / cols as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / cols as f64;
        let rstd = 1.0 / (var + f64::from(eps)).sqrt();
        (0..cols)
            .map(|c| {
                let want = (f64::from(row[c]) - mean) * rstd * f64::from(ws[c]) + f64::from(bs[c]);
                (f64::from(got[r * cols + c]) - want).abs() / (1.0 + want.abs())
            })
            .fold(0.0, f64::max)
    });
    bench.tolerance = 1e-5;
    Ok(Some(bench))
}
