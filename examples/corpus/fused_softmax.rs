//! The fused softmax of Triton's tutorial
//! (`python/tutorials/02-fused-softmax.py`, `softmax_kernel`, read at
//! <https://github.com/triton-lang/triton/blob/fd237c7cf9a7262f32fedbaa5027ab2736ead134/python/tutorials/02-fused-softmax.py>):
//! persistent programs (the launcher starts as many as the processors hold
//! at the kernel's occupancy, at most one per row) walk the rows
//! `num_programs(0)` apart in a loop of `num_stages` stages; each row is
//! read once, padded with −∞ to the block, and written as
//! `exp(x − max) / Σ exp(x − max)`. The block is the row's next power of
//! two, the warps 8; the stages 2, as the tutorial picks them on an A100
//! (4 where a block may hold more than 200,000 bytes of shared memory). The
//! tutorial's benchmark: 4096 rows of 4096 f32.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 4096, NUM_STAGES = 2),
    num_warps = 8,
    aligned(y, x),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn fused_softmax<const BLOCK: usize, const NUM_STAGES: usize>(
    y: &mut Tensor<f32, 2>,
    x: &Tensor<f32, 2>,
) {
    let (vx, vy) = (partition_view(x, [1, BLOCK]), partition_view(y, [1, BLOCK]));
    for row in pipelined(
        (program_id(0)..x.dim(0)).step_by(num_programs(0)),
        NUM_STAGES,
    ) {
        let r = vx.load_masked_with(Padding::NegInf, row, 0);
        let numerator = (r - r.max_along_keepdim(1)).exp();
        vy.store_masked(numerator / numerator.sum_keepdim(1), row, 0);
    }
}

/// The plain-Rust reference in f64: each row's softmax.
pub fn reference(x: &[f32], cols: usize) -> Vec<f64> {
    let mut want = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let max = row
            .iter()
            .map(|&v| f64::from(v))
            .fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = row.iter().map(|&v| (f64::from(v) - max).exp()).collect();
        let sum: f64 = e.iter().sum();
        want.extend(e.iter().map(|v| v / sum));
    }
    want
}

/// Rows shorter than the block, on fewer programs than rows: every program
/// walks several.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols) = (23, 3000);
    // Wider inputs than `take`'s [-2, 2), so that the maximum matters.
    let xs: Vec<f32> = rng.take(rows * cols).iter().map(|v| v * 8.0).collect();
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let mut y = dev.zeros::<f32>(&[rows, cols])?;
    let grid = [dev.multiprocessors().clamp(1, rows as u32 / 4)];
    let time = timed(|| fused_softmax::<4096, 2>::launch(dev, grid, (&mut y, &x)))?;
    Ok(vec![Row {
        kernel: "fused_softmax".into(),
        code: dev.kernel_code(&fused_softmax::<4096, 2>::kernel_spec())?,
        shape: format!("[{rows}, {cols}] f32, grid {}", grid[0]),
        max_error: max_error(&y.to_vec()?, &reference(&xs, cols)),
        // The approximate exp and division: a few ulps of results below 1.
        tolerance: 1e-6,
        time,
    }])
}
