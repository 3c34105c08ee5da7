//! vLLM's FP8 quantization kernels, from
//! `vllm.model_executor.layers.quantization.utils.fp8_utils`: the
//! per-token-group quantization `_per_token_group_quant_fp8` (its Triton
//! fallback) and the block-scaled matmul `_w8a8_triton_block_scaled_mm`,
//! checked in one probe with its INT8 twin from SGLang
//! (`_w8a8_block_int8_matmul` of `sglang.srt.layers.quantization.int8_kernel`).

use crate::{bf16s, check, expect_code, wide_f16, Rng};
use tile::{f16, f8e4m3, tile_kernel, Device};

// ---------------------------------------------------------------------------
// vLLM per-token-group FP8 quantization
// (`vllm/model_executor/layers/quantization/utils/fp8_utils.py`,
// `_per_token_group_quant_fp8`, its Triton fallback): one program per
// group of `group_size` columns of a row (row stride ≠ columns: the
// input is a slice), absmax → scale (optionally rounded up to a power of
// two, `use_ue8m0`), `clamp(y / scale, ±448)` cast to E4M3.
// BLOCK = next_power_of_2(group_size) = 128, num_warps =
// min(max(BLOCK // 256, 1), 8) = 1.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BLOCK = 128, UE8M0 = 0),
    configs(BLOCK = 128, UE8M0 = 1),
    num_warps = 1,
    targets = "sm_80,gfx942,host"
)]
fn per_token_group_quant_fp8<const BLOCK: usize, const UE8M0: usize>(
    y: &Tensor<bf16, 2>,
    y_q: &mut Tensor<f8e4m3, 2>,
    y_s: &mut Tensor<f32, 2>,
    group_size: i32,
    eps: f32,
    fp8_min: f32,
    fp8_max: f32,
) {
    let g = program_id(0);
    let groups_per_row = y.dim(1) / group_size;
    let row = g / groups_per_row;
    let in_row = g % groups_per_row;
    let start = in_row * group_size;
    let v = partition_view(y.window([row, start], [1, group_size]), [1, BLOCK])
        .load_masked(0, 0)
        .cast::<f32>();
    let absmax = v.abs().reshape([BLOCK]).max_along(0).max(eps);
    let raw = absmax / fp8_max;
    let scale = if UE8M0 == 1 {
        raw.log2().ceil().exp2()
    } else {
        raw
    };
    let q = (v / scale).max(fp8_min).min(fp8_max).cast::<f8e4m3>();
    partition_view(y_q.window([row, start], [1, group_size]), [1, BLOCK]).store_masked(q, 0, 0);
    partition_view(y_s, [1, 1]).store(scale, row, in_row);
}

