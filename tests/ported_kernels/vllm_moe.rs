//! vLLM's fused mixture-of-experts matmul
//! (`vllm/model_executor/layers/fused_moe/fused_moe.py`, `fused_moe_kernel`,
//! the unquantized path with `MUL_ROUTED_WEIGHT`): the rows of the
//! activations that `moe_align_block_size` sorted by expert are gathered
//! block by block, multiplied by their expert's weights, scaled by their
//! routing weights and scattered back to the rows of their (token, slot).
//! vLLM's default configuration for more tokens than experts: blocks of
//! 64 × 64 × 32, `GROUP_SIZE_M` 8, 4 warps.

use crate::{check, expect_code, f16s, wide_f16, Rng};
use tile::{f16, tile_kernel, Device};

#[tile_kernel(
    configs(BM = 64, BN = 64, BK = 32, GROUP_M = 8, TOPK = 2),
    num_warps = 4,
    targets = "sm_80,gfx942,host"
)]
fn fused_moe<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const GROUP_M: usize,
    const TOPK: usize,
>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 3>,
    c: &mut Tensor<f16, 2>,
    topk_weights: &Tensor<f32>,
    sorted_token_ids: &Tensor<i32>,
    expert_ids: &Tensor<i32>,
    num_tokens_post_padded: &Tensor<i32>,
) {
    let pid = program_id(0);
    let (n, k) = (b.dim(1), b.dim(2));
    let num_pid_m = cdiv(sorted_token_ids.dim(0), BM);
    let num_pid_n = cdiv(n, BN);
    let num_pid_in_group = GROUP_M * num_pid_n;
    let first_pid_m = (pid / num_pid_in_group) * GROUP_M;
    let group_size_m = min(num_pid_m - first_pid_m, GROUP_M);
    let pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m;
    let pid_n = (pid % num_pid_in_group) / group_size_m;
    if pid_m * BM >= gather(num_tokens_post_padded, [0]) {
        return;
    }
    // The block's (token, slot) rows; padding holds `M · TOPK`.
    let offs_token = partition_view(sorted_token_ids, [BM]).load(pid_m);
    let token_mask = (offs_token < topk_weights.dim(0)).reshape([BM, 1]);
    let rows = (offs_token / TOPK).reshape([BM, 1]);
    let expert = gather(expert_ids, [pid_m]);
    let vb = partition_view(b, [1, BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kb in 0..cdiv(k, BK) {
        let ks = iota::<i32>([1, BK]) + kb * BK;
        let at = gather(a, [rows, ks], token_mask & (ks < k), 0.0);
        let bt = vb.load_masked(expert, pid_n, kb).reshape([BN, BK]);
        acc = dot(at, bt.transpose(), acc);
    }
    let weight = gather(topk_weights, [offs_token.reshape([BM, 1])], token_mask, 0.0);
    let cols = iota::<i32>([1, BN]) + pid_n * BN;
    let out_rows = offs_token.reshape([BM, 1]);
    let written = token_mask & (cols < n);
    scatter(c, [out_rows, cols], (acc * weight).cast::<f16>(), written);
}

/// What `moe_align_block_size` makes of `topk_ids` for `experts` experts
/// and blocks of `block`: each expert's (token, slot) indices in order from
/// a block-aligned start, the rest of the `len` ids `topk_ids.len()`; the
/// expert of each block; the padded total.
fn aligned_blocks(
    topk_ids: &[usize],
    experts: usize,
    block: usize,
    len: usize,
) -> (Vec<i32>, Vec<i32>, i32) {
    let numel = topk_ids.len();
    let mut sorted = vec![numel as i32; len];
    let mut expert_of_block = vec![0i32; len / block];
    let mut start = 0;
    for e in 0..experts {
        let mine: Vec<usize> = (0..numel).filter(|&i| topk_ids[i] == e).collect();
        for (j, &i) in mine.iter().enumerate() {
            sorted[start + j] = i as i32;
        }
        let end = start + mine.len().div_ceil(block) * block;
        expert_of_block[start / block..end / block].fill(e as i32);
        start = end;
    }
    (sorted, expert_of_block, start as i32)
}

fn fused_moe_run(dev: &Device) {
    // 37 tokens × top-2 of 8 experts; K 96 (three blocks), N 160 (a
    // partial block).
    let (tokens, topk, experts, k, n, block) = (37usize, 2usize, 8usize, 96usize, 160usize, 64);
    let mut rng = Rng::new(211);
    let mut ids = Vec::new();
    for _ in 0..tokens {
        let first = rng.below(experts);
        ids.extend([first, (first + 1 + rng.below(experts - 1)) % experts]);
    }
    let numel = tokens * topk;
    let len = numel + experts * (block - 1);
    let (sorted, expert_of_block, padded) = aligned_blocks(&ids, experts, block, len);
    let a_h = f16s(&rng.take(tokens * k));
    let b_h = f16s(&rng.take(experts * n * k));
    let weights: Vec<f32> = rng.take(numel).iter().map(|v| v.abs() / 2.0).collect();
    let a = dev.tensor_from_slice(&a_h, &[tokens, k]).unwrap();
    let b = dev.tensor_from_slice(&b_h, &[experts, n, k]).unwrap();
    let mut c = dev.full::<f16>(&[numel, n], f16::from_f32(-7.0)).unwrap();
    let w = dev.tensor_from_slice(&weights, &[numel]).unwrap();
    let sorted_t = dev.tensor_from_slice(&sorted, &[len]).unwrap();
    let experts_t = dev
        .tensor_from_slice(&expert_of_block, &[len / block])
        .unwrap();
    let padded_t = dev.tensor_from_slice(&[padded], &[1]).unwrap();
    let grid = [(len.div_ceil(block) * n.div_ceil(64)) as u32];
    expect_code(dev, &fused_moe::<64, 64, 32, 8, 2>::kernel_spec());
    fused_moe::<64, 64, 32, 8, 2>::launch(
        dev,
        grid,
        (&a, &b, &mut c, &w, &sorted_t, &experts_t, &padded_t),
    )
    .unwrap();
    // Row `i` of C is token `i / topk` through expert `ids[i]`, scaled by
    // `weights[i]`: every row is written, each once.
    let (a_w, b_w) = (wide_f16(&a_h), wide_f16(&b_h));
    let mut want = vec![0.0f64; numel * n];
    for i in 0..numel {
        let (t, e) = (i / topk, ids[i]);
        for j in 0..n {
            let dot: f64 = (0..k)
                .map(|kk| a_w[t * k + kk] * b_w[(e * n + j) * k + kk])
                .sum();
            let scaled = f64::from(dot as f32 * weights[i]);
            want[i * n + j] = f64::from(f16::from_f64(scaled).to_f32());
        }
    }
    check(
        "fused_moe",
        dev,
        &wide_f16(&c.to_vec().unwrap()),
        &want,
        2e-3,
    );
}

probe!(
    fused_moe_probe,
    fused_moe_run,
    [fused_moe<64, 64, 32, 8, 2>]
);
