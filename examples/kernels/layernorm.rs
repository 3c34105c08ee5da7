//! Layer normalization forward: mean and variance per row, then scale and
//! shift.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, DeviceKind, Error};

// Two rows per program for GPUs (42 registers a thread on sm_80; eight rows
// would take 162), eight on the CPU (only there: no GPU code is built for
// it), where the host code folds the eight rows of a tile with one vector op
// per column.
#[tile_kernel(configs(BR = 2, BC = 384), configs(BR = 8, BC = 384, targets = "host"))]
pub fn layernorm<const BR: usize, const BC: usize>(
    x: &Tensor<f32, 2>,
    w: &Tensor<f32>,
    bias: &Tensor<f32>,
    out: &mut Tensor<f32, 2>,
    eps: f32,
) {
    let pid = program_id(0);
    let cols = x.dim(1);
    let n = cols.cast::<f32>();
    let t = partition_view(x, [BR, BC]).load_masked(pid, 0);
    let mean = t.sum_keepdim(1) / n;
    // Padded columns must not add (0 - mean)^2 to the variance.
    let inside = iota::<i32>([BC]).broadcast_to([BR, BC]) < cols;
    let centered = select(inside, t - mean, zeros::<f32>([BR, BC]));
    let rstd = ((centered * centered).sum_keepdim(1) / n + eps).rsqrt();
    let wt = partition_view(w, [BC]).load_masked(0);
    let bt = partition_view(bias, [BC]).load_masked(0);
    partition_view(out, [BR, BC]).store_masked(fma(centered * rstd, wt, bt), pid, 0);
}

/// The plain-Rust reference, in f64.
pub fn reference(x: &[f32], w: &[f32], b: &[f32], eps: f32) -> Vec<f64> {
    let cols = w.len();
    let mut want = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / cols as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / cols as f64;
        let rstd = 1.0 / (var + f64::from(eps)).sqrt();
        want.extend(
            row.iter()
                .enumerate()
                .map(|(j, &v)| (f64::from(v) - mean) * rstd * f64::from(w[j]) + f64::from(b[j])),
        );
    }
    want
}

/// Layer norm of rows whose length leaves a partial column tile.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, eps) = (257, 300, 1e-5f32);
    let (xs, ws, bs) = (rng.take(rows * cols), rng.take(cols), rng.take(cols));
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let b = dev.tensor_from_slice(&bs, &[cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let (time, code) = if dev.kind() == DeviceKind::Cpu {
        let grid = [rows.div_ceil(8) as u32];
        let time = timed(|| layernorm::<8, 384>::launch(dev, grid, (&x, &w, &b, &mut out, eps)))?;
        (time, dev.kernel_code(&layernorm::<8, 384>::kernel_spec())?)
    } else {
        let grid = [rows.div_ceil(2) as u32];
        let time = timed(|| layernorm::<2, 384>::launch(dev, grid, (&x, &w, &b, &mut out, eps)))?;
        (time, dev.kernel_code(&layernorm::<2, 384>::kernel_spec())?)
    };
    Ok(vec![Row {
        kernel: "layernorm".into(),
        code,
        shape: format!("[{rows}, {cols}]"),
        max_error: max_error(&out.to_vec()?, &reference(&xs, &ws, &bs, eps)),
        tolerance: 1e-5,
        time,
    }])
}
