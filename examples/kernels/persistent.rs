//! A persistent matmul: one program per processor of the device
//! (`Device::multiprocessors`), each looping over the output tiles
//! `pid, pid + programs, ...` in grouped order, with the software-pipelined
//! `K` loop inside the tile loop. Grouped order walks `GROUP` rows of tiles
//! column by column, so that the programs running at once read a few
//! tiles of A and B many times rather than many tiles once (Triton's
//! matmul tutorial orders its program ids the same way). Each new tile's
//! pipeline refills stages the previous tile's last iterations read: the
//! compiler orders those reads first with a barrier, which the verifier of
//! the thread-level program checks.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error};

/// C = A·B over tiles `BM × BN`, `BK` wide slabs of K, `GROUP` rows of
/// tiles per group; launched with a grid of [`Device::multiprocessors`].
/// Built for sm_90a too, where its products run on `wgmma`.
#[tile_kernel(
    num_warps = 4,
    targets = "sm_80,sm_86,sm_89,sm_90,sm_90a,gfx90a,gfx942,gfx1100,host",
    configs(BM = 64, BN = 64, BK = 32, GROUP = 4)
)]
pub fn matmul_persistent<const BM: usize, const BN: usize, const BK: usize, const GROUP: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f32, 2>,
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
        vc.store_masked(acc, pid_m, pid_n);
    }
}

/// The plain-Rust reference on integer inputs: every partial sum is an
/// integer well inside `f32`'s exact range, so any order of summation,
/// a tensor core's included, gives exactly this.
pub fn reference(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize)) -> Vec<f64> {
    let mut want = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k)
                .map(|kk| f64::from(a[i * k + kk]) * f64::from(b[kk * n + j]))
                .sum();
        }
    }
    want
}

/// Small integers (-4 to 3) drawn from `rng`.
fn integers(rng: &mut Inputs, n: usize) -> Vec<f16> {
    rng.take(n)
        .iter()
        .map(|&v| f16::from_f32((v * 1.75).round()))
        .collect()
}

/// The kernel on a problem of 5 × 3 tiles whose edges are partial (more
/// tiles than programs on any device here, so every program loops), with
/// one program per processor.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n, k) = (300, 170, 100);
    let (a16, b16) = (integers(rng, m * k), integers(rng, k * n));
    let a = dev.tensor_from_slice(&a16, &[m, k])?;
    let b = dev.tensor_from_slice(&b16, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let grid = [dev.multiprocessors()];
    let time = timed(|| matmul_persistent::<64, 64, 32, 4>::launch(dev, grid, (&a, &b, &mut c)))?;
    let widen = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let want = reference(&widen(&a16), &widen(&b16), (m, n, k));
    Ok(vec![Row {
        kernel: "matmul persistent f16".into(),
        code: dev.kernel_code(&matmul_persistent::<64, 64, 32, 4>::kernel_spec())?,
        shape: format!("[{m}, {k}] x [{k}, {n}], grid {}", grid[0]),
        max_error: max_error(&c.to_vec()?, &want),
        tolerance: 0.0,
        time,
    }])
}
