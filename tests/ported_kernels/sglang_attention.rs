//! SGLang's attention kernels, from `sglang.srt.layers.attention.triton_ops`:
//! `merge_state_kernel` (two attention outputs merged by their log-sum-exps)
//! and the grouped decode attention of `decode_attention`
//! (`_fwd_grouped_kernel_stage1` and `_fwd_kernel_stage2`).

use crate::{bf16s, check, expect_code, wide, wide_bf16, Rng};
use tile::{bf16, tile_kernel, Device};

// ---------------------------------------------------------------------------
// SGLang `merge_state` (`sglang/srt/layers/attention/triton_ops/
// merge_state.py`, `merge_state_kernel`): per (token, head) the
// prefix's and suffix's attention outputs merged by their log-sum-exps
// (a +inf lse counts as −inf), scalar branches on uniform values, the
// head padded to a power of two (80 → 128); bf16 outputs, f32 lse.
// Grid (tokens, heads), Triton's default 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(PADDED = 128, OUTPUT_LSE = 1),
    approx_math,
    targets = "sm_80,gfx942,host"
)]
fn merge_state<const PADDED: usize, const OUTPUT_LSE: usize>(
    output: &mut Tensor<bf16, 3>,
    output_lse: &mut Tensor<f32, 2>,
    prefix_output: &Tensor<bf16, 3>,
    prefix_lse: &Tensor<f32, 2>,
    suffix_output: &Tensor<bf16, 3>,
    suffix_lse: &Tensor<f32, 2>,
) {
    let token = program_id(0);
    let head = program_id(1);
    let p_in = gather(prefix_lse, [token, head]);
    let s_in = gather(suffix_lse, [token, head]);
    let p_lse = if p_in == f32::INFINITY {
        f32::NEG_INFINITY
    } else {
        p_in
    };
    let s_lse = if s_in == f32::INFINITY {
        f32::NEG_INFINITY
    } else {
        s_in
    };
    let max_lse = p_lse.max(s_lse);
    let p_lse = p_lse - max_lse;
    let s_lse = s_lse - max_lse;
    let out_se = p_lse.exp() + s_lse.exp();
    if OUTPUT_LSE == 1 {
        partition_view(output_lse, [1, 1]).store(out_se.ln() + max_lse, token, head);
    }
    let p_out = partition_view(prefix_output, [1, 1, PADDED]).load_masked(token, head, 0);
    let s_out = partition_view(suffix_output, [1, 1, PADDED]).load_masked(token, head, 0);
    let p_scale = p_lse.exp() / out_se;
    let s_scale = s_lse.exp() / out_se;
    let out = p_out.cast::<f32>() * p_scale + s_out.cast::<f32>() * s_scale;
    partition_view(output, [1, 1, PADDED]).store_masked(out.cast::<bf16>(), token, head, 0);
}

fn merge_state_run(dev: &Device) {
    let (tokens, heads, hd) = (7usize, 5usize, 80usize);
    let mut rng = Rng::new(81);
    let po = bf16s(&rng.take(tokens * heads * hd));
    let so = bf16s(&rng.take(tokens * heads * hd));
    let mut pl: Vec<f32> = rng.take(tokens * heads).iter().map(|v| v * 3.0).collect();
    let mut sl: Vec<f32> = rng.take(tokens * heads).iter().map(|v| v * 3.0).collect();
    pl[3] = f32::INFINITY;
    sl[11] = f32::INFINITY;
    sl[20] = pl[20];
    let prefix_output = dev.tensor_from_slice(&po, &[tokens, heads, hd]).unwrap();
    let suffix_output = dev.tensor_from_slice(&so, &[tokens, heads, hd]).unwrap();
    let prefix_lse = dev.tensor_from_slice(&pl, &[tokens, heads]).unwrap();
    let suffix_lse = dev.tensor_from_slice(&sl, &[tokens, heads]).unwrap();
    let mut output = dev.zeros::<bf16>(&[tokens, heads, hd]).unwrap();
    let mut output_lse = dev.zeros::<f32>(&[tokens, heads]).unwrap();
    expect_code(dev, &merge_state::<128, 1>::kernel_spec());
    merge_state::<128, 1>::launch(
        dev,
        [tokens as u32, heads as u32],
        (
            &mut output,
            &mut output_lse,
            &prefix_output,
            &prefix_lse,
            &suffix_output,
            &suffix_lse,
        ),
    )
    .unwrap();
    let (pof, sof) = (wide_bf16(&po), wide_bf16(&so));
    let (mut want, mut want_lse) = (Vec::new(), Vec::new());
    for i in 0..tokens * heads {
        let fix = |v: f32| {
            if v == f32::INFINITY {
                f64::NEG_INFINITY
            } else {
                f64::from(v)
            }
        };
        let (p, s) = (fix(pl[i]), fix(sl[i]));
        let m = p.max(s);
        let (ep, es) = ((p - m).exp(), (s - m).exp());
        want_lse.push((ep + es).ln() + m);
        for j in 0..hd {
            want.push((pof[i * hd + j] * ep + sof[i * hd + j] * es) / (ep + es));
        }
    }
    // One bf16 rounding of |out| ≤ 2 (2⁻⁹ relative) over f32 math within a
    // few ulps; the lse in f32 with approx exp/log: ~1e-6 of |lse| ≤ 7.
    check(
        "merge_state output",
        dev,
        &wide_bf16(&output.to_vec().unwrap()),
        &want,
        4e-3,
    );
    check(
        "merge_state output_lse",
        dev,
        &wide(&output_lse.to_vec().unwrap()),
        &want_lse,
        1e-5,
    );
}