fn per_token_group_quant_fp8_run(dev: &Device) {
    let (rows, cols, stride, group) = (5usize, 384usize, 400usize, 128usize);
    let groups = cols / group;
    let mut rng = Rng::new(71);
    let mut raw = rng.take(rows * stride);
    // Row 1's middle group is zeros (absmax → eps), row 2's first group
    // large (scale ≫ 1), row 3's last group tiny.
    for j in 0..group {
        raw[stride + group + j] = 0.0;
        raw[2 * stride + j] *= 1000.0;
        raw[3 * stride + 2 * group + j] *= 1e-4;
    }
    let full_in = bf16s(&raw);
    let full = dev.tensor_from_slice(&full_in, &[rows, stride]).unwrap();
    let y = full.slice(1, 0..cols).unwrap();
    for ue8m0 in [false, true] {
        let mut y_q = dev.zeros::<f8e4m3>(&[rows, cols]).unwrap();
        let mut y_s = dev.zeros::<f32>(&[rows, groups]).unwrap();
        let grid = [(rows * groups) as u32];
        let args = (
            &y,
            &mut y_q,
            &mut y_s,
            group as i32,
            1e-10f32,
            -448.0f32,
            448.0f32,
        );
        if ue8m0 {
            expect_code(dev, &per_token_group_quant_fp8::<128, 1>::kernel_spec());
            per_token_group_quant_fp8::<128, 1>::launch(dev, grid, args).unwrap();
        } else {
            expect_code(dev, &per_token_group_quant_fp8::<128, 0>::kernel_spec());
            per_token_group_quant_fp8::<128, 0>::launch(dev, grid, args).unwrap();
        }
        let scales = y_s.to_vec().unwrap();
        let qs = y_q.to_vec().unwrap();
        let what = format!("per_token_group_quant_fp8 ue8m0={ue8m0}");
        let (mut want_s, mut want_q, mut got_q) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..rows {
            for gi in 0..groups {
                let vals: Vec<f64> = (0..group)
                    .map(|j| f64::from(full_in[r * stride + gi * group + j].to_f32()))
                    .collect();
                let absmax = vals.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-10);
                let scale_raw = absmax / 448.0;
                let want = if ue8m0 {
                    // The kernel's f32 log2 of the f32 quotient may land on
                    // an integer the f64 one exceeds: either power is right.
                    let got = f64::from(scales[r * groups + gi]);
                    let a = 2f64.powf(scale_raw.log2().ceil());
                    let b = f64::from(2f32.powf(((absmax as f32) / 448.0).log2().ceil()));
                    if got == b {
                        b
                    } else {
                        a
                    }
                } else {
                    scale_raw
                };
                want_s.push(want);
                let s = f64::from(scales[r * groups + gi]);
                for (j, v) in vals.iter().enumerate() {
                    want_q.push((v / s).clamp(-448.0, 448.0));
                    got_q.push(f64::from(qs[r * cols + gi * group + j].to_f32()));
                }
            }
        }
        // The scale: one f32 division (and an exact power of two) from an
        // exact absmax: 1e-6 relative, |scale| ≪ 1 so relative to 1 + |s|.
        let rel_s: Vec<f64> = want_s
            .iter()
            .zip(&scales)
            .map(|(w, &g)| ((f64::from(g) - w) / w).abs())
            .collect();
        check(
            &format!("{what} y_s (relative)"),
            dev,
            &rel_s,
            &vec![0.0; rel_s.len()],
            1e-6,
        );
        // The values: E4M3 rounding to nearest, half an ulp is 2⁻⁴ relative
        // (2⁻¹⁰ absolute among subnormals), on top of an f32 quotient.
        for (i, (&g, &w)) in got_q.iter().zip(&want_q).enumerate() {
            let bound = w.abs() * (0.0625 + 1e-6) + 2f64.powi(-10) + 1e-12;
            assert!(
                (g - w).abs() <= bound && g.abs() <= 448.0,
                "{what} y_q on {dev}: element {i}: got {g}, want {w} (±{bound})"
            );
        }
    }
}

probe!(
    per_token_group_quant_fp8_probe,
    per_token_group_quant_fp8_run,
    [per_token_group_quant_fp8<128, 0>]
);

