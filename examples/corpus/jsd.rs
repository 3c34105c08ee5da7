//! Jensen–Shannon divergence and its gradient, as Liger-Kernel computes
//! them (`liger_kernel/ops/jsd.py`, `_jsd_kernel`, a general `beta`, no
//! labels): inputs `x = ln Q` and targets `y = ln P` per row, the mixture
//! `M = β P + (1 − β) Q`, each element's loss `β P y + (1 − β) Q x − M ln M`
//! and gradient `(1 − β) Q (x − ln M)`, both divided by the number of rows.
//! The exponentials are taken relative to the block's largest input,
//! `Q = exp(x − mx) · exp(mx)`. Blocks of `min(65536, next_power_of_two(V))`
//! = 32768 with Triton's default 4 warps, as Liger launches it: 256 values
//! of each operand per thread, which spill in Triton's build too
//! (docs/benchmarks.md, "The corpus"), hence `allow(spills)`.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 32768),
    allow(spills),
    aligned(x, y, loss, dx),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn jsd<const BLOCK: usize>(
    x: &Tensor<f32, 2>,
    y: &Tensor<f32, 2>,
    loss: &mut Tensor<f32, 2>,
    dx: &mut Tensor<f32, 2>,
    beta: f32,
    n_rows: f32,
) {
    let row = program_id(0);
    let (vx, vy) = (partition_view(x, [1, BLOCK]), partition_view(y, [1, BLOCK]));
    let (vloss, vdx) = (
        partition_view(loss, [1, BLOCK]),
        partition_view(dx, [1, BLOCK]),
    );
    for i in 0..cdiv(x.dim(1), BLOCK) {
        let xb = vx.load_masked_with(Padding::NegInf, row, i);
        let yb = vy.load_masked_with(Padding::NegInf, row, i);
        let mx = xb.max_along_keepdim(1).max(yb.max_along_keepdim(1));
        let em = mx.exp();
        let (q, p) = ((xb - mx).exp() * em, (yb - mx).exp() * em);
        let beta_p = beta * p;
        let rest_q = (1.0 - beta) * q;
        let m = beta_p + rest_q;
        let log_m = m.ln();
        let scale = 1.0 / n_rows;
        vloss.store_masked((beta_p * yb + rest_q * xb - m * log_m) * scale, row, i);
        vdx.store_masked(rest_q * (xb - log_m) * scale, row, i);
    }
}

/// The divergence between two rows of log-probabilities per row.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, vocab, beta) = (3, 32000, 0.5f32);
    let xs: Vec<f32> = rng.take(rows * vocab).iter().map(|v| v - 10.0).collect();
    let ys: Vec<f32> = rng.take(rows * vocab).iter().map(|v| v - 10.0).collect();
    let x = dev.tensor_from_slice(&xs, &[rows, vocab])?;
    let y = dev.tensor_from_slice(&ys, &[rows, vocab])?;
    let mut loss = dev.zeros::<f32>(&[rows, vocab])?;
    let mut dx = dev.zeros::<f32>(&[rows, vocab])?;
    let grid = [rows as u32];
    let n = rows as f32;
    let time = timed(|| jsd::<32768>::launch(dev, grid, (&x, &y, &mut loss, &mut dx, beta, n)))?;
    let (b, n) = (f64::from(beta), f64::from(n));
    let (mut want_loss, mut want_dx) = (Vec::new(), Vec::new());
    for (&xv, &yv) in xs.iter().zip(&ys) {
        let (xv, yv) = (f64::from(xv), f64::from(yv));
        let (q, p) = (xv.exp(), yv.exp());
        let m = b * p + (1.0 - b) * q;
        want_loss.push((b * p * yv + (1.0 - b) * q * xv - m * m.ln()) / n);
        want_dx.push((1.0 - b) * q * (xv - m.ln()) / n);
    }
    Ok(vec![Row {
        kernel: "jsd".into(),
        code: dev.kernel_code(&jsd::<32768>::kernel_spec())?,
        shape: format!("[{rows}, {vocab}] f32"),
        max_error: max_error(&loss.to_vec()?, &want_loss).max(max_error(&dx.to_vec()?, &want_dx)),
        tolerance: 1e-6,
        time,
    }])
}
