//! vLLM's fused mixture-of-experts matmul in Triton
//! (`vllm/model_executor/layers/fused_moe/fused_moe.py`, read at
//! 000d1458098ebf47491dad470d164d443ab18a9c, `fused_moe_kernel` without
//! quantization): the token copies routed to the experts are sorted by
//! expert and padded to whole blocks of `BM` (`moe_align_block_size`,
//! computed on the host here); a program per block of copies and block of
//! `BN` output columns gathers its tokens' rows of `a`, multiplies them by
//! its expert's weights (`b` stored `[E, N, K]`, read transposed), scales
//! each row by its routing weight (`MUL_ROUTED_WEIGHT`) and scatters the
//! bf16 rows to the copies' rows of `c`. Blocks past the padded count
//! return at once; a block of expert `-1` (another rank's, under expert
//! parallelism) writes zeros. The tiles are the launcher's default for more
//! tokens than experts: 64×64×32, groups of 8 row blocks, with Triton's
//! default 4 warps and 3 stages; `top_k` 2.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BM = 64, BN = 64, BK = 32, GROUP = 8, TOPK = 2),
    num_warps = 4,
    num_stages = 3,
    aligned(a, b, c),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn fused_moe<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const GROUP: usize,
    const TOPK: usize,
>(
    a: &Tensor<bf16, 2>,
    b: &Tensor<bf16, 3>,
    c: &mut Tensor<bf16, 2>,
    topk_weights: &Tensor<f32>,
    sorted_token_ids: &Tensor<i32>,
    expert_ids: &Tensor<i32>,
    num_tokens_post_padded: &Tensor<i32>,
    num_valid_tokens: i32,
) {
    let pid = program_id(0);
    let (tiles_m, tiles_n) = (cdiv(sorted_token_ids.dim(0), BM), cdiv(b.dim(1), BN));
    let group = GROUP * tiles_n;
    let first_m = (pid / group) * GROUP;
    let rows = (tiles_m - first_m).min(GROUP);
    let (pid_m, pid_n) = (first_m + (pid % group) % rows, (pid % group) / rows);
    if pid_m * BM >= gather(num_tokens_post_padded, [0]) {
        return;
    }
    let tokens = partition_view(sorted_token_ids, [BM])
        .load(pid_m)
        .reshape([BM, 1]);
    let valid = tokens < num_valid_tokens;
    let cols = iota::<i32>([1, BN]) + pid_n * BN;
    let written = valid & (cols < b.dim(1));
    let expert = gather(expert_ids, [pid_m]);
    if expert == -1 {
        scatter(c, [tokens, cols], zeros::<bf16>([BM, BN]), written);
        return;
    }
    let vb = partition_view(b, [1, BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        let ks = iota::<i32>([1, BK]) + kk * BK;
        let rows_a = gather(a, [tokens / TOPK, ks], valid & (ks < a.dim(1)), 0.0);
        let weights = vb.load_masked(expert, pid_n, kk).reshape([BN, BK]);
        acc = dot(rows_a, weights.transpose(), acc);
    }
    let routed = gather(topk_weights, [tokens], valid, 0.0);
    scatter(c, [tokens, cols], (acc * routed).cast::<bf16>(), written);
}

/// The host side of vLLM's `moe_align_block_size`: the token copies
/// (`token · top_k + k`) of each expert in order, each expert's padded to a
/// whole number of blocks with `count` (an id past every copy), the expert
/// of each block, and the padded total.
fn align_blocks(routes: &[usize], experts: usize, block: usize) -> (Vec<i32>, Vec<i32>, usize) {
    let (mut sorted, mut block_experts) = (Vec::new(), Vec::new());
    for e in 0..experts {
        let copies: Vec<i32> = (0..routes.len())
            .filter(|&t| routes[t] == e)
            .map(|t| t as i32)
            .collect();
        let blocks = copies.len().div_ceil(block);
        sorted.extend(&copies);
        sorted.resize(
            sorted.len() + blocks * block - copies.len(),
            routes.len() as i32,
        );
        block_experts.extend(std::iter::repeat_n(e as i32, blocks));
    }
    let padded = sorted.len();
    (sorted, block_experts, padded)
}

/// 45 tokens routed to 2 of 6 experts each (rows of 96, 80 outputs): some
/// experts' blocks are partial, and the last blocks of `sorted_token_ids`
/// (as vLLM sizes it for the worst case) lie past the padded count. One
/// block's expert is `-1`, whose copies' rows come out zero.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, k, n, experts, top_k, block) = (45, 96, 80, 6, 2, 64);
    let a_in = bf16s(&rng.take(m * k));
    let b_in = bf16s(&rng.take(experts * n * k));
    let routes: Vec<usize> = (0..m * top_k)
        .map(|t| (t / top_k * 5 + t % top_k * 3) % experts)
        .collect();
    let weights_in: Vec<f32> = rng.take(m * top_k).iter().map(|v| 0.5 + v.abs()).collect();
    let (mut sorted, mut block_experts, padded) = align_blocks(&routes, experts, block);
    block_experts[1] = -1;
    // vLLM's buffers hold the most blocks any routing can need.
    let capacity = (m * top_k + experts * (block - 1)).div_ceil(block) * block;
    sorted.resize(capacity, (m * top_k) as i32);
    block_experts.resize(capacity / block, 0);
    let a = dev.tensor_from_slice(&a_in, &[m, k])?;
    let b = dev.tensor_from_slice(&b_in, &[experts, n, k])?;
    let mut c =
        dev.tensor_from_slice(&vec![bf16::from_f32(7.0); m * top_k * n], &[m * top_k, n])?;
    let weights = dev.tensor_from_slice(&weights_in, &[m * top_k])?;
    let ids = dev.tensor_from_slice(&sorted, &[capacity])?;
    let block_ids = dev.tensor_from_slice(&block_experts, &[capacity / block])?;
    let count = dev.tensor_from_slice(&[padded as i32], &[1])?;
    let grid = [((capacity / block) * n.div_ceil(64)) as u32];
    let valid = (m * top_k) as i32;
    let time = timed(|| {
        let args = (&a, &b, &mut c, &weights, &ids, &block_ids, &count, valid);
        fused_moe::<64, 64, 32, 8, 2>::launch(dev, grid, args)
    })?;
    let (a_f, b_f) = (widen(&a_in), widen(&b_in));
    let zeroed: Vec<i32> = sorted[block..2 * block].to_vec();
    let want: Vec<f64> = (0..m * top_k * n)
        .map(|e| {
            let (t, j) = (e / n, e % n);
            if zeroed.contains(&(t as i32)) {
                return 0.0;
            }
            let (row, expert) = (t / top_k, routes[t]);
            let dot: f64 = (0..k)
                .map(|kk| f64::from(a_f[row * k + kk]) * f64::from(b_f[(expert * n + j) * k + kk]))
                .sum();
            dot * f64::from(weights_in[t])
        })
        .collect();
    Ok(vec![Row {
        kernel: "fused_moe".into(),
        code: dev.kernel_code(&fused_moe::<64, 64, 32, 8, 2>::kernel_spec())?,
        shape: format!("{m} tokens x top {top_k} of {experts} experts, [{k}] -> [{n}] bf16"),
        max_error: max_error(&widen(&c.to_vec()?), &want),
        // The product's bf16 rounding (2⁻⁸ relative) and f32 sums in any order.
        tolerance: 1e-2,
        time,
    }])
}