// ---------------------------------------------------------------------------
// vLLM's block-scaled FP8 matmul (`vllm/model_executor/layers/
// quantization/utils/fp8_utils.py`, `_w8a8_triton_block_scaled_mm`)
// and SGLang's INT8 twin (`sglang/srt/layers/quantization/
// int8_kernel.py`, `_w8a8_block_int8_matmul`): C = Σ_k-blocks (A_blk ·
// B_blkᵀ) · As[m, kb] · Bs[n / 128, kb], A [M, K] and B [N, K] in E4M3
// (i8), grouped program order (GROUP_SIZE_M 32), scales gathered per
// K block, f16 output. The launchers' default config for 128×128
// quantization blocks: BLOCK 64×128×128, 4 warps, 2 (vLLM) or 3
// (SGLang) stages.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BM = 64, BN = 128, BK = 128, GROUP_M = 32),
    num_warps = 4,
    num_stages = 2,
    allow(spills),
    targets = "sm_80,gfx942,host"
)]
fn w8a8_block_fp8_matmul<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const GROUP_M: usize,
>(
    a: &Tensor<f8e4m3, 2>,
    b: &Tensor<f8e4m3, 2>,
    c: &mut Tensor<f16, 2>,
    a_s: &Tensor<f32, 2>,
    b_s: &Tensor<f32, 2>,
    group_n: i32,
    group_k: i32,
) {
    let pid = program_id(0);
    let (m, n, k) = (a.dim(0), b.dim(0), a.dim(1));
    let num_pid_m = cdiv(m, BM);
    let num_pid_n = cdiv(n, BN);
    let num_pid_in_group = GROUP_M * num_pid_n;
    let first_pid_m = (pid / num_pid_in_group) * GROUP_M;
    let group_size_m = min(num_pid_m - first_pid_m, GROUP_M);
    let pid_m = first_pid_m + pid % group_size_m;
    let pid_n = (pid % num_pid_in_group) / group_size_m;
    let rows = (iota::<i32>([BM]) + pid_m * BM) % m;
    let cols = (iota::<i32>([BN]) + pid_n * BN) % n;
    let va = partition_view(a, [BM, BK]);
    let vb = partition_view(b, [BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(k, BK) {
        let blk = (kk * BK) / group_k;
        let sa = gather(a_s, [rows, blk]).reshape([BM, 1]);
        let sb = gather(b_s, [cols / group_n, blk]).reshape([1, BN]);
        let prod = dot(
            va.load_masked(pid_m, kk),
            vb.load_masked(pid_n, kk).transpose(),
            zeros::<f32>([BM, BN]),
        );
        acc += prod * sa * sb;
    }
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

#[tile_kernel(
    configs(BM = 64, BN = 128, BK = 128, GROUP_M = 32),
    num_warps = 4,
    num_stages = 3,
    allow(spills),
    targets = "sm_80,gfx942,host"
)]
fn w8a8_block_int8_matmul<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const GROUP_M: usize,
>(
    a: &Tensor<i8, 2>,
    b: &Tensor<i8, 2>,
    c: &mut Tensor<f16, 2>,
    a_s: &Tensor<f32, 2>,
    b_s: &Tensor<f32, 2>,
    group_n: i32,
    group_k: i32,
) {
    let pid = program_id(0);
    let (m, n, k) = (a.dim(0), b.dim(0), a.dim(1));
    let num_pid_m = cdiv(m, BM);
    let num_pid_n = cdiv(n, BN);
    let num_pid_in_group = GROUP_M * num_pid_n;
    let first_pid_m = (pid / num_pid_in_group) * GROUP_M;
    let group_size_m = min(num_pid_m - first_pid_m, GROUP_M);
    let pid_m = first_pid_m + pid % group_size_m;
    let pid_n = (pid % num_pid_in_group) / group_size_m;
    let rows = (iota::<i32>([BM]) + pid_m * BM) % m;
    let cols = (iota::<i32>([BN]) + pid_n * BN) % n;
    let va = partition_view(a, [BM, BK]);
    let vb = partition_view(b, [BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(k, BK) {
        let blk = (kk * BK) / group_k;
        let sa = gather(a_s, [rows, blk]).reshape([BM, 1]);
        let sb = gather(b_s, [cols / group_n, blk]).reshape([1, BN]);
        let prod = dot(
            va.load_masked(pid_m, kk),
            vb.load_masked(pid_n, kk).transpose(),
            zeros::<i32>([BM, BN]),
        );
        acc += prod.cast::<f32>() * sa * sb;
    }
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

/// The block-scaled product in f64: `a` [m, k], `b` [n, k], scales per
/// 128-column block of k (and per 128-row block of n for `b`).
fn block_scaled_reference(
    a: &[f64],
    b: &[f64],
    a_s: &[f32],
    b_s: &[f32],
    (m, n, k): (usize, usize, usize),
) -> Vec<f64> {
    let kb = k.div_ceil(128);
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for blk in 0..kb {
                let part: f64 = (blk * 128..((blk + 1) * 128).min(k))
                    .map(|kk| a[i * k + kk] * b[j * k + kk])
                    .sum();
                c[i * n + j] +=
                    part * f64::from(a_s[i * kb + blk]) * f64::from(b_s[(j / 128) * kb + blk]);
            }
        }
    }
    c
}

fn w8a8_block_matmul_run(dev: &Device) {
    let (m, n, k) = (100usize, 256usize, 384usize);
    let kb = k / 128;
    let mut rng = Rng::new(161);
    let a_s: Vec<f32> = rng
        .take(m * kb)
        .iter()
        .map(|v| (v.abs() + 0.5) * 0.01)
        .collect();
    let b_s: Vec<f32> = rng
        .take((n / 128) * kb)
        .iter()
        .map(|v| (v.abs() + 0.5) * 0.01)
        .collect();
    let sa = dev.tensor_from_slice(&a_s, &[m, kb]).unwrap();
    let sb = dev.tensor_from_slice(&b_s, &[n / 128, kb]).unwrap();
    let grid = [(m.div_ceil(64) * n.div_ceil(128)) as u32];
    // FP8: values up to ±448 (E4M3's range) and subnormals.
    let a8: Vec<f8e4m3> = rng
        .take(m * k)
        .iter()
        .map(|v| f8e4m3::from_f32(v * v * v * 56.0))
        .collect();
    let b8: Vec<f8e4m3> = rng
        .take(n * k)
        .iter()
        .map(|v| f8e4m3::from_f32(v * 0.01))
        .collect();
    let a = dev.tensor_from_slice(&a8, &[m, k]).unwrap();
    let b = dev.tensor_from_slice(&b8, &[n, k]).unwrap();
    let mut c = dev.zeros::<f16>(&[m, n]).unwrap();
    expect_code(
        dev,
        &w8a8_block_fp8_matmul::<64, 128, 128, 32>::kernel_spec(),
    );
    w8a8_block_fp8_matmul::<64, 128, 128, 32>::launch(
        dev,
        grid,
        (&a, &b, &mut c, &sa, &sb, 128, 128),
    )
    .unwrap();
    let wa: Vec<f64> = a8.iter().map(|v| v.to_f64()).collect();
    let wb: Vec<f64> = b8.iter().map(|v| v.to_f64()).collect();
    let want = block_scaled_reference(&wa, &wb, &a_s, &b_s, (m, n, k));
    // Exact FP8 products summed in f32 (~1e-7 relative to Σ|ab|), one f16
    // rounding of the result (2⁻¹¹).
    check(
        "w8a8_block_fp8_matmul",
        dev,
        &wide_f16(&c.to_vec().unwrap()),
        &want,
        1e-3,
    );
    // INT8: the full range.
    let a_i: Vec<i8> = (0..m * k)
        .map(|_| (rng.below(256) as i32 - 128) as i8)
        .collect();
    let b_i: Vec<i8> = (0..n * k)
        .map(|_| (rng.below(256) as i32 - 128) as i8)
        .collect();
    let a = dev.tensor_from_slice(&a_i, &[m, k]).unwrap();
    let b = dev.tensor_from_slice(&b_i, &[n, k]).unwrap();
    let mut c = dev.zeros::<f16>(&[m, n]).unwrap();
    expect_code(
        dev,
        &w8a8_block_int8_matmul::<64, 128, 128, 32>::kernel_spec(),
    );
    w8a8_block_int8_matmul::<64, 128, 128, 32>::launch(
        dev,
        grid,
        (&a, &b, &mut c, &sa, &sb, 128, 128),
    )
    .unwrap();
    let wa: Vec<f64> = a_i.iter().map(|&v| f64::from(v)).collect();
    let wb: Vec<f64> = b_i.iter().map(|&v| f64::from(v)).collect();
    let want = block_scaled_reference(&wa, &wb, &a_s, &b_s, (m, n, k));
    // Exact i32 block sums, scaled in f32, one f16 rounding.
    check(
        "w8a8_block_int8_matmul",
        dev,
        &wide_f16(&c.to_vec().unwrap()),
        &want,
        1e-3,
    );
}

probe!(
    w8a8_block_matmul_probe,
    w8a8_block_matmul_run,
    [w8a8_block_fp8_matmul<64, 128, 128, 32>, w8a8_block_int8_matmul<64, 128, 128, 32>]
);