probe!(merge_state_probe, merge_state_run, [merge_state<128, 1>]);

// ---------------------------------------------------------------------------
// SGLang grouped decode attention (`sglang/srt/layers/attention/
// triton_ops/decode_attention.py`, `_fwd_grouped_kernel_stage1` without
// the rope part, logit cap or temperature, and `_fwd_kernel_stage2`
// without sinks): pages of size 1 — the keys and values of a request
// gathered at `kv_indices` rows of the buffers; BLOCK_H = 16 query heads
// a program of which kv_group_num = 4 are valid, BLOCK_N = 32 keys per
// step, tensor-core `dot`s on gathered bf16 tiles, an online softmax
// per split of the keys, then the splits merged by their lse.
// Stage 1: 4 warps (num_stages 2); stage 2: 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BH = 16, VH = 4, BN = 32, BD = 128, BDV = 128, MIN_KV = 32),
    approx_math,
    allow(spills),
    targets = "sm_80,gfx942,host"
)]
fn decode_grouped_stage1<
    const BH: usize,
    const VH: usize,
    const BN: usize,
    const BD: usize,
    const BDV: usize,
    const MIN_KV: usize,
>(
    q: &Tensor<bf16, 3>,
    k_buffer: &Tensor<bf16, 3>,
    v_buffer: &Tensor<bf16, 3>,
    sm_scale: f32,
    kv_indptr: &Tensor<i32>,
    kv_indices: &Tensor<i32>,
    att_out: &mut Tensor<f32, 4>,
    att_lse: &mut Tensor<f32, 3>,
    num_kv_splits: &Tensor<i32>,
) {
    let cur_batch = program_id(0);
    let cur_head_id = program_id(1);
    let split = program_id(2);
    let kv_group_num = q.dim(1) / k_buffer.dim(1);
    let cur_kv_head = cur_head_id / cdiv(kv_group_num, BH as i32);
    let heads = iota::<i32>([BH]) + cur_head_id * VH;
    let mask_h = (heads < (cur_head_id + 1) * VH) & (heads < q.dim(1));
    let d = iota::<i32>([BD]);
    let mask_d = d < q.dim(2);
    let dv = iota::<i32>([BDV]);
    let mask_dv = dv < v_buffer.dim(2);
    let kv_start = gather(kv_indptr, [cur_batch]);
    let seq_len = gather(kv_indptr, [cur_batch + 1]) - kv_start;
    let splits = gather(num_kv_splits, [cur_batch]);
    let per_split = cdiv(cdiv(seq_len, splits), MIN_KV as i32) * MIN_KV;
    let split_start = per_split * split;
    let split_end = min(split_start + per_split, seq_len);
    if split_end > split_start {
        let mut e_max = full::<f32>([BH], f32::NEG_INFINITY);
        let mut e_sum = zeros::<f32>([BH]);
        let mut acc = zeros::<f32>([BH, BDV]);
        let qt = gather(
            q,
            [cur_batch, heads.reshape([BH, 1]), d.reshape([1, BD])],
            mask_h.reshape([BH, 1]) & mask_d.reshape([1, BD]),
        );
        for start_n in (split_start..split_end).step_by(BN) {
            let n = iota::<i32>([BN]) + start_n;
            let mask_n = n < split_end;
            let loc = gather(kv_indices, [kv_start + n], mask_n);
            let kt = gather(
                k_buffer,
                [loc.reshape([1, BN]), cur_kv_head, d.reshape([BD, 1])],
                mask_n.reshape([1, BN]) & mask_d.reshape([BD, 1]),
            );
            let qk = dot(qt, kt, zeros::<f32>([BH, BN])) * sm_scale;
            let qk = select(
                mask_h.reshape([BH, 1]) & mask_n.reshape([1, BN]),
                qk,
                f32::NEG_INFINITY,
            );
            let vt = gather(
                v_buffer,
                [loc.reshape([BN, 1]), cur_kv_head, dv.reshape([1, BDV])],
                mask_n.reshape([BN, 1]) & mask_dv.reshape([1, BDV]),
            );
            let n_e_max = qk.max_along(1).max(e_max);
            let re_scale = (e_max - n_e_max).exp();
            let p = (qk - n_e_max.reshape([BH, 1])).exp();
            acc = dot(p.cast::<bf16>(), vt, acc * re_scale.reshape([BH, 1]));
            e_sum = e_sum * re_scale + p.sum(1);
            e_max = n_e_max;
        }
        let first = cur_head_id * VH;
        let out = partition_view(
            att_out.window([cur_batch, first, split, 0], [1, VH, 1, v_buffer.dim(2)]),
            [1, BH, 1, BDV],
        );
        out.store_masked(
            (acc / e_sum.reshape([BH, 1])).reshape([1, BH, 1, BDV]),
            0,
            0,
            0,
            0,
        );
        let lse = partition_view(
            att_lse.window([cur_batch, first, split], [1, VH, 1]),
            [1, BH, 1],
        );
        lse.store_masked((e_max + e_sum.ln()).reshape([1, BH, 1]), 0, 0, 0);
    }
}

