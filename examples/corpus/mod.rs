//! A corpus of kernels people use, ported one for one from public Triton
//! code at their authors' block sizes and warp counts: Liger-Kernel's
//! normalizations, activations, rotary embedding, losses and embedding
//! lookup, the FlashAttention repository's Triton forward and backward
//! passes, vLLM's FP8 W8A8 matmul and fused mixture-of-experts matmul,
//! SGLang's decoding attention over a pool of token slots,
//! and Triton's own tutorials: the fused
//! softmax, the seeded dropout, the layer norm forward and backward (with
//! its lock), and the matrix
//! multiplications (with an epilogue, persistent, and block-scaled MXFP8:
//! `dot_scaled`). Each file names the source it follows and checks its
//! kernels against plain Rust.
//! `tests/corpus.rs` runs them on the CPU device and through the driver
//! stand-ins; `benches/corpus.rs` compares their code with Triton's,
//! compiled from `scripts/corpus/triton_kernels.py` (docs/benchmarks.md,
//! "The corpus").
//!
//! Every kernel computes as Triton does: `approx_math` (the GPUs'
//! one-instruction exp, log and division; sums in any order), `aligned(..)`
//! where Triton's launch specializes on 16-byte divisibility, and the
//! source's warps. Those that still spill registers on some target carry
//! `allow(spills)`, so the build stays quiet: the bench prints their spills
//! beside Triton's.

mod block_scaled_matmul;
mod cross_entropy;
mod decode_attention;
mod embedding;
mod flash_attn;
mod flash_attn_bwd;
mod fused_add_rms_norm;
mod fused_moe;
mod fused_softmax;
mod geglu;
mod jsd;
mod kl_div;
mod layer_norm;
mod layer_norm_bwd;
mod layer_norm_fwd_fused;
mod matmul_leaky_relu;
mod matmul_persistent;
mod rms_norm;
mod rms_norm_backward;
mod rope;
mod scaled_mm;
mod seeded_dropout;
mod swiglu;

use crate::common::{max_error, timed, Example, Inputs, Row};
use tile::meta::KernelInfo;
use tile::{bf16, Device, Error, KernelSpec, Tensor};

/// Every kernel of the corpus with the specialization its source launches.
pub fn kernels() -> Vec<&'static KernelInfo> {
    vec![
        &rms_norm::rms_norm::<4096>::INFO,
        &rms_norm_backward::rms_norm_backward::<4096>::INFO,
        &fused_add_rms_norm::fused_add_rms_norm::<4096>::INFO,
        &layer_norm::layer_norm::<4096>::INFO,
        &swiglu::swiglu::<16384>::INFO,
        &geglu::geglu::<16384>::INFO,
        &rope::rope::<32, 8, 64>::INFO,
        &cross_entropy::cross_entropy::<32768>::INFO,
        &kl_div::kl_div::<16384>::INFO,
        &jsd::jsd::<32768>::INFO,
        &embedding::embedding::<128, 128>::INFO,
        &flash_attn::flash_attn_fwd::<128, 128, 64, 0>::INFO,
        &flash_attn_bwd::flash_attn_bwd_preprocess::<128, 64>::INFO,
        &flash_attn_bwd::flash_attn_bwd::<128, 128, 64, 0>::INFO,
        &matmul_leaky_relu::matmul_leaky_relu::<128, 128, 64, 8>::INFO,
        &matmul_persistent::matmul_persistent::<128, 128, 64, 8>::INFO,
        &block_scaled_matmul::block_scaled_matmul::<128, 128, 128>::INFO,
        &scaled_mm::scaled_mm::<128, 128, 128>::INFO,
        &fused_moe::fused_moe::<64, 64, 32, 8, 2>::INFO,
        &decode_attention::decode_attention::<128, 64, 32, 1>::INFO,
        &fused_softmax::fused_softmax::<4096, 2>::INFO,
        &seeded_dropout::seeded_dropout::<1024>::INFO,
        &layer_norm_fwd_fused::layer_norm_fwd_fused::<8192>::INFO,
        &layer_norm_bwd::layer_norm_bwd_dx_fused::<96, 8192>::INFO,
        &layer_norm_bwd::layer_norm_bwd_dwdb::<32, 128>::INFO,
    ]
}

