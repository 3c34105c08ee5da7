//! The matrix multiplication of Triton's tutorial
//! (`python/tutorials/03-matrix-multiplication.py`, `matmul_kernel` with
//! `ACTIVATION="leaky_relu"`): a one-dimensional grid whose program ids walk
//! the output tiles in groups of `GROUP` rows of tiles, an f32 accumulator
//! over `BK`-wide slabs of K, leaky ReLU on the accumulator and the tile
//! rounded to f16 before it is stored. The tutorial's first CUDA
//! configuration at the tutorial's benchmark's 128-wide N: 128×128×64
//! tiles, 8 warps, 3 stages, groups of 8.

use super::{f16s, product, widen_f16};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BM = 128, BN = 128, BK = 64, GROUP = 8),
    num_warps = 8,
    num_stages = 3,
    aligned(a, b, c),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn matmul_leaky_relu<const BM: usize, const BN: usize, const BK: usize, const GROUP: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let pid = program_id(0);
    let (tiles_m, tiles_n) = (cdiv(a.dim(0), BM), cdiv(b.dim(1), BN));
    let group = GROUP * tiles_n;
    let first_m = (pid / group) * GROUP;
    let rows = (tiles_m - first_m).min(GROUP);
    let (pid_m, pid_n) = (first_m + (pid % group) % rows, (pid % group) / rows);
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    let activated = select(acc >= 0.0, acc, acc * 0.01);
    partition_view(c, [BM, BN]).store_masked(activated.cast::<f16>(), pid_m, pid_n);
}

/// A product whose M and N are not multiples of the tiles, over more
/// groups of rows than one.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n, k) = (1100, 264, 200);
    let (a_in, b_in) = (f16s(&rng.take(m * k)), f16s(&rng.take(k * n)));
    let a = dev.tensor_from_slice(&a_in, &[m, k])?;
    let b = dev.tensor_from_slice(&b_in, &[k, n])?;
    let mut c = dev.zeros::<f16>(&[m, n])?;
    let grid = [(m.div_ceil(128) * n.div_ceil(128)) as u32];
    let time = timed(|| matmul_leaky_relu::<128, 128, 64, 8>::launch(dev, grid, (&a, &b, &mut c)))?;
    let want: Vec<f64> = product(&widen_f16(&a_in), &widen_f16(&b_in), (m, n, k))
        .into_iter()
        .map(|v| if v >= 0.0 { v } else { 0.01 * v })
        .collect();
    Ok(vec![Row {
        kernel: "matmul_leaky_relu".into(),
        code: dev.kernel_code(&matmul_leaky_relu::<128, 128, 64, 8>::kernel_spec())?,
        shape: format!("[{m}, {k}] x [{k}, {n}] f16"),
        max_error: max_error(&widen_f16(&c.to_vec()?), &want),
        // The product's f16 rounding (2⁻¹¹ relative) and f32 sums in any order.
        tolerance: 2e-3,
        time,
    }])
}
