//! FlagGems' reductions, scans and sorts: `argmax` along a dimension
//! (`argmax_kernel`), `cumsum` (`cumsum_kernel`), `var_mean` along the last
//! dimension (`var_mean_welford_kernel`, Welford's combine in a
//! `tl.reduce`) and `topk` (its two stages, the second FlagGems'
//! hand-written bitonic argsort), each from its module of `flag_gems.ops`.

use crate::{bf16s, check, expect_code, f16s, wide, wide_f16, Rng};
use tile::{bf16, f16, tile_kernel, Device};

// ---------------------------------------------------------------------------
// FlagGems `argmax` along a dimension (`flag_gems/ops/argmax.py`,
// `argmax_kernel`): the input seen as [M, N, K], a program per BLOCK_M
// rows and one `k`, a loop over N in BLOCK_N blocks carrying the running
// maximum (f32 for bf16 input) and its i64 index, the first index on
// ties. Heuristics: BLOCK_M = 4 (M < 4096), BLOCK_N = min(4096,
// next_power_of_2(N)); 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BM = 4, BN = 4096),
    configs(BM = 4, BN = 512),
    allow(spills),
    targets = "sm_80,gfx942,host"
)]
fn argmax_dim<const BM: usize, const BN: usize>(inp: &Tensor<bf16, 3>, out: &mut Tensor<i64, 2>) {
    let pid_m = program_id(0);
    let pid_k = program_id(1);
    let n = inp.dim(1);
    let v = partition_view(inp, [BM, BN, 1]);
    let mut best = full::<f32>([BM], -3.3895313892515355e38);
    let mut at = zeros::<i64>([BM]);
    for start in 0..cdiv(n, BN) {
        let t = v
            .load_masked_with(Padding::Value(-3.3895313892515355e38), pid_m, start, pid_k)
            .reshape([BM, BN])
            .cast::<f32>();
        let local = t.max_along(1);
        let local_at = t.argmax(1);
        let update = local > best;
        best = select(update, local, best);
        at = select(update, (local_at + start * BN).cast::<i64>(), at);
    }
    partition_view(out, [BM, 1]).store_masked(at.reshape([BM, 1]), pid_m, pid_k);
}

/// Case 0: [7, 5000, 3] along dim 1 (BLOCK_N 4096: a full and a partial
/// block); case 1: [300, 37] along dim 0 (M = 1, N = 300, K = 37: BLOCK_N
/// 512).
fn argmax_dim_case(dev: &Device, case: usize) {
    let (m, n, k) = [(7usize, 5000usize, 3usize), (1, 300, 37)][case];
    let mut rng = Rng::new(41 + case as u64);
    let mut xs = bf16s(&rng.take(m * n * k));
    // A maximum in the partial block, and in the last element.
    xs[(n - 1) * k] = bf16::from_f32(7.0);
    xs[((m - 1) * n + 4500.min(n - 2)) * k + k - 1] = bf16::from_f32(5.0);
    let inp = dev.tensor_from_slice(&xs, &[m, n, k]).unwrap();
    let mut out = dev.zeros::<i64>(&[m, k]).unwrap();
    let grid = [m.div_ceil(4) as u32, k as u32];
    if case == 0 {
        expect_code(dev, &argmax_dim::<4, 4096>::kernel_spec());
        argmax_dim::<4, 4096>::launch(dev, grid, (&inp, &mut out)).unwrap();
    } else {
        expect_code(dev, &argmax_dim::<4, 512>::kernel_spec());
        argmax_dim::<4, 512>::launch(dev, grid, (&inp, &mut out)).unwrap();
    }
    let mut want = Vec::new();
    for mi in 0..m {
        for ki in 0..k {
            let mut best = (f32::NEG_INFINITY, 0usize);
            for ni in 0..n {
                let v = xs[(mi * n + ni) * k + ki].to_f32();
                if v > best.0 {
                    best = (v, ni);
                }
            }
            want.push(best.1 as f64);
        }
    }
    let got: Vec<f64> = out.to_vec().unwrap().iter().map(|&v| v as f64).collect();
    // Indices: exact (bf16 has many ties; the first one wins).
    check(
        &format!("argmax_dim [{m}, {n}, {k}]"),
        dev,
        &got,
        &want,
        0.0,
    );
}

