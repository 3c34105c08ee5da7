//! FlagGems' BLAS kernels: `bmm` (`bmm_kernel`, a batch of products read
//! through rank-3 views), `mv` (`mv_kernel`, a matrix times a vector as
//! broadcast products summed along the rows) and `addmm` (`addmm_kernel`,
//! `β · bias + α · (A · B)`), each from its module of `flag_gems.ops`, at
//! a configuration from FlagGems' NVIDIA tuning list, on sizes that leave
//! partial blocks along every axis.

use crate::{check, expect_code, f16s, wide_f16, Rng};
use tile::{f16, tile_kernel, Device};

/// `a [m, k] · b [k, n]` in f64, row-major.
fn product(a: &[f64], b: &[f64], (m, n, k): (usize, usize, usize)) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for kk in 0..k {
            let x = a[i * k + kk];
            for j in 0..n {
                c[i * n + j] += x * b[kk * n + j];
            }
        }
    }
    c
}

// ---------------------------------------------------------------------------
// FlagGems `bmm` (`flag_gems/ops/bmm.py`, `bmm_kernel`): A [B, M, K],
// B [B, K, N], O [B, M, N] in f16; a program per output tile of one batch
// (grid `(cdiv(M, TILE_M) · cdiv(N, TILE_N), batch)`), the tiles grouped by
// GROUP_M along M; the K loop's loads masked (`DIVISIBLE_K` false) and
// accumulated in f32; the tile stored masked in f16. TILE 64 × 128 × 32,
// GROUP_M 8, 4 warps, 3 stages.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(TM = 64, TN = 128, TK = 32, GROUP_M = 8),
    num_warps = 4,
    num_stages = 3,
    targets = "sm_80,gfx942,host"
)]
fn bmm<const TM: usize, const TN: usize, const TK: usize, const GROUP_M: usize>(
    a: &Tensor<f16, 3>,
    b: &Tensor<f16, 3>,
    o: &mut Tensor<f16, 3>,
) {
    let (pid, batch) = (program_id(0), program_id(1));
    let (m, n, k) = (a.dim(1), b.dim(2), a.dim(2));
    let grid_m = cdiv(m, TM);
    let grid_n = cdiv(n, TN);
    // FlagGems' grouping: GROUP_M tiles of M, then along N.
    let width = GROUP_M * grid_n;
    let group_id = pid / width;
    let group_size = min(grid_m - group_id * GROUP_M, GROUP_M);
    let pid_m = group_id * GROUP_M + (pid % width) % group_size;
    let pid_n = (pid % width) / group_size;
    let va = partition_view(a, [1, TM, TK]);
    let vb = partition_view(b, [1, TK, TN]);
    let mut acc = zeros::<f32>([TM, TN]);
    for kk in 0..cdiv(k, TK) {
        let x = va.load_masked(batch, pid_m, kk).reshape([TM, TK]);
        let y = vb.load_masked(batch, kk, pid_n).reshape([TK, TN]);
        acc = dot(x, y, acc);
    }
    partition_view(o, [1, TM, TN]).store_masked(
        acc.cast::<f16>().reshape([1, TM, TN]),
        batch,
        pid_m,
        pid_n,
    );
}

fn bmm_run(dev: &Device) {
    let (batch, m, n, k) = (3usize, 70usize, 130usize, 75usize);
    let mut rng = Rng::new(401);
    let xa = f16s(&rng.take(batch * m * k));
    let xb = f16s(&rng.take(batch * k * n));
    let a = dev.tensor_from_slice(&xa, &[batch, m, k]).unwrap();
    let b = dev.tensor_from_slice(&xb, &[batch, k, n]).unwrap();
    let mut o = dev.zeros::<f16>(&[batch, m, n]).unwrap();
    expect_code(dev, &bmm::<64, 128, 32, 8>::kernel_spec());
    let grid = [(m.div_ceil(64) * n.div_ceil(128)) as u32, batch as u32];
    bmm::<64, 128, 32, 8>::launch(dev, grid, (&a, &b, &mut o)).unwrap();
    let (wa, wb) = (wide_f16(&xa), wide_f16(&xb));
    let want: Vec<f64> = (0..batch)
        .flat_map(|i| {
            product(
                &wa[i * m * k..][..m * k],
                &wb[i * k * n..][..k * n],
                (m, n, k),
            )
        })
        .collect();
    // f16 products summed in f32, one f16 rounding (2⁻¹¹ relative).
    check("bmm", dev, &wide_f16(&o.to_vec().unwrap()), &want, 1e-3);
}

probe!(bmm_probe, bmm_run, [bmm<64, 128, 32, 8>]);

