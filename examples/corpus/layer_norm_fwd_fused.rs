//! LayerNorm forward as Triton's tutorial computes it
//! (`python/tutorials/05-layer-norm.py`, `_layer_norm_fwd_fused`, read at
//! <https://github.com/triton-lang/triton/blob/545699290b851e70231ee3017481851170f1583d/python/tutorials/05-layer-norm.py>):
//! one program per row, three passes over the row in blocks (the sum, the
//! sum of centred squares with the padding kept out, then `(x − mean) ·
//! rstd · w + b`), the mean and `rstd = 1 / sqrt(var + eps)` kept in f32
//! for the backward pass. The tutorial's test, 1151 rows of 8192 in f16:
//! the block is the row's next power of two (8192) and the warps
//! `min(max(8192 / 256, 1), 8) = 8`.

use super::{f16s, widen_f16};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 8192),
    num_warps = 8,
    aligned(x, y, w, b),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn layer_norm_fwd_fused<const BLOCK: usize>(
    x: &Tensor<f16, 2>,
    y: &mut Tensor<f16, 2>,
    w: &Tensor<f16>,
    b: &Tensor<f16>,
    mean: &mut Tensor<f32>,
    rstd: &mut Tensor<f32>,
    eps: f32,
) {
    let row = program_id(0);
    let n = x.dim(1);
    let blocks = cdiv(n, BLOCK);
    let (vx, vy) = (partition_view(x, [1, BLOCK]), partition_view(y, [1, BLOCK]));
    let (vw, vb) = (partition_view(w, [BLOCK]), partition_view(b, [BLOCK]));
    let mut sum = zeros::<f32>([1, BLOCK]);
    for k in 0..blocks {
        sum += vx.load_masked(row, k).cast::<f32>();
    }
    let mu = sum.sum_keepdim(1) / n.cast::<f32>();
    let mut squares = zeros::<f32>([1, BLOCK]);
    for k in 0..blocks {
        let cols = iota::<i32>([1, BLOCK]) + k * BLOCK as i32;
        let centred = select(cols < n, vx.load_masked(row, k).cast::<f32>() - mu, 0.0);
        squares += centred * centred;
    }
    let r = 1.0 / (squares.sum_keepdim(1) / n.cast::<f32>() + eps).sqrt();
    partition_view(mean, [1]).store(mu.reshape([1]), row);
    partition_view(rstd, [1]).store(r.reshape([1]), row);
    for k in 0..blocks {
        let (wk, bk) = (
            vw.load_masked(k).cast::<f32>(),
            vb.load_masked(k).cast::<f32>(),
        );
        let xhat = (vx.load_masked(row, k).cast::<f32>() - mu) * r;
        vy.store_masked((xhat * wk + bk).cast::<f16>(), row, k);
    }
}

/// The plain-Rust reference in f64: `y`, the mean and `rstd` of every row.
pub fn reference(x: &[f32], w: &[f32], b: &[f32], eps: f32) -> [Vec<f64>; 3] {
    let cols = w.len();
    let [mut y, mut mean, mut rstd] = [Vec::new(), Vec::new(), Vec::new()];
    for row in x.chunks(cols) {
        let mu = row.iter().map(|&v| f64::from(v)).sum::<f64>() / cols as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mu).powi(2))
            .sum::<f64>()
            / cols as f64;
        let r = 1.0 / (var + f64::from(eps)).sqrt();
        y.extend(
            (0..cols).map(|j| (f64::from(row[j]) - mu) * r * f64::from(w[j]) + f64::from(b[j])),
        );
        mean.push(mu);
        rstd.push(r);
    }
    [y, mean, rstd]
}

/// Rows longer than the block, whose second block ends inside the row, so
/// that every pass loops and masks (the tutorial's launcher keeps `N` within
/// one block; the kernel is written for any `N`).
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, eps) = (5, 10000, 1e-5f32);
    let xs = f16s(&rng.take(rows * cols));
    let (ws, bs) = (f16s(&rng.take(cols)), f16s(&rng.take(cols)));
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let b = dev.tensor_from_slice(&bs, &[cols])?;
    let mut y = dev.zeros::<f16>(&[rows, cols])?;
    let mut mean = dev.zeros::<f32>(&[rows])?;
    let mut rstd = dev.zeros::<f32>(&[rows])?;
    let grid = [rows as u32];
    let time = timed(|| {
        let args = (&x, &mut y, &w, &b, &mut mean, &mut rstd, eps);
        layer_norm_fwd_fused::<8192>::launch(dev, grid, args)
    })?;
    let [want_y, want_mean, want_rstd] =
        reference(&widen_f16(&xs), &widen_f16(&ws), &widen_f16(&bs), eps);
    let code = dev.kernel_code(&layer_norm_fwd_fused::<8192>::kernel_spec())?;
    let shape = format!("[{rows}, {cols}] f16");
    let stats = max_error(&mean.to_vec()?, &want_mean).max(max_error(&rstd.to_vec()?, &want_rstd));
    Ok(vec![
        Row {
            kernel: "layer_norm_fwd_fused y".into(),
            code,
            shape: shape.clone(),
            max_error: max_error(&widen_f16(&y.to_vec()?), &want_y),
            // One f16 rounding of the result: 2⁻¹¹.
            tolerance: 1e-3,
            time,
        },
        Row {
            kernel: "layer_norm_fwd_fused mean, rstd".into(),
            code,
            shape,
            max_error: stats,
            // f32 sums over 10,000 columns (the CPU device's in order: up
            // to 7.4e-7 here), an approximate square root and division.
            tolerance: 1e-5,
            time,
        },
    ])
}