fn argmax_dim_run(dev: &Device) {
    argmax_dim_case(dev, 0);
}

fn argmax_dim0_run(dev: &Device) {
    argmax_dim_case(dev, 1);
}

probe!(argmax_dim_probe, argmax_dim_run, [argmax_dim<4, 4096>]);

probe!(argmax_dim0_probe, argmax_dim0_run, [argmax_dim<4, 512>]);

// ---------------------------------------------------------------------------
// FlagGems `cumsum` (`flag_gems/ops/cumsum.py` at 02af25e,
// `cumsum_kernel`): the input seen as [M, N, K], a [BLOCK_M, BLOCK_N, 1]
// tile per program scanned along its middle axis in f32 (an inclusive
// scan along a strided axis of a 3-D view), stored in the input dtype.
// BLOCK_N = next_power_of_2(N); the autotuner's BLOCK_M 8 or 32, 8 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BM = 8, BN = 128),
    configs(BM = 32, BN = 128),
    num_warps = 8,
    targets = "sm_80,gfx942,host"
)]
fn cumsum_dim<const BM: usize, const BN: usize>(inp: &Tensor<f16, 3>, out: &mut Tensor<f16, 3>) {
    let pid_m = program_id(0);
    let pid_k = program_id(1);
    let t = partition_view(inp, [BM, BN, 1])
        .load_masked(pid_m, 0, pid_k)
        .cast::<f32>();
    partition_view(out, [BM, BN, 1]).store_masked(t.cumsum(1).cast::<f16>(), pid_m, 0, pid_k);
}

fn cumsum_dim_run(dev: &Device) {
    for (case, &(m, n, k, bm)) in [
        (13usize, 100usize, 3usize, 8usize),
        (13, 100, 3, 32),
        (5, 100, 1, 8),
    ]
    .iter()
    .enumerate()
    {
        let mut rng = Rng::new(51 + case as u64);
        let xs = f16s(&rng.take(m * n * k));
        let inp = dev.tensor_from_slice(&xs, &[m, n, k]).unwrap();
        let mut out = dev.zeros::<f16>(&[m, n, k]).unwrap();
        let grid = [m.div_ceil(bm) as u32, k as u32];
        if bm == 8 {
            expect_code(dev, &cumsum_dim::<8, 128>::kernel_spec());
            cumsum_dim::<8, 128>::launch(dev, grid, (&inp, &mut out)).unwrap();
        } else {
            expect_code(dev, &cumsum_dim::<32, 128>::kernel_spec());
            cumsum_dim::<32, 128>::launch(dev, grid, (&inp, &mut out)).unwrap();
        }
        let xf = wide_f16(&xs);
        let mut want = vec![0.0; xf.len()];
        for mi in 0..m {
            for ki in 0..k {
                let mut acc = 0.0;
                for ni in 0..n {
                    acc += xf[(mi * n + ni) * k + ki];
                    want[(mi * n + ni) * k + ki] = acc;
                }
            }
        }
        // An f32 scan of ≤ 100 terms (~1e-6), then one f16 rounding (2⁻¹¹).
        check(
            &format!("cumsum_dim [{m}, {n}, {k}] BLOCK_M {bm}"),
            dev,
            &wide_f16(&out.to_vec().unwrap()),
            &want,
            6e-4,
        );
    }
}

probe!(cumsum_dim_probe, cumsum_dim_run, [cumsum_dim<8, 128>]);