#[tile_kernel(
    configs(MAX_SPLITS = 8, MIN_KV = 32, BDV = 128),
    approx_math,
    targets = "sm_80,gfx942,host"
)]
fn decode_stage2<const MAX_SPLITS: usize, const MIN_KV: usize, const BDV: usize>(
    mid_o: &Tensor<f32, 4>,
    mid_lse: &Tensor<f32, 3>,
    o: &mut Tensor<bf16, 3>,
    v_scale: f32,
    kv_indptr: &Tensor<i32>,
    num_kv_splits: &Tensor<i32>,
) {
    let b = program_id(0);
    let h = program_id(1);
    let seq_len = gather(kv_indptr, [b + 1]) - gather(kv_indptr, [b]);
    let splits = gather(num_kv_splits, [b]);
    let per_split = cdiv(cdiv(seq_len, splits), MIN_KV as i32) * MIN_KV;
    let vo = partition_view(mid_o, [1, 1, 1, BDV]);
    let mut e_sum = 0.0f32;
    let mut e_max = f32::NEG_INFINITY;
    let mut acc = zeros::<f32>([BDV]);
    for s in 0..MAX_SPLITS as i32 {
        let s0 = per_split * s;
        let s1 = min(s0 + per_split, seq_len);
        if s1 > s0 {
            let tv = vo.load_masked(b, h, s, 0).reshape([BDV]);
            let tlogic = gather(mid_lse, [b, h, s]);
            let n_e_max = tlogic.max(e_max);
            let old_scale = (e_max - n_e_max).exp();
            let exp_logic = (tlogic - n_e_max).exp();
            acc = acc * old_scale + exp_logic * tv;
            e_sum = e_sum * old_scale + exp_logic;
            e_max = n_e_max;
        }
    }
    let out = (acc / e_sum * v_scale).cast::<bf16>().reshape([1, 1, BDV]);
    partition_view(o, [1, 1, BDV]).store_masked(out, b, h, 0);
}