/// The corpus's runs, one per file, each checking its kernel against plain
/// Rust on a device.
pub const RUNS: [Example; 23] = [
    rms_norm::run,
    rms_norm_backward::run,
    fused_add_rms_norm::run,
    layer_norm::run,
    swiglu::run,
    geglu::run,
    rope::run,
    cross_entropy::run,
    kl_div::run,
    jsd::run,
    embedding::run,
    flash_attn::run,
    flash_attn_bwd::run,
    matmul_leaky_relu::run,
    matmul_persistent::run,
    block_scaled_matmul::run,
    scaled_mm::run,
    fused_moe::run,
    decode_attention::run,
    fused_softmax::run,
    seeded_dropout::run,
    layer_norm_fwd_fused::run,
    layer_norm_bwd::run,
];

/// `x` rounded to bf16.
fn bf16s(x: &[f32]) -> Vec<tile::bf16> {
    x.iter().map(|&v| tile::bf16::from_f32(v)).collect()
}

/// `x` widened to f32.
fn widen(x: &[tile::bf16]) -> Vec<f32> {
    x.iter().map(|v| v.to_f32()).collect()
}

/// `x` rounded to f16.
fn f16s(x: &[f32]) -> Vec<tile::f16> {
    x.iter().map(|&v| tile::f16::from_f32(v)).collect()
}

/// `x` widened to f32.
fn widen_f16(x: &[tile::f16]) -> Vec<f32> {
    x.iter().map(|v| v.to_f32()).collect()
}

/// A gated activation `c = act(a) · b` (SwiGLU, GEGLU) of LLaMA-7B's
/// intermediate width, run by `launch` (one program a row) and checked
/// against `act` in f64: two bf16 roundings (`act(a)`, then the product),
/// 2⁻⁸ each.
fn gated_rows(
    dev: &Device,
    rng: &mut Inputs,
    kernel: &str,
    (spec, launch): (KernelSpec, GatedLaunch),
    act: fn(f64) -> f64,
) -> Result<Vec<Row>, Error> {
    let (rows, cols) = (3, 11008);
    let (a_in, b_in) = (bf16s(&rng.take(rows * cols)), bf16s(&rng.take(rows * cols)));
    let a = dev.tensor_from_slice(&a_in, &[rows, cols])?;
    let b = dev.tensor_from_slice(&b_in, &[rows, cols])?;
    let mut c = dev.zeros::<bf16>(&[rows, cols])?;
    let time = timed(|| launch(dev, [rows as u32], &a, &b, &mut c))?;
    let want: Vec<f64> = widen(&a_in)
        .iter()
        .zip(widen(&b_in))
        .map(|(&a, b)| act(f64::from(a)) * f64::from(b))
        .collect();
    Ok(vec![Row {
        kernel: kernel.into(),
        code: dev.kernel_code(&spec)?,
        shape: format!("[{rows}, {cols}] bf16"),
        max_error: max_error(&widen(&c.to_vec()?), &want),
        tolerance: 1e-2,
        time,
    }])
}

/// A gated activation's launch on a grid of rows: `(a, b, c)`.
type GatedLaunch =
    fn(&Device, [u32; 1], &Tensor<bf16>, &Tensor<bf16>, &mut Tensor<bf16>) -> Result<(), Error>;

/// `a · b` in f64, `a` of `m × k` and `b` of `k × n`, row-major.
fn product(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize)) -> Vec<f64> {
    let mut c = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            c.push(
                (0..k)
                    .map(|kk| f64::from(a[i * k + kk]) * f64::from(b[kk * n + j]))
                    .sum(),
            );
        }
    }
    c
}
