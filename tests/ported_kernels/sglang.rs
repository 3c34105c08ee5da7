//! SGLang's integer kernels: the Triton `moe_align_block_size` (stages 1 to
//! 4, from its sgl-kernel benchmark, as vLLM's fused MoE had them) and the
//! per-token INT8 quantization `_per_token_quant_int8` of
//! `sglang.srt.layers.quantization.int8_kernel`.

use crate::{check, expect_code, f16s, wide, Rng};
use tile::{tile_kernel, Device};

// ---------------------------------------------------------------------------
// SGLang's Triton `moe_align_block_size` (sgl-kernel/benchmark/
// bench_moe_align_block_size.py, `moe_align_block_size_stage1..4`, as
// vLLM's fused-MoE had them): integer bookkeeping with scalar loads and
// stores in loops — per-program expert histograms (read-modify-write of
// the same element across iterations), their prefix sums over programs,
// the padded cumulative sum over experts, and the scatter of token ids
// into their experts' padded blocks. Grid (num_experts,), 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(targets = "sm_80,gfx942,host")]
fn moe_align_stage1(
    topk_ids: &Tensor<i32>,
    tokens_cnts: &mut Tensor<i32, 2>,
    tokens_per_thread: i32,
) {
    let pid = program_id(0);
    let numel = topk_ids.dim(0);
    let start = pid * tokens_per_thread;
    let cnts = partition_view(tokens_cnts, [1, 1]);
    for i in 0..tokens_per_thread {
        if start + i < numel {
            let idx = gather(topk_ids, [start + i]);
            let c = gather(tokens_cnts, [pid + 1, idx]);
            cnts.store(c + 1, pid + 1, idx);
        }
    }
}

#[tile_kernel(targets = "sm_80,gfx942,host")]
fn moe_align_stage2(tokens_cnts: &mut Tensor<i32, 2>) {
    let pid = program_id(0);
    let experts = tokens_cnts.dim(1);
    let cnts = partition_view(tokens_cnts, [1, 1]);
    let mut last = 0i32;
    for i in 1..experts + 1 {
        last += gather(tokens_cnts, [i, pid]);
        cnts.store(last, i, pid);
    }
}

#[tile_kernel(targets = "sm_80,gfx942,host")]
fn moe_align_stage3(
    total_tokens_post_pad: &mut Tensor<i32>,
    tokens_cnts: &Tensor<i32, 2>,
    cumsum: &mut Tensor<i32>,
    block_size: i32,
) {
    let experts = tokens_cnts.dim(1);
    let sums = partition_view(cumsum, [1]);
    let mut last = 0i32;
    for i in 1..experts + 1 {
        let c = gather(tokens_cnts, [experts, i - 1]);
        last += cdiv(c, block_size) * block_size;
        sums.store(last, i);
    }
    partition_view(total_tokens_post_pad, [1]).store(last, 0);
}

#[tile_kernel(targets = "sm_80,gfx942,host")]
fn moe_align_stage4(
    topk_ids: &Tensor<i32>,
    sorted_token_ids: &mut Tensor<i32>,
    expert_ids: &mut Tensor<i32>,
    tokens_cnts: &mut Tensor<i32, 2>,
    cumsum: &Tensor<i32>,
    block_size: i32,
    tokens_per_thread: i32,
) {
    let pid = program_id(0);
    let numel = topk_ids.dim(0);
    let start_idx = gather(cumsum, [pid]);
    let end_idx = gather(cumsum, [pid + 1]);
    let experts_out = partition_view(expert_ids, [1]);
    for i in (start_idx..end_idx).step_by(block_size) {
        experts_out.store(pid, i / block_size);
    }
    let first = pid * tokens_per_thread;
    let sorted = partition_view(sorted_token_ids, [1]);
    let cnts = partition_view(tokens_cnts, [1, 1]);
    for i in first..min(first + tokens_per_thread, numel) {
        let expert = gather(topk_ids, [i]);
        let c = gather(tokens_cnts, [pid, expert]);
        let rank = c + gather(cumsum, [expert]);
        sorted.store(i, rank);
        cnts.store(c + 1, pid, expert);
    }
}

