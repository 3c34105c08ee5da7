//! RMSNorm backward as Liger-Kernel computes it in its "llama" casting mode
//! (`liger_kernel/ops/rms_norm.py`, `_rms_norm_backward_kernel`): each
//! program walks `rows_per_program` consecutive rows (Liger launches one
//! program per multiprocessor), writes each row's `dx` and sums its share
//! of `dw` in f32 registers, stored once as its row of partial sums that
//! the host adds up. Block 4096 and 8 warps for LLaMA's hidden size, as
//! the forward pass.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 4096),
    num_warps = 8,
    aligned(dy, x, w, dx, dw),
    approx_math,
    allow(spills),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn rms_norm_backward<const BLOCK: usize>(
    dy: &Tensor<bf16, 2>,
    x: &Tensor<bf16, 2>,
    w: &Tensor<bf16>,
    rstd: &Tensor<f32>,
    dx: &mut Tensor<bf16, 2>,
    dw: &mut Tensor<f32, 2>,
    rows_per_program: i32,
) {
    let pid = program_id(0);
    let n = x.dim(1).cast::<f32>();
    let start = pid * rows_per_program;
    let end = min(start + rows_per_program, x.dim(0));
    let (vdy, vx, vdx) = (
        partition_view(dy, [1, BLOCK]),
        partition_view(x, [1, BLOCK]),
        partition_view(dx, [1, BLOCK]),
    );
    let wr = partition_view(w, [BLOCK]).load_masked(0).cast::<f32>();
    let mut dw_row = zeros::<f32>([1, BLOCK]);
    for row in start..end {
        let dyr = vdy.load_masked(row, 0);
        let xr = vx.load_masked(row, 0).cast::<f32>();
        let r = gather(rstd, [row]);
        let m = dyr.cast::<f32>() * wr;
        let dxr = r * m + r * (-(1.0 / n) * r * r * (m * xr).sum_keepdim(1) * xr);
        dw_row += (dyr * (xr * r).cast::<bf16>()).cast::<f32>();
        vdx.store_masked(dxr.cast::<bf16>(), row, 0);
    }
    partition_view(dw, [1, BLOCK]).store_masked(dw_row, pid, 0);
}

/// The plain-Rust reference: `dx` in f64, and `dw` summed over all rows
/// from its terms rounded to bf16 as the kernel rounds them (as Liger
/// does).
pub fn reference(dy: &[f32], x: &[f32], w: &[f32], rstd: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let cols = w.len();
    let round = |v: f32| f64::from(bf16::from_f32(v).to_f32());
    let mut dx = Vec::with_capacity(x.len());
    let mut dw = vec![0.0; cols];
    for ((dyr, xr), &r) in dy.chunks(cols).zip(x.chunks(cols)).zip(rstd) {
        let m: Vec<f64> = dyr
            .iter()
            .zip(w)
            .map(|(&d, &w)| f64::from(d) * f64::from(w))
            .collect();
        let mx: f64 = m.iter().zip(xr).map(|(m, &x)| m * f64::from(x)).sum();
        let r64 = f64::from(r);
        for j in 0..cols {
            let xj = f64::from(xr[j]);
            dx.push(r64 * m[j] - r64.powi(3) * mx * xj / cols as f64);
            dw[j] += round(dyr[j] * bf16::from_f32(xr[j] * r).to_f32());
        }
    }
    (dx, dw)
}

/// The backward pass of 9 rows over 4 programs (the last with one row).
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, programs) = (9usize, 4000, 4);
    let per = rows.div_ceil(programs) as i32;
    let (dys, xs, ws) = (
        bf16s(&rng.take(rows * cols)),
        bf16s(&rng.take(rows * cols)),
        bf16s(&rng.take(cols)),
    );
    let rstds: Vec<f32> = rng.take(rows).iter().map(|v| 0.5 + v.abs()).collect();
    let dy = dev.tensor_from_slice(&dys, &[rows, cols])?;
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let rstd = dev.tensor_from_slice(&rstds, &[rows])?;
    let mut dx = dev.zeros::<bf16>(&[rows, cols])?;
    let mut dw = dev.zeros::<f32>(&[programs, cols])?;
    let grid = [programs as u32];
    let time = timed(|| {
        rms_norm_backward::<4096>::launch(dev, grid, (&dy, &x, &w, &rstd, &mut dx, &mut dw, per))
    })?;
    let (want_dx, want_dw) = reference(&widen(&dys), &widen(&xs), &widen(&ws), &rstds);
    let partial = dw.to_vec()?;
    let dw_sum: Vec<f32> = (0..cols)
        .map(|j| (0..programs).map(|p| partial[p * cols + j]).sum())
        .collect();
    let code = dev.kernel_code(&rms_norm_backward::<4096>::kernel_spec())?;
    let shape = format!("[{rows}, {cols}] bf16, {programs} programs");
    Ok(vec![
        Row {
            kernel: "rms_norm backward dx".into(),
            code,
            shape: shape.clone(),
            // One bf16 rounding of the result: 2⁻⁸.
            max_error: max_error(&widen(&dx.to_vec()?), &want_dx),
            tolerance: 1e-2,
            time,
        },
        Row {
            kernel: "rms_norm backward dw".into(),
            code,
            shape,
            // Sums in f32 of the reference's own bf16 terms.
            max_error: max_error(&dw_sum, &want_dw),
            tolerance: 1e-5,
            time,
        },
    ])
}
