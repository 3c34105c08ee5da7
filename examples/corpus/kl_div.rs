//! KL divergence as Liger-Kernel computes it (`liger_kernel/ops/kl_div.py`,
//! `_kldiv_kernel_forward`, targets as probabilities, a reduced loss): one
//! program per row sums `y_true · (ln max(y_true, ε) − y_pred)` over blocks
//! of the vocabulary and stores the row's sum. Liger's launcher takes
//! blocks of `min(65536 / 4, next_power_of_two(V))` = 16384 and 16 warps.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 16384),
    num_warps = 16,
    aligned(y_pred, y_true),
    approx_math,
    allow(spills),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn kl_div<const BLOCK: usize>(
    y_pred: &Tensor<f32, 2>,
    y_true: &Tensor<f32, 2>,
    loss: &mut Tensor<f32>,
    eps: f32,
) {
    let row = program_id(0);
    let (vp, vt) = (
        partition_view(y_pred, [1, BLOCK]),
        partition_view(y_true, [1, BLOCK]),
    );
    let mut sum = zeros::<f32>([1]);
    for i in 0..cdiv(y_pred.dim(1), BLOCK) {
        let p = vp.load_masked(row, i);
        let t = vt.load_masked(row, i);
        sum += (t * (t.max(eps).ln() - p)).sum(1);
    }
    partition_view(loss, [1]).store(sum, row);
}

/// The row sums of the divergence of log-probabilities from probabilities.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, vocab, eps) = (3, 32000, 1e-10f32);
    let y_pred: Vec<f32> = rng
        .take(rows * vocab)
        .iter()
        .map(|v| v * 2.0 - 10.0)
        .collect();
    // Probabilities, some exactly zero (ln of ε there).
    let y_true: Vec<f32> = rng
        .take(rows * vocab)
        .iter()
        .map(|v| {
            if *v < -1.5 {
                0.0
            } else {
                (v + 2.0) / (2.0 * vocab as f32)
            }
        })
        .collect();
    let p = dev.tensor_from_slice(&y_pred, &[rows, vocab])?;
    let t = dev.tensor_from_slice(&y_true, &[rows, vocab])?;
    let mut loss = dev.zeros::<f32>(&[rows])?;
    let grid = [rows as u32];
    let time = timed(|| kl_div::<16384>::launch(dev, grid, (&p, &t, &mut loss, eps)))?;
    let want: Vec<f64> = y_pred
        .chunks(vocab)
        .zip(y_true.chunks(vocab))
        .map(|(p, t)| {
            p.iter()
                .zip(t)
                .map(|(&p, &t)| f64::from(t) * (f64::from(t.max(eps)).ln() - f64::from(p)))
                .sum()
        })
        .collect();
    Ok(vec![Row {
        kernel: "kl_div".into(),
        code: dev.kernel_code(&kl_div::<16384>::kernel_spec())?,
        shape: format!("[{rows}, {vocab}] f32"),
        // Sums of 32000 f32 terms.
        max_error: max_error(&loss.to_vec()?, &want),
        tolerance: 1e-5,
        time,
    }])
}