fn decode_attention_run(dev: &Device) {
    let (batch, q_heads, kv_heads, hd, pool, max_splits) =
        (3usize, 32usize, 8usize, 128usize, 300usize, 8usize);
    let seq_lens = [37usize, 100, 5];
    let splits = [2i32, 4, 1];
    let mut rng = Rng::new(111);
    let qs = bf16s(&rng.take(batch * q_heads * hd));
    let ks = bf16s(&rng.take(pool * kv_heads * hd));
    let vs = bf16s(&rng.take(pool * kv_heads * hd));
    let mut indptr = vec![0i32];
    let mut indices = Vec::new();
    for &len in &seq_lens {
        for _ in 0..len {
            indices.push(rng.below(pool) as i32);
        }
        indptr.push(indices.len() as i32);
    }
    let sm_scale = 1.0 / (hd as f32).sqrt();
    let q = dev.tensor_from_slice(&qs, &[batch, q_heads, hd]).unwrap();
    let k_buffer = dev.tensor_from_slice(&ks, &[pool, kv_heads, hd]).unwrap();
    let v_buffer = dev.tensor_from_slice(&vs, &[pool, kv_heads, hd]).unwrap();
    let kv_indptr = dev.tensor_from_slice(&indptr, &[batch + 1]).unwrap();
    let kv_indices = dev.tensor_from_slice(&indices, &[indices.len()]).unwrap();
    let num_kv_splits = dev.tensor_from_slice(&splits, &[batch]).unwrap();
    let mut att_out = dev.zeros::<f32>(&[batch, q_heads, max_splits, hd]).unwrap();
    let mut att_lse = dev.zeros::<f32>(&[batch, q_heads, max_splits]).unwrap();
    let mut o = dev.zeros::<bf16>(&[batch, q_heads, hd]).unwrap();
    let group = q_heads / kv_heads;
    expect_code(
        dev,
        &decode_grouped_stage1::<16, 4, 32, 128, 128, 32>::kernel_spec(),
    );
    decode_grouped_stage1::<16, 4, 32, 128, 128, 32>::launch(
        dev,
        [
            batch as u32,
            q_heads.div_ceil(group.min(16)) as u32,
            max_splits as u32,
        ],
        (
            &q,
            &k_buffer,
            &v_buffer,
            sm_scale,
            &kv_indptr,
            &kv_indices,
            &mut att_out,
            &mut att_lse,
            &num_kv_splits,
        ),
    )
    .unwrap();
    decode_stage2::<8, 32, 128>::launch(
        dev,
        [batch as u32, q_heads as u32],
        (
            &att_out,
            &att_lse,
            &mut o,
            1.0f32,
            &kv_indptr,
            &num_kv_splits,
        ),
    )
    .unwrap();
    let (qf, kf, vf) = (wide_bf16(&qs), wide_bf16(&ks), wide_bf16(&vs));
    let mut want = Vec::new();
    for b in 0..batch {
        let locs = &indices[indptr[b] as usize..indptr[b + 1] as usize];
        for h in 0..q_heads {
            let kh = h / group;
            let scores: Vec<f64> = locs
                .iter()
                .map(|&l| {
                    (0..hd)
                        .map(|j| {
                            qf[(b * q_heads + h) * hd + j]
                                * kf[(l as usize * kv_heads + kh) * hd + j]
                        })
                        .sum::<f64>()
                        * f64::from(sm_scale)
                })
                .collect();
            let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
            let total: f64 = w.iter().sum();
            for j in 0..hd {
                want.push(
                    locs.iter()
                        .zip(&w)
                        .map(|(&l, p)| p * vf[(l as usize * kv_heads + kh) * hd + j])
                        .sum::<f64>()
                        / total,
                );
            }
        }
    }
    // p rounded to bf16 before the PV dot (2⁻⁹ of each weight), bf16
    // tensor-core sums in f32, the output rounded to bf16 (2⁻⁹ of |o| ≤ 2).
    check(
        "decode_attention o",
        dev,
        &wide_bf16(&o.to_vec().unwrap()),
        &want,
        1e-2,
    );
}

probe!(
    decode_attention_probe,
    decode_attention_run,
    [decode_grouped_stage1<16, 4, 32, 128, 128, 32>, decode_stage2<8, 32, 128>]
);
