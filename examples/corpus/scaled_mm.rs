//! vLLM's FP8 W8A8 matrix multiplication in Triton
//! (`vllm/model_executor/layers/quantization/compressed_tensors/triton_scaled_mm.py`,
//! read at 03f95201341d65b82e709f787c60e822e993a71a, `scaled_mm_kernel`):
//! E4M3 activations `[M, K]` with one f32 scale per token (row) and E4M3
//! weights with one f32 scale per output channel, an f32 accumulator over
//! `BK`-wide slabs of K, both scales applied to the accumulator after the
//! loop, and the tile rounded to bf16 (the usual `out_dtype`). vLLM stores
//! the weights `[N, K]` and passes their transpose, so B's `k` is its
//! contiguous axis: this port reads the `[N, K]` tensor and transposes its
//! tiles. The tile shape is the launcher's heuristic for `M` above 128:
//! 128×128×128, with Triton's default 4 warps and 3 stages; no bias.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, f8e4m3, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BM = 128, BN = 128, BK = 128),
    num_warps = 4,
    num_stages = 3,
    aligned(a, b, scale_a, scale_b, c),
    allow(spills),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn scaled_mm<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f8e4m3, 2>,
    b: &Tensor<f8e4m3, 2>,
    scale_a: &Tensor<f32, 1>,
    scale_b: &Tensor<f32, 1>,
    c: &mut Tensor<bf16, 2>,
) {
    let pid = program_id(0);
    let tiles_n = cdiv(b.dim(0), BN);
    let (pid_m, pid_n) = (pid / tiles_n, pid % tiles_n);
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BN, BK]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(
            va.load_masked(pid_m, kk),
            vb.load_masked(pid_n, kk).transpose(),
            acc,
        );
    }
    let sa = partition_view(scale_a, [BM])
        .load_masked(pid_m)
        .reshape([BM, 1]);
    let sb = partition_view(scale_b, [BN])
        .load_masked(pid_n)
        .reshape([1, BN]);
    let scaled = sb * (sa * acc);
    partition_view(c, [BM, BN]).store_masked(scaled.cast::<bf16>(), pid_m, pid_n);
}

/// Elements rounded to E4M3 from inputs in [-3, 3), and their values.
fn e4m3s(rng: &mut Inputs, n: usize) -> (Vec<f8e4m3>, Vec<f64>) {
    let stored: Vec<f8e4m3> = rng
        .take(n)
        .into_iter()
        .map(|v| f8e4m3::from_f64(f64::from(v) * 3.0))
        .collect();
    let values = stored.iter().map(|v| f64::from(v.to_f32())).collect();
    (stored, values)
}

/// A product whose M and N are not multiples of the tiles and whose K
/// leaves a partial slab (rows of 16-byte multiples, as the TMA needs).
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n, k) = (300, 200, 272);
    let (a_in, a_vals) = e4m3s(rng, m * k);
    let (b_in, b_vals) = e4m3s(rng, n * k);
    let sa_in: Vec<f32> = rng.take(m).into_iter().map(|v| 0.5 + v.abs()).collect();
    let sb_in: Vec<f32> = rng.take(n).into_iter().map(|v| 0.25 + v.abs()).collect();
    let a = dev.tensor_from_slice(&a_in, &[m, k])?;
    let b = dev.tensor_from_slice(&b_in, &[n, k])?;
    let scale_a = dev.tensor_from_slice(&sa_in, &[m])?;
    let scale_b = dev.tensor_from_slice(&sb_in, &[n])?;
    let mut c = dev.zeros::<bf16>(&[m, n])?;
    let grid = [(m.div_ceil(128) * n.div_ceil(128)) as u32];
    let time = timed(|| {
        scaled_mm::<128, 128, 128>::launch(dev, grid, (&a, &b, &scale_a, &scale_b, &mut c))
    })?;
    let want: Vec<f64> = (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            let dot: f64 = (0..k)
                .map(|kk| a_vals[i * k + kk] * b_vals[j * k + kk])
                .sum();
            f64::from(sb_in[j]) * (f64::from(sa_in[i]) * dot)
        })
        .collect();
    let got: Vec<f32> = c.to_vec()?.iter().map(|v| v.to_f32()).collect();
    Ok(vec![Row {
        kernel: "scaled_mm".into(),
        code: dev.kernel_code(&scaled_mm::<128, 128, 128>::kernel_spec())?,
        shape: format!("[{m}, {k}] x [{n}, {k}]ᵀ e4m3"),
        max_error: max_error(&got, &want),
        // The bf16 rounding (2⁻⁸ relative) and f32 sums in any order.
        tolerance: 1e-2,
        time,
    }])
}
