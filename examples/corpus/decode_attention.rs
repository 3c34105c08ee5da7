//! Decoding attention's first stage as SGLang computes it
//! (`python/sglang/srt/layers/attention/triton_ops/decode_attention.py`,
//! read at 03cd2ec4, `_fwd_kernel_stage1`, no logit cap or temperature):
//! one new query per sequence attends to the sequence's keys and values,
//! which lie anywhere in a pool of token slots (pages of one token), named
//! by `kv_indices[kv_indptr[b]..kv_indptr[b + 1]]`. A program per
//! sequence, head and split of the sequence walks its split in blocks of
//! `BN` slots, gathering their rows of keys and values, with a running
//! maximum and sum; it stores its split's normalized output and
//! log-sum-exp for the second stage to merge. The launcher's configuration
//! for heads that share no keys (`kv_group_num` 1): blocks of 64 slots,
//! splits a multiple of 32 long, 4 warps, 2 stages.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(D = 128, BN = 64, MIN_BLOCK_KV = 32, GROUP = 1),
    num_warps = 4,
    num_stages = 2,
    aligned(q, k_buf, v_buf, att_out),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn decode_attention<
    const D: usize,
    const BN: usize,
    const MIN_BLOCK_KV: usize,
    const GROUP: usize,
>(
    q: &Tensor<bf16, 3>,
    k_buf: &Tensor<bf16, 3>,
    v_buf: &Tensor<bf16, 3>,
    sm_scale: f32,
    kv_indptr: &Tensor<i32>,
    kv_indices: &Tensor<i32>,
    att_out: &mut Tensor<f32, 4>,
    att_lse: &mut Tensor<f32, 3>,
    num_kv_splits: &Tensor<i32>,
) {
    let (batch, head, split) = (program_id(0), program_id(1), program_id(2));
    let kv_head = head / GROUP;
    let offs_d = iota::<i32>([1, D]);
    let start = gather(kv_indptr, [batch]);
    let seq = gather(kv_indptr, [batch + 1]) - start;
    let splits = gather(num_kv_splits, [batch]);
    let per_split = cdiv(cdiv(seq, splits), MIN_BLOCK_KV) * MIN_BLOCK_KV;
    let lo = per_split * split;
    let hi = min(lo + per_split, seq);
    let mut e_max = f32::NEG_INFINITY;
    let mut e_sum = 0.0f32;
    let mut acc = zeros::<f32>([1, D]);
    if hi > lo {
        let qv = partition_view(q, [1, 1, D])
            .load(batch, head, 0)
            .reshape([1, D]);
        for start_n in (lo..hi).step_by(BN) {
            let offs_n = iota::<i32>([BN, 1]) + start_n;
            let live = offs_n < hi;
            let loc = gather(kv_indices, [offs_n + start], live, 0);
            let heads = full([BN, D], kv_head);
            let k = gather(k_buf, [loc, heads, offs_d], live, 0.0);
            let qk = (qv * k).cast::<f32>().sum_keepdim(1) * sm_scale;
            let qk = select(live, qk, f32::NEG_INFINITY);
            let v = gather(v_buf, [loc, heads, offs_d], live, 0.0);
            let n_e_max = qk.max_along(0).max_along(0).max(e_max);
            let re_scale = (e_max - n_e_max).exp();
            let p = (qk - n_e_max).exp();
            acc = acc * re_scale + (p * v.cast::<f32>()).sum_keepdim(0);
            e_sum = e_sum * re_scale + p.sum(0).sum(0);
            e_max = n_e_max;
        }
        partition_view(att_out, [1, 1, 1, D]).store(
            (acc / e_sum).reshape([1, 1, 1, D]),
            batch,
            head,
            split,
            0,
        );
        scatter(att_lse, [batch, head, split], e_max + e_sum.ln());
    }
}

/// A split of one head's attention in f64: the output row and
/// log-sum-exp over the slots `slots`, the scores summed from the
/// products rounded to bf16 (as the kernel's bf16 product is).
fn split_reference(
    (q, k, v): (&[f32], &[f32], &[f32]),
    (row, head, heads, d): (usize, usize, usize, usize),
    slots: &[usize],
    scale: f64,
) -> (Vec<f64>, f64) {
    let scores: Vec<f64> = slots
        .iter()
        .map(|&t| {
            let dot: f64 = (0..d)
                .map(|x| {
                    let product = q[(row * heads + head) * d + x] * k[(t * heads + head) * d + x];
                    f64::from(bf16::from_f32(product).to_f32())
                })
                .sum();
            dot * scale
        })
        .collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = scores.iter().map(|s| (s - max).exp()).sum();
    let out = (0..d)
        .map(|x| {
            let weighted: f64 = slots
                .iter()
                .zip(&scores)
                .map(|(&t, s)| (s - max).exp() * f64::from(v[(t * heads + head) * d + x]))
                .sum();
            weighted / sum
        })
        .collect();
    (out, max + sum.ln())
}