// ---------------------------------------------------------------------------
// FlagGems `var_mean` along the last dimension (`flag_gems/ops/
// var_mean.py`, `var_mean_welford_kernel`): BLOCK_M rows a program,
// Welford's running mean, M2 and count as [BLOCK_M, BLOCK_N] tiles
// carried over the column blocks (masks as f32), folded with a custom
// combine of three tiles (`tl.reduce((mean, count, m2), 1, welford)`).
// One point of the tuning space: BLOCK_M 4, BLOCK_N 1024, 8 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BM = 4, BN = 1024),
    num_warps = 8,
    targets = "sm_80,gfx942,host"
)]
fn var_mean_welford<const BM: usize, const BN: usize>(
    x: &Tensor<f32, 2>,
    var: &mut Tensor<f32>,
    mean: &mut Tensor<f32>,
    correction: f32,
) {
    let pid = program_id(0);
    let n = x.dim(1);
    let rows = iota::<i32>([BM, 1]) + pid * BM;
    let row_mask = rows < x.dim(0);
    let vx = partition_view(x, [BM, BN]);
    let mut m = zeros::<f32>([BM, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    let mut cnt = zeros::<f32>([BM, BN]);
    for j in 0..cdiv(n, BN) {
        let cols = iota::<i32>([1, BN]) + j * BN;
        let mask = (row_mask & (cols < n)).cast::<f32>();
        let xt = vx.load_masked(pid, j);
        let count = cnt + mask;
        let c = count.max(1.0);
        let cur = (m * cnt + xt) / c;
        acc += (xt - cur) * (xt - m) * mask;
        m = cur;
        cnt = count;
    }
    let (mean_r, _, m2) = reduce((m, cnt, acc), 1, |(mx, cx, ax), (my, cy, ay)| {
        let count = cx + cy;
        let c = count.max(1.0);
        let mcx = mx * cx;
        let mcy = my * cy;
        let mean = (mcx + mcy) / c;
        (
            mean,
            count,
            ax + mcx * mx + ay + mcy * my - count * mean * mean,
        )
    });
    let v = m2 / ((n as f32) - correction);
    partition_view(mean, [BM]).store_masked(mean_r, pid);
    partition_view(var, [BM]).store_masked(v, pid);
}

fn var_mean_welford_run(dev: &Device) {
    let (m, n) = (9usize, 2500usize);
    let mut rng = Rng::new(91);
    let xs: Vec<f32> = rng.take(m * n).iter().map(|v| v + 0.5).collect();
    let x = dev.tensor_from_slice(&xs, &[m, n]).unwrap();
    let mut var = dev.zeros::<f32>(&[m]).unwrap();
    let mut mean = dev.zeros::<f32>(&[m]).unwrap();
    expect_code(dev, &var_mean_welford::<4, 1024>::kernel_spec());
    var_mean_welford::<4, 1024>::launch(
        dev,
        [m.div_ceil(4) as u32],
        (&x, &mut var, &mut mean, 1.0f32),
    )
    .unwrap();
    let (mut want_var, mut want_mean) = (Vec::new(), Vec::new());
    for row in xs.chunks(n) {
        let mu = row.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
        let m2 = row
            .iter()
            .map(|&v| (f64::from(v) - mu).powi(2))
            .sum::<f64>();
        want_mean.push(mu);
        want_var.push(m2 / (n as f64 - 1.0));
    }
    // The combine folds 1024 lanes' `count·mean²` terms (Σx² ≈ 2500·1.6)
    // and subtracts `count·mean²` in f32: ~1e-4 of var ≈ 1.3.
    check(
        "var_mean_welford mean",
        dev,
        &wide(&mean.to_vec().unwrap()),
        &want_mean,
        1e-5,
    );
    check(
        "var_mean_welford var",
        dev,
        &wide(&var.to_vec().unwrap()),
        &want_var,
        5e-4,
    );
}

probe!(
    var_mean_welford_probe,
    var_mean_welford_run,
    [var_mean_welford<4, 1024>]
);

// ---------------------------------------------------------------------------
// FlagGems `topk` (`flag_gems/ops/topk.py`): stage 1, a program per
// (row, chunk of CHUNK_SIZE = 1024), picks the chunk's k largest by k
// rounds of max + argmax, masking each pick (a loop-carried tile,
// scalar stores at runtime offsets); stage 2, a program per row, sorts
// the chunks' candidates with FlagGems' hand-written bitonic argsort
// (Triton 2.2's `sort` with indices): reshapes to [2^i, 2, 2^(n-i-1)],
// masked sums along the middle axis, bitcasts to i32 and xors.
// Default 4 warps; BLOCK_SIZE = next_power_of_2(chunks · k) = 16.
// ---------------------------------------------------------------------------

#[tile_kernel(configs(CHUNK = 1024), targets = "sm_80,gfx942,host")]
fn topk_stage1<const CHUNK: usize>(
    y: &mut Tensor<f32, 2>,
    index: &mut Tensor<i64, 2>,
    x: &Tensor<f32, 2>,
    k: i32,
) {
    let cur_batch = program_id(0);
    let cur_chunk = program_id(1);
    let chunk_offset = cur_chunk * CHUNK;
    let cols = iota::<i32>([CHUNK]);
    let mut x_val = partition_view(x, [1, CHUNK])
        .load_masked_with(Padding::Value(-3.4028234663852886e38), cur_batch, cur_chunk)
        .reshape([CHUNK]);
    let vy = partition_view(y, [1, 1]);
    let vi = partition_view(index, [1, 1]);
    for k_idx in 0..k {
        let val = x_val.max_along(0);
        let at = x_val.argmax(0);
        vy.store(val, cur_batch, cur_chunk * k + k_idx);
        vi.store(
            (at + chunk_offset).cast::<i64>(),
            cur_batch,
            cur_chunk * k + k_idx,
        );
        x_val = select(cols == at, -3.4028234663852886e38f32, x_val);
    }
}

#[tile_kernel(configs(BLOCK = 16, K = 5), targets = "sm_80,gfx942,host")]
fn topk_stage2<const BLOCK: usize, const K: usize>(
    y: &mut Tensor<f32, 2>,
    index: &mut Tensor<i64, 2>,
    chunk_x: &Tensor<f32, 2>,
    chunk_index: &Tensor<i64, 2>,
) {
    #[tile_fn]
    fn compare_and_swap(x: Tile, ids: Tile, flip: Tile, i: Const, n_dims: Const) -> (Tile, Tile) {
        let outer = 1 << i;
        let inner = 1 << (n_dims - i - 1);
        let y = x.reshape([outer, 2, inner]);
        let y_idx = ids.reshape([outer, 2, inner]);
        let mask = iota::<i32>([1, 2, 1]);
        let left = (y * (1 - mask).cast::<f32>())
            .sum_keepdim(1)
            .broadcast_to([outer, 2, inner])
            .reshape([BLOCK]);
        let right = (y * mask.cast::<f32>())
            .sum_keepdim(1)
            .broadcast_to([outer, 2, inner])
            .reshape([BLOCK]);
        let left_idx = (y_idx * (1 - mask))
            .sum_keepdim(1)
            .broadcast_to([outer, 2, inner])
            .reshape([BLOCK]);
        let right_idx = (y_idx * mask)
            .sum_keepdim(1)
            .broadcast_to([outer, 2, inner])
            .reshape([BLOCK]);
        let cond = (left > right) ^ flip;
        let ix = x.bitcast::<i32>();
        let ret = ix ^ select(cond, left.bitcast::<i32>() ^ right.bitcast::<i32>(), 0);
        let ret_idx = ids ^ select(cond, left_idx ^ right_idx, 0);
        (ret.bitcast::<f32>(), ret_idx)
    }
    #[tile_fn]
    fn alternating(stage: Const, n_dims: Const) -> Tile {
        let outer = 1 << (n_dims - 1 - stage);
        let inner = 1 << stage;
        iota::<i32>([1, 2, 1])
            .broadcast_to([outer, 2, inner])
            .reshape([BLOCK])
            == 1
    }
    let cur_batch = program_id(0);
    let n = chunk_x.dim(1);
    let cols = iota::<i32>([BLOCK]);
    let x0 = partition_view(chunk_x, [1, BLOCK])
        .load_masked_with(Padding::Value(-3.4028234663852886e38), cur_batch, 0)
        .reshape([BLOCK]);
    let i0 = partition_view(chunk_index, [1, BLOCK])
        .load_masked(cur_batch, 0)
        .reshape([BLOCK])
        .cast::<i32>();
    let i0 = select(cols < n, i0, i32::MIN);
    // argsort, n_dims = 4, descending: stages 1..3 alternate, stage 4 descends.
    let (x1, i1) = compare_and_swap(x0, i0, alternating(1, 4), 3, 4);
    let f2 = alternating(2, 4);
    let (x2, i2) = compare_and_swap(x1, i1, f2, 2, 4);
    let (x2, i2) = compare_and_swap(x2, i2, f2, 3, 4);
    let f3 = alternating(3, 4);
    let (x3, i3) = compare_and_swap(x2, i2, f3, 1, 4);
    let (x3, i3) = compare_and_swap(x3, i3, f3, 2, 4);
    let (x3, i3) = compare_and_swap(x3, i3, f3, 3, 4);
    let f4 = full::<bool>([BLOCK], true);
    let (x4, i4) = compare_and_swap(x3, i3, f4, 0, 4);
    let (x4, i4) = compare_and_swap(x4, i4, f4, 1, 4);
    let (x4, i4) = compare_and_swap(x4, i4, f4, 2, 4);
    let (x4, i4) = compare_and_swap(x4, i4, f4, 3, 4);
    let first_k = partition_view(y.window([cur_batch, 0], [1, K]), [1, BLOCK]);
    first_k.store_masked(x4.reshape([1, BLOCK]), 0, 0);
    let first_k_idx = partition_view(index.window([cur_batch, 0], [1, K]), [1, BLOCK]);
    first_k_idx.store_masked(i4.cast::<i64>().reshape([1, BLOCK]), 0, 0);
}

fn topk_run(dev: &Device) {
    let (batch, n, k, chunk) = (3usize, 3000usize, 5usize, 1024usize);
    let chunks = n.div_ceil(chunk);
    let mut rng = Rng::new(151);
    let xs: Vec<f32> = rng.take(batch * n).iter().map(|v| v * 100.0).collect();
    let x = dev.tensor_from_slice(&xs, &[batch, n]).unwrap();
    let mut stage1 = dev.zeros::<f32>(&[batch, chunks * k]).unwrap();
    let mut stage1_idx = dev.zeros::<i64>(&[batch, chunks * k]).unwrap();
    let mut out = dev.zeros::<f32>(&[batch, k]).unwrap();
    let mut out_idx = dev.zeros::<i64>(&[batch, k]).unwrap();
    expect_code(dev, &topk_stage1::<1024>::kernel_spec());
    topk_stage1::<1024>::launch(
        dev,
        [batch as u32, chunks as u32],
        (&mut stage1, &mut stage1_idx, &x, k as i32),
    )
    .unwrap();
    topk_stage2::<16, 5>::launch(
        dev,
        [batch as u32],
        (&mut out, &mut out_idx, &stage1, &stage1_idx),
    )
    .unwrap();
    let (mut want, mut want_idx) = (Vec::new(), Vec::new());
    for row in xs.chunks(n) {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| row[b].partial_cmp(&row[a]).unwrap().then(a.cmp(&b)));
        want.extend(order[..k].iter().map(|&i| f64::from(row[i])));
        want_idx.extend(order[..k].iter().map(|&i| i as f64));
    }
    // Selection and sorting move values: exact.
    check(
        "topk values",
        dev,
        &wide(&out.to_vec().unwrap()),
        &want,
        0.0,
    );
    let got_idx: Vec<f64> = out_idx
        .to_vec()
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect();
    check("topk indices", dev, &got_idx, &want_idx, 0.0);
}

probe!(topk_probe, topk_run, [topk_stage1<1024>, topk_stage2<16, 5>]);
