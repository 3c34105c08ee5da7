//! LayerNorm forward as Liger-Kernel computes it
//! (`liger_kernel/ops/layer_norm.py`, `_layer_norm_forward_kernel`): one
//! program per row, mean and variance in f32 (the padded columns kept out
//! of the variance), mean and `rstd` kept in the input dtype for the
//! backward pass. Block 4096 and 8 warps for a hidden size of 4096.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 4096),
    num_warps = 8,
    aligned(x, w, b, y),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn layer_norm<const BLOCK: usize>(
    x: &Tensor<bf16, 2>,
    w: &Tensor<bf16>,
    b: &Tensor<bf16>,
    y: &mut Tensor<bf16, 2>,
    mean: &mut Tensor<bf16>,
    rstd: &mut Tensor<bf16>,
    eps: f32,
) {
    let row = program_id(0);
    let cols = x.dim(1);
    let n = cols.cast::<f32>();
    let xr = partition_view(x, [1, BLOCK])
        .load_masked(row, 0)
        .cast::<f32>();
    let mu = xr.sum_keepdim(1) / n;
    let centered = select(iota::<i32>([1, BLOCK]) < cols, xr - mu, 0.0);
    let r = ((centered * centered).sum_keepdim(1) / n + eps).rsqrt();
    partition_view(mean, [1]).store(mu.reshape([1]).cast::<bf16>(), row);
    partition_view(rstd, [1]).store(r.reshape([1]).cast::<bf16>(), row);
    let wr = partition_view(w, [BLOCK]).load_masked(0).cast::<f32>();
    let br = partition_view(b, [BLOCK]).load_masked(0).cast::<f32>();
    partition_view(y, [1, BLOCK]).store_masked((centered * r * wr + br).cast::<bf16>(), row, 0);
}

/// LayerNorm of rows shorter than the block.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, eps) = (6, 4000, 1e-5f32);
    let (xs, ws, bs) = (
        bf16s(&rng.take(rows * cols)),
        bf16s(&rng.take(cols)),
        bf16s(&rng.take(cols)),
    );
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let b = dev.tensor_from_slice(&bs, &[cols])?;
    let mut y = dev.zeros::<bf16>(&[rows, cols])?;
    let mut mean = dev.zeros::<bf16>(&[rows])?;
    let mut rstd = dev.zeros::<bf16>(&[rows])?;
    let grid = [rows as u32];
    let time = timed(|| {
        layer_norm::<4096>::launch(dev, grid, (&x, &w, &b, &mut y, &mut mean, &mut rstd, eps))
    })?;
    let (xf, wf, bf) = (widen(&xs), widen(&ws), widen(&bs));
    let (mut want_y, mut want_mean, mut want_rstd) = (Vec::new(), Vec::new(), Vec::new());
    for row in xf.chunks(cols) {
        let mu = row.iter().map(|&v| f64::from(v)).sum::<f64>() / cols as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mu).powi(2))
            .sum::<f64>()
            / cols as f64;
        let r = 1.0 / (var + f64::from(eps)).sqrt();
        want_y.extend(
            (0..cols).map(|j| (f64::from(row[j]) - mu) * r * f64::from(wf[j]) + f64::from(bf[j])),
        );
        want_mean.push(mu);
        want_rstd.push(r);
    }
    // One bf16 rounding of each result: 2⁻⁸.
    let err = max_error(&widen(&y.to_vec()?), &want_y)
        .max(max_error(&widen(&mean.to_vec()?), &want_mean))
        .max(max_error(&widen(&rstd.to_vec()?), &want_rstd));
    Ok(vec![Row {
        kernel: "layer_norm".into(),
        code: dev.kernel_code(&layer_norm::<4096>::kernel_spec())?,
        shape: format!("[{rows}, {cols}] bf16"),
        max_error: err,
        tolerance: 1e-2,
        time,
    }])
}
