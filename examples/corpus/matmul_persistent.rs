//! The persistent matrix multiplication of Triton's tutorial
//! (`python/tutorials/09-persistent-matmul.py`, `matmul_kernel_persistent`):
//! one program per processor, each walking the output tiles `pid,
//! pid + programs, …` in grouped order with the K loop inside, and the f32
//! accumulator rounded to f16 as each tile is stored. The tutorial's f16
//! configuration at 128-wide N tiles: 128×128×64, 8 warps, 3 stages,
//! groups of 8.

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
pub fn matmul_persistent<const BM: usize, const BN: usize, const BK: usize, const GROUP: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let vc = partition_view(c, [BM, BN]);
    let (tiles_m, tiles_n) = (cdiv(a.dim(0), BM), cdiv(b.dim(1), BN));
    let group = GROUP * tiles_n;
    for t in (program_id(0)..tiles_m * tiles_n).step_by(num_programs(0)) {
        let first_m = (t / group) * GROUP;
        let rows = (tiles_m - first_m).min(GROUP);
        let (pid_m, pid_n) = (first_m + (t % group) % rows, (t % group) / rows);
        let mut acc = zeros::<f32>([BM, BN]);
        for kk in 0..cdiv(a.dim(1), BK) {
            acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
        }
        vc.store_masked(acc.cast::<f16>(), pid_m, pid_n);
    }
}

/// A product of 9 × 3 tiles with partial edges on fewer programs than
/// tiles, so that every program stores several tiles.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n, k) = (1100, 264, 200);
    let (a_in, b_in) = (f16s(&rng.take(m * k)), f16s(&rng.take(k * n)));
    let a = dev.tensor_from_slice(&a_in, &[m, k])?;
    let b = dev.tensor_from_slice(&b_in, &[k, n])?;
    let mut c = dev.zeros::<f16>(&[m, n])?;
    let tiles = (m.div_ceil(128) * n.div_ceil(128)) as u32;
    let grid = [dev.multiprocessors().clamp(1, tiles / 3)];
    let kernel = matmul_persistent::<128, 128, 64, 8>::launch;
    let time = timed(|| kernel(dev, grid, (&a, &b, &mut c)))?;
    let want = product(&widen_f16(&a_in), &widen_f16(&b_in), (m, n, k));
    Ok(vec![Row {
        kernel: "matmul_persistent".into(),
        code: dev.kernel_code(&matmul_persistent::<128, 128, 64, 8>::kernel_spec())?,
        shape: format!("[{m}, {k}] x [{k}, {n}] f16, grid {}", grid[0]),
        max_error: max_error(&widen_f16(&c.to_vec()?), &want),
        // The product's f16 rounding (2⁻¹¹ relative) and f32 sums in any order.
        tolerance: 2e-3,
        time,
    }])
}
