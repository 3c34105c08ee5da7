//! RMSNorm forward as Liger-Kernel computes it in its "llama" casting mode
//! (`liger_kernel/ops/rms_norm.py`, `_rms_norm_forward_kernel`): one program
//! per row, the row in f32, `rstd = rsqrt(mean(x²) + eps)` kept for the
//! backward pass, `x · rstd` rounded to the input dtype before it is scaled
//! by the weight. Liger's launcher takes the row's next power of two as the
//! block (4096 for LLaMA's hidden size) and 8 warps for it.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 4096),
    num_warps = 8,
    aligned(x, w, y),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn rms_norm<const BLOCK: usize>(
    x: &Tensor<bf16, 2>,
    w: &Tensor<bf16>,
    y: &mut Tensor<bf16, 2>,
    rstd: &mut Tensor<f32>,
    eps: f32,
) {
    let row = program_id(0);
    let n = x.dim(1).cast::<f32>();
    let xr = partition_view(x, [1, BLOCK])
        .load_masked(row, 0)
        .cast::<f32>();
    let r = ((xr * xr).sum_keepdim(1) / n + eps).rsqrt();
    partition_view(rstd, [1]).store(r.reshape([1]), row);
    let wr = partition_view(w, [BLOCK]).load_masked(0);
    partition_view(y, [1, BLOCK]).store_masked((xr * r).cast::<bf16>() * wr, row, 0);
}

/// The plain-Rust reference in f64: `y` and `rstd` of every row.
pub fn reference(x: &[f32], w: &[f32], eps: f32) -> (Vec<f64>, Vec<f64>) {
    let cols = w.len();
    let (mut y, mut rstd) = (Vec::with_capacity(x.len()), Vec::new());
    for row in x.chunks(cols) {
        let ms = row.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / cols as f64;
        let r = 1.0 / (ms + f64::from(eps)).sqrt();
        y.extend(
            row.iter()
                .zip(w)
                .map(|(&v, &w)| f64::from(v) * r * f64::from(w)),
        );
        rstd.push(r);
    }
    (y, rstd)
}

/// RMSNorm of rows shorter than the block.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, eps) = (6, 4000, 1e-6f32);
    let (xs, ws) = (bf16s(&rng.take(rows * cols)), bf16s(&rng.take(cols)));
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let mut y = dev.zeros::<bf16>(&[rows, cols])?;
    let mut rstd = dev.zeros::<f32>(&[rows])?;
    let grid = [rows as u32];
    let time = timed(|| rms_norm::<4096>::launch(dev, grid, (&x, &w, &mut y, &mut rstd, eps)))?;
    let (want_y, want_rstd) = reference(&widen(&xs), &widen(&ws), eps);
    // Two bf16 roundings (x · rstd, then the product with w): 2⁻⁸ each.
    let err = max_error(&widen(&y.to_vec()?), &want_y).max(max_error(&rstd.to_vec()?, &want_rstd));
    Ok(vec![Row {
        kernel: "rms_norm".into(),
        code: dev.kernel_code(&rms_norm::<4096>::kernel_spec())?,
        shape: format!("[{rows}, {cols}] bf16"),
        max_error: err,
        tolerance: 1e-2,
        time,
    }])
}