/// Two sequences of 70 and 150 tokens, 4 heads of 128, their slots
/// scattered over a pool of 400, in 4 and 3 splits of a 4-split grid: the
/// splits end inside blocks, and the last of the second sequence is empty
/// (its outputs keep what was there).
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (heads, d, pool, grid_splits) = (4, 128, 400, 4);
    let (lens, splits) = ([70usize, 150], [4usize, 3]);
    let batch = lens.len();
    let indptr: Vec<i32> = [0, lens[0], lens[0] + lens[1]]
        .iter()
        .map(|&n| n as i32)
        .collect();
    let indices: Vec<i32> = (0..lens[0] + lens[1])
        .map(|i| ((i * 37 + 11) % pool) as i32)
        .collect();
    let q_in = bf16s(&rng.take(batch * heads * d));
    let k_in = bf16s(&rng.take(pool * heads * d));
    let v_in = bf16s(&rng.take(pool * heads * d));
    let q = dev.tensor_from_slice(&q_in, &[batch, heads, d])?;
    let k = dev.tensor_from_slice(&k_in, &[pool, heads, d])?;
    let v = dev.tensor_from_slice(&v_in, &[pool, heads, d])?;
    let kv_indptr = dev.tensor_from_slice(&indptr, &[batch + 1])?;
    let kv_indices = dev.tensor_from_slice(&indices, &[indices.len()])?;
    let splits_in: Vec<i32> = splits.iter().map(|&s| s as i32).collect();
    let num_kv_splits = dev.tensor_from_slice(&splits_in, &[batch])?;
    let cells = batch * heads * grid_splits;
    let mut out =
        dev.tensor_from_slice(&vec![7.0f32; cells * d], &[batch, heads, grid_splits, d])?;
    let mut lse = dev.tensor_from_slice(&vec![7.0f32; cells], &[batch, heads, grid_splits])?;
    let scale = 1.0 / (d as f32).sqrt();
    let grid = [batch as u32, heads as u32, grid_splits as u32];
    let time = timed(|| {
        let args = (
            &q,
            &k,
            &v,
            scale,
            &kv_indptr,
            &kv_indices,
            &mut out,
            &mut lse,
            &num_kv_splits,
        );
        decode_attention::<128, 64, 32, 1>::launch(dev, grid, args)
    })?;
    let (qf, kf, vf) = (widen(&q_in), widen(&k_in), widen(&v_in));
    let (mut want_out, mut want_lse) = (vec![7.0f64; cells * d], vec![7.0f64; cells]);
    for (b, &len) in lens.iter().enumerate() {
        let per_split = len.div_ceil(splits[b]).div_ceil(32) * 32;
        for h in 0..heads {
            for s in 0..grid_splits {
                let (lo, hi) = (per_split * s, (per_split * (s + 1)).min(len));
                if hi <= lo {
                    continue;
                }
                let slots: Vec<usize> = (lo..hi)
                    .map(|n| indices[indptr[b] as usize + n] as usize)
                    .collect();
                let at = (b * heads + h) * grid_splits + s;
                let (row, lse_at) =
                    split_reference((&qf, &kf, &vf), (b, h, heads, d), &slots, f64::from(scale));
                want_out[at * d..][..d].copy_from_slice(&row);
                want_lse[at] = lse_at;
            }
        }
    }
    let got_out: Vec<f32> = out.to_vec()?;
    let got_lse: Vec<f32> = lse.to_vec()?;
    let max_error = max_error(&got_out, &want_out).max(max_error(&got_lse, &want_lse));
    Ok(vec![Row {
        kernel: "decode_attention".into(),
        code: dev.kernel_code(&decode_attention::<128, 64, 32, 1>::kernel_spec())?,
        shape: format!("2 sequences (70, 150 tokens) of {heads} heads x {d}, pool of {pool}"),
        max_error,
        // f32 sums in any order, one-instruction exp and log.
        tolerance: 1e-5,
        time,
    }])
}
