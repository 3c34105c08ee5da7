//! GEGLU forward with the tanh approximation of GELU, as Liger-Kernel
//! computes it (`liger_kernel/ops/geglu.py`, `_geglu_tanh_forward_kernel`):
//! one program per row, `gelu(a)` in f32 rounded to the input dtype, times
//! `b`. Block 16384 and 16 warps for LLaMA-7B's intermediate width, as
//! Liger's launcher takes them.

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
pub fn geglu<const BLOCK: usize>(
    a: &Tensor<bf16, 2>,
    b: &Tensor<bf16, 2>,
    c: &mut Tensor<bf16, 2>,
) {
    let row = program_id(0);
    let ar = partition_view(a, [1, BLOCK])
        .load_masked(row, 0)
        .cast::<f32>();
    let br = partition_view(b, [1, BLOCK]).load_masked(row, 0);
    // √(2/π) · (a + 0.044715 a³)
    let inner = 0.7978845608028654 * (ar + 0.044715 * (ar * ar * ar));
    let gelu = 0.5 * ar * (1.0 + inner.tanh());
    partition_view(c, [1, BLOCK]).store_masked(gelu.cast::<bf16>() * br, row, 0);
}

/// GEGLU of LLaMA-7B's intermediate width.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let launch: GatedLaunch = |dev, grid, a, b, c| geglu::<16384>::launch(dev, grid, (a, b, c));
    let kernel = (geglu::<16384>::kernel_spec(), launch);
    gated_rows(dev, rng, "geglu", kernel, |a| {
        let inner = (2.0 / std::f64::consts::PI).sqrt() * (a + 0.044715 * a.powi(3));
        0.5 * a * (1.0 + inner.tanh())
    })
}
