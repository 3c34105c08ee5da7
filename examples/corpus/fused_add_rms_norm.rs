//! Residual add fused with RMSNorm, as Liger-Kernel computes it in its
//! "llama" casting mode (`liger_kernel/ops/fused_add_rms_norm.py`,
//! `_fused_add_rms_norm_forward_kernel`): one program per row adds the
//! residual in the input dtype and writes the sum back as the next
//! residual, then normalizes the sum as `rms_norm` does. Block 4096 and 8
//! warps for LLaMA's hidden size.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 4096),
    num_warps = 8,
    aligned(x, residual, w, y, s),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn fused_add_rms_norm<const BLOCK: usize>(
    x: &Tensor<bf16, 2>,
    residual: &Tensor<bf16, 2>,
    w: &Tensor<bf16>,
    y: &mut Tensor<bf16, 2>,
    s: &mut Tensor<bf16, 2>,
    rstd: &mut Tensor<f32>,
    eps: f32,
) {
    let row = program_id(0);
    let n = x.dim(1).cast::<f32>();
    let sum = partition_view(x, [1, BLOCK]).load_masked(row, 0)
        + partition_view(residual, [1, BLOCK]).load_masked(row, 0);
    partition_view(s, [1, BLOCK]).store_masked(sum, row, 0);
    let sf = sum.cast::<f32>();
    let r = ((sf * sf).sum_keepdim(1) / n + eps).rsqrt();
    partition_view(rstd, [1]).store(r.reshape([1]), row);
    let wr = partition_view(w, [BLOCK]).load_masked(0);
    partition_view(y, [1, BLOCK]).store_masked((sf * r).cast::<bf16>() * wr, row, 0);
}

/// Residual add and RMSNorm of rows shorter than the block.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, eps) = (5, 4000, 1e-6f32);
    let (xs, rs, ws) = (
        bf16s(&rng.take(rows * cols)),
        bf16s(&rng.take(rows * cols)),
        bf16s(&rng.take(cols)),
    );
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let residual = dev.tensor_from_slice(&rs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let mut y = dev.zeros::<bf16>(&[rows, cols])?;
    let mut s = dev.zeros::<bf16>(&[rows, cols])?;
    let mut rstd = dev.zeros::<f32>(&[rows])?;
    let grid = [rows as u32];
    let time = timed(|| {
        fused_add_rms_norm::<4096>::launch(
            dev,
            grid,
            (&x, &residual, &w, &mut y, &mut s, &mut rstd, eps),
        )
    })?;
    // The sum is rounded to bf16 first, as the kernel's is: exactly.
    let sums: Vec<bf16> = xs
        .iter()
        .zip(&rs)
        .map(|(a, b)| bf16::from_f32(a.to_f32() + b.to_f32()))
        .collect();
    let (want_y, want_rstd) = super::rms_norm::reference(&widen(&sums), &widen(&ws), eps);
    let got_s: Vec<f64> = widen(&s.to_vec()?).into_iter().map(f64::from).collect();
    let code = dev.kernel_code(&fused_add_rms_norm::<4096>::kernel_spec())?;
    let shape = format!("[{rows}, {cols}] bf16");
    Ok(vec![
        Row {
            kernel: "fused_add_rms_norm".into(),
            code,
            shape: shape.clone(),
            max_error: max_error(&widen(&y.to_vec()?), &want_y)
                .max(max_error(&rstd.to_vec()?, &want_rstd)),
            tolerance: 1e-2,
            time,
        },
        Row {
            kernel: "fused_add_rms_norm sum".into(),
            code,
            shape,
            max_error: max_error(&widen(&sums), &got_s),
            tolerance: 0.0,
            time,
        },
    ])
}