// ---------------------------------------------------------------------------
// FlagGems `mv` (`flag_gems/ops/mv.py`, `mv_kernel`): C [N] = A [N, M] ·
// B [M] in f16; a program per BLOCK_N rows, a loop over M in BLOCK_M
// columns accumulating the broadcast products `a · b[None, :]` in an f32
// tile, summed along its rows at the end. BLOCK_N 64, BLOCK_M 64, 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BN = 64, BM = 64),
    num_warps = 4,
    targets = "sm_80,gfx942,host"
)]
fn mv<const BN: usize, const BM: usize>(a: &Tensor<f16, 2>, b: &Tensor<f16>, c: &mut Tensor<f16>) {
    let pid = program_id(0);
    let m = a.dim(1);
    let va = partition_view(a, [BN, BM]);
    let vb = partition_view(b, [BM]);
    let mut acc = zeros::<f32>([BN, BM]);
    for j in 0..cdiv(m, BM) {
        let x = va.load_masked(pid, j).cast::<f32>();
        let y = vb.load_masked(j).cast::<f32>().reshape([1, BM]);
        acc += x * y;
    }
    partition_view(c, [BN]).store_masked(acc.sum(1).cast::<f16>(), pid);
}

fn mv_run(dev: &Device) {
    let (n, m) = (150usize, 333usize);
    let mut rng = Rng::new(402);
    let xa = f16s(&rng.take(n * m));
    let xb = f16s(&rng.take(m));
    let a = dev.tensor_from_slice(&xa, &[n, m]).unwrap();
    let b = dev.tensor_from_slice(&xb, &[m]).unwrap();
    let mut c = dev.zeros::<f16>(&[n]).unwrap();
    expect_code(dev, &mv::<64, 64>::kernel_spec());
    mv::<64, 64>::launch(dev, [n.div_ceil(64) as u32], (&a, &b, &mut c)).unwrap();
    let want = product(&wide_f16(&xa), &wide_f16(&xb), (n, 1, m));
    check("mv", dev, &wide_f16(&c.to_vec().unwrap()), &want, 1e-3);
}

probe!(mv_probe, mv_run, [mv<64, 64>]);

// ---------------------------------------------------------------------------
// FlagGems `addmm` (`flag_gems/ops/addmm.py`, `addmm_kernel`): C [M, N] =
// β · bias + α · (A [M, K] · B [K, N]) in f16, the bias a row of N
// broadcast over M; a program per output tile (grid `(cdiv(M, BLOCK_M),
// cdiv(N, BLOCK_N))`), the K loop's loads masked, the product in f32, α
// and β scalars applied to it and the bias in f32. BLOCK 128 × 64 × 32,
// 4 warps, 3 stages.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BM = 128, BN = 64, BK = 32),
    num_warps = 4,
    num_stages = 3,
    targets = "sm_80,gfx942,host"
)]
fn addmm<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    bias: &Tensor<f16>,
    c: &mut Tensor<f16, 2>,
    alpha: f32,
    beta: f32,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let k = a.dim(1);
    let va = partition_view(a, [BM, BK]);
    let vb = partition_view(b, [BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(k, BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    let row = partition_view(bias, [BN])
        .load_masked(pid_n)
        .cast::<f32>()
        .reshape([1, BN]);
    let out = acc * alpha + row * beta;
    partition_view(c, [BM, BN]).store_masked(out.cast::<f16>(), pid_m, pid_n);
}

fn addmm_run(dev: &Device) {
    let (m, n, k) = (200usize, 90usize, 100usize);
    let (alpha, beta) = (0.75f32, -1.5f32);
    let mut rng = Rng::new(403);
    let xa = f16s(&rng.take(m * k));
    let xb = f16s(&rng.take(k * n));
    let xbias = f16s(&rng.take(n));
    let a = dev.tensor_from_slice(&xa, &[m, k]).unwrap();
    let b = dev.tensor_from_slice(&xb, &[k, n]).unwrap();
    let bias = dev.tensor_from_slice(&xbias, &[n]).unwrap();
    let mut c = dev.zeros::<f16>(&[m, n]).unwrap();
    expect_code(dev, &addmm::<128, 64, 32>::kernel_spec());
    let grid = [m.div_ceil(128) as u32, n.div_ceil(64) as u32];
    addmm::<128, 64, 32>::launch(dev, grid, (&a, &b, &bias, &mut c, alpha, beta)).unwrap();
    let wbias = wide_f16(&xbias);
    let want: Vec<f64> = product(&wide_f16(&xa), &wide_f16(&xb), (m, n, k))
        .iter()
        .enumerate()
        .map(|(i, &p)| f64::from(alpha) * p + f64::from(beta) * wbias[i % n])
        .collect();
    check("addmm", dev, &wide_f16(&c.to_vec().unwrap()), &want, 1e-3);
}

probe!(addmm_probe, addmm_run, [addmm<128, 64, 32>]);
