//! SwiGLU forward as Liger-Kernel computes it
//! (`liger_kernel/ops/swiglu.py`, `_swiglu_forward_kernel`): one program
//! per row, `silu(a)` in f32 rounded to the input dtype, times `b`. Liger's
//! launcher takes the row's next power of two as the block (16384 for
//! LLaMA-7B's 11008 intermediate columns) and 16 warps for it.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 16384),
    num_warps = 16,
    aligned(a, b, c),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn swiglu<const BLOCK: usize>(
    a: &Tensor<bf16, 2>,
    b: &Tensor<bf16, 2>,
    c: &mut Tensor<bf16, 2>,
) {
    let row = program_id(0);
    let ar = partition_view(a, [1, BLOCK])
        .load_masked(row, 0)
        .cast::<f32>();
    let br = partition_view(b, [1, BLOCK]).load_masked(row, 0);
    let silu = ar * (1.0 / (1.0 + (-ar).exp()));
    partition_view(c, [1, BLOCK]).store_masked(silu.cast::<bf16>() * br, row, 0);
}

/// SwiGLU of LLaMA-7B's intermediate width.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols) = (3, 11008);
    let (a_in, b_in) = (bf16s(&rng.take(rows * cols)), bf16s(&rng.take(rows * cols)));
    let a = dev.tensor_from_slice(&a_in, &[rows, cols])?;
    let b = dev.tensor_from_slice(&b_in, &[rows, cols])?;
    let mut c = dev.zeros::<bf16>(&[rows, cols])?;
    let grid = [rows as u32];
    let time = timed(|| swiglu::<16384>::launch(dev, grid, (&a, &b, &mut c)))?;
    let want: Vec<f64> = widen(&a_in)
        .iter()
        .zip(widen(&b_in))
        .map(|(&a, b)| {
            let a = f64::from(a);
            a / (1.0 + (-a).exp()) * f64::from(b)
        })
        .collect();
    Ok(vec![Row {
        kernel: "swiglu".into(),
        code: dev.kernel_code(&swiglu::<16384>::kernel_spec())?,
        shape: format!("[{rows}, {cols}] bf16"),
        // Two bf16 roundings (silu(a), then the product): 2⁻⁸ each.
        max_error: max_error(&widen(&c.to_vec()?), &want),
        tolerance: 1e-2,
        time,
    }])
}