fn moe_align_block_size_run(dev: &Device) {
    // 37 tokens × top-2 of 8 experts, blocks of 16.
    let (tokens, topk, experts, block) = (37usize, 2usize, 8usize, 16usize);
    let mut rng = Rng::new(101);
    let mut ids = Vec::new();
    for _ in 0..tokens {
        let a = rng.below(experts);
        let b = (a + 1 + rng.below(experts - 1)) % experts;
        ids.extend([a as i32, b as i32]);
    }
    let numel = tokens * topk;
    let per_thread = numel.div_ceil(experts);
    let max_padded = numel + experts * (block - 1);
    let topk_ids = dev.tensor_from_slice(&ids, &[numel]).unwrap();
    let mut cnts = dev.zeros::<i32>(&[experts + 1, experts]).unwrap();
    let mut cumsum = dev.zeros::<i32>(&[experts + 1]).unwrap();
    let mut total = dev.zeros::<i32>(&[1]).unwrap();
    let mut sorted = dev.full::<i32>(&[max_padded], numel as i32).unwrap();
    let mut expert_ids = dev.zeros::<i32>(&[max_padded / block]).unwrap();
    let grid = [experts as u32];
    expect_code(dev, &moe_align_stage1::kernel_spec());
    moe_align_stage1::launch(dev, grid, (&topk_ids, &mut cnts, per_thread as i32)).unwrap();
    moe_align_stage2::launch(dev, grid, (&mut cnts,)).unwrap();
    moe_align_stage3::launch(dev, [1], (&mut total, &cnts, &mut cumsum, block as i32)).unwrap();
    moe_align_stage4::launch(
        dev,
        grid,
        (
            &topk_ids,
            &mut sorted,
            &mut expert_ids,
            &mut cnts,
            &cumsum,
            block as i32,
            per_thread as i32,
        ),
    )
    .unwrap();
    // The reference: each expert's tokens in index order from its padded
    // start, each of its blocks labelled with it.
    let mut want_cumsum = vec![0i64; experts + 1];
    let mut want_sorted = vec![numel as i64; max_padded];
    let mut want_experts = vec![0i64; max_padded / block];
    for e in 0..experts {
        let mine: Vec<usize> = (0..numel).filter(|&i| ids[i] as usize == e).collect();
        want_cumsum[e + 1] = want_cumsum[e] + (mine.len().div_ceil(block) * block) as i64;
        for (k, &i) in mine.iter().enumerate() {
            want_sorted[want_cumsum[e] as usize + k] = i as i64;
        }
        let blocks = (want_cumsum[e] as usize / block)..(want_cumsum[e + 1] as usize / block);
        want_experts[blocks].fill(e as i64);
    }
    let as_f64 = |v: Vec<i32>| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let to_f64 = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    // Integers: exact.
    check(
        "moe_align cumsum",
        dev,
        &as_f64(cumsum.to_vec().unwrap()),
        &to_f64(&want_cumsum),
        0.0,
    );
    check(
        "moe_align total",
        dev,
        &as_f64(total.to_vec().unwrap()),
        &[want_cumsum[experts] as f64],
        0.0,
    );
    check(
        "moe_align sorted_token_ids",
        dev,
        &as_f64(sorted.to_vec().unwrap()),
        &to_f64(&want_sorted),
        0.0,
    );
    check(
        "moe_align expert_ids",
        dev,
        &as_f64(expert_ids.to_vec().unwrap()),
        &to_f64(&want_experts),
        0.0,
    );
}

probe!(
    moe_align_block_size_probe,
    moe_align_block_size_run,
    [
        moe_align_stage1,
        moe_align_stage2,
        moe_align_stage3,
        moe_align_stage4
    ]
);

// ---------------------------------------------------------------------------
// SGLang per-token INT8 quantization (`sglang/srt/layers/quantization/
// int8_kernel.py`, `_per_token_quant_int8`): a row a program, absmax →
// scale, `libdevice.round(x · 127 / absmax).to(int8)` (round half away
// from zero, written out: the tile language has no `round`), int8
// stores; the input a slice whose rows start at odd element offsets
// (no 16-byte alignment). BLOCK = next_power_of_2(N), num_warps =
// min(max(BLOCK // 256, 1), 8).
// ---------------------------------------------------------------------------

#[tile_kernel(configs(BLOCK = 2048), num_warps = 8, targets = "sm_80,gfx942,host")]
fn per_token_quant_int8<const BLOCK: usize>(
    x: &Tensor<f16, 2>,
    x_q: &mut Tensor<i8, 2>,
    scale: &mut Tensor<f32>,
) {
    let row = program_id(0);
    let v = partition_view(x, [1, BLOCK])
        .load_masked(row, 0)
        .cast::<f32>();
    let absmax = v.abs().reshape([BLOCK]).max_along(0).max(1e-10);
    let scale_x = absmax / 127.0;
    let scaled = v * (127.0 / absmax);
    let a = scaled.abs();
    let t = a.floor();
    let rounded = select(a - t >= 0.5, t + 1.0, t);
    let q = select(scaled < 0.0, -rounded, rounded).cast::<i8>();
    partition_view(x_q, [1, BLOCK]).store_masked(q, row, 0);
    partition_view(scale, [1]).store(scale_x, row);
}

fn per_token_quant_int8_run(dev: &Device) {
    let (rows, cols, stride, offset) = (5usize, 1500usize, 1511usize, 3usize);
    let mut rng = Rng::new(131);
    let mut raw = rng.take(rows * stride);
    raw[stride + offset + 7] = 0.0;
    for j in 0..stride {
        raw[2 * stride + j] *= 100.0;
    }
    let full_in = f16s(&raw);
    let full = dev.tensor_from_slice(&full_in, &[rows, stride]).unwrap();
    let x = full.slice(1, offset..offset + cols).unwrap();
    let mut x_q = dev.zeros::<i8>(&[rows, cols]).unwrap();
    let mut scale = dev.zeros::<f32>(&[rows]).unwrap();
    expect_code(dev, &per_token_quant_int8::<2048>::kernel_spec());
    per_token_quant_int8::<2048>::launch(dev, [rows as u32], (&x, &mut x_q, &mut scale)).unwrap();
    let (mut want_s, mut want_q) = (Vec::new(), Vec::new());
    for r in 0..rows {
        let vals: Vec<f64> = (0..cols)
            .map(|j| f64::from(full_in[r * stride + offset + j].to_f32()))
            .collect();
        let absmax = vals.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-10);
        want_s.push(absmax / 127.0);
        // f32 products land within an ulp of the f64 ones; no value here
        // sits that close to a half (checked below by the tolerance 0).
        want_q.extend(vals.iter().map(|v| (v * 127.0 / absmax).round()));
    }
    let got_q: Vec<f64> = x_q
        .to_vec()
        .unwrap()
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    check(
        "per_token_quant_int8 scale",
        dev,
        &wide(&scale.to_vec().unwrap()),
        &want_s,
        1e-6,
    );
    check("per_token_quant_int8 x_q", dev, &got_q, &want_q, 0.0);
}

probe!(
    per_token_quant_int8_probe,
    per_token_quant_int8_run,
    [per_token_quant_int8<2048>]
);
