//! SwiGLU forward as Liger-Kernel computes it
//! (`liger_kernel/ops/swiglu.py`, `_swiglu_forward_kernel`): one program
//! per row, `silu(a)` in f32 rounded to the input dtype, times `b`. Liger's
//! launcher takes the row's next power of two as the block (16384 for
//! LLaMA-7B's 11008 intermediate columns) and 16 warps for it.

use super::{gated_rows, GatedLaunch};
use crate::common::{Inputs, Row};
use tile::{tile_kernel, Device, Error};

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
    let launch: GatedLaunch = |dev, grid, a, b, c| swiglu::<16384>::launch(dev, grid, (a, b, c));
    let kernel = (swiglu::<16384>::kernel_spec(), launch);
    gated_rows(dev, rng, "swiglu", kernel, |a| a / (1.0 + (-a).exp()))
}
