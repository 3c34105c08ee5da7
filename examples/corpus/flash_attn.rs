//! Attention forward as the FlashAttention repository's Triton kernel
//! computes it (`flash_attn/flash_attn_triton.py`, `_fwd_kernel`, no bias,
//! whole blocks): tensors laid out `[batch, seq, heads, head]`, one program
//! per block of `BM` queries of one head of one batch, the keys and values
//! streamed in blocks of `BN` with a running row maximum `m` and
//! log-sum-exp `lse`, scores scaled inside the exponential, the output
//! rescaled once at the end and `lse` stored for the backward pass. The
//! file's launcher takes 128 × 128 blocks, 4 warps for heads up to 64 and
//! one stage; `CAUSAL = 1` masks keys after the query and stops the loop
//! at the diagonal.

use super::{f16s, widen_f16};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BM = 128, BN = 128, D = 64, CAUSAL = 0),
    configs(BM = 128, BN = 128, D = 64, CAUSAL = 1),
    num_stages = 1,
    aligned(q, k, v, out, lse),
    approx_math,
    allow(spills),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn flash_attn_fwd<const BM: usize, const BN: usize, const D: usize, const CAUSAL: usize>(
    q: &Tensor<f16, 4>,
    k: &Tensor<f16, 4>,
    v: &Tensor<f16, 4>,
    out: &mut Tensor<f16, 4>,
    lse: &mut Tensor<f32, 2>,
    scale: f32,
) {
    let (start_m, off_hb) = (program_id(0), program_id(1));
    let heads = q.dim(2);
    let (b, h) = (off_hb / heads, off_hb % heads);
    let seq = k.dim(1);
    let qt = partition_view(q, [1, BM, 1, D])
        .load(b, start_m, h, 0)
        .reshape([BM, D]);
    let (vk, vv) = (
        partition_view(k, [1, BN, 1, D]),
        partition_view(v, [1, BN, 1, D]),
    );
    let rows = iota::<i32>([BM, 1]) + start_m * BM;
    let mut lse_i = full([BM, 1], f32::NEG_INFINITY);
    let mut m_i = full([BM, 1], f32::NEG_INFINITY);
    let mut acc = zeros::<f32>([BM, D]);
    let end = if CAUSAL == 1 {
        min((start_m + 1) * BM, seq)
    } else {
        seq
    };
    for j in 0..cdiv(end, BN) {
        let kt = vk.load(b, j, h, 0).reshape([BN, D]);
        let mut qk = dot(qt, kt.transpose(), zeros::<f32>([BM, BN]));
        if CAUSAL == 1 {
            let cols = iota::<i32>([1, BN]) + j * BN;
            qk = qk + select(rows >= cols, 0.0, f32::NEG_INFINITY);
        }
        let m_ij = (qk.max_along_keepdim(1) * scale).max(lse_i);
        let p = (qk * scale - m_ij).exp();
        let l_ij = p.sum_keepdim(1);
        let vt = vv.load(b, j, h, 0).reshape([BN, D]);
        acc = dot(p.cast::<f16>(), vt, acc * (m_i - m_ij).exp());
        m_i = m_ij;
        lse_i = m_ij + ((lse_i - m_ij).exp() + l_ij).ln();
    }
    let o = acc * (m_i - lse_i).exp();
    partition_view(lse, [1, BM]).store(lse_i.reshape([1, BM]), off_hb, start_m);
    partition_view(out, [1, BM, 1, D]).store(
        o.cast::<f16>().reshape([1, BM, 1, D]),
        b,
        start_m,
        h,
        0,
    );
}

/// Softmax attention in f64 of one head: `[seq, head]` rows of `q`, `k`,
/// `v` taken with `stride` between rows; the output and log-sum-exp rows.
fn reference(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    at: Layout,
    scale: f64,
    causal: bool,
) -> (Vec<f64>, Vec<f64>) {
    let Layout {
        seq,
        d,
        stride,
        start,
    } = at;
    let row = |x: &[f32], i: usize| -> Vec<f64> {
        x[start + i * stride..][..d]
            .iter()
            .map(|&v| f64::from(v))
            .collect()
    };
    let (mut out, mut lses) = (Vec::new(), Vec::new());
    for i in 0..seq {
        let qi = row(q, i);
        let keys = if causal { i + 1 } else { seq };
        let s: Vec<f64> = (0..keys)
            .map(|j| row(k, j).iter().zip(&qi).map(|(a, b)| a * b).sum::<f64>() * scale)
            .collect();
        let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = s.iter().map(|x| (x - max).exp()).sum();
        for x in 0..d {
            let o: f64 = (0..keys).map(|j| (s[j] - max).exp() * row(v, j)[x]).sum();
            out.push(o / sum);
        }
        lses.push(max + sum.ln());
    }
    (out, lses)
}

/// Where one head's rows lie in a `[batch, seq, heads, head]` tensor.
#[derive(Clone, Copy)]
struct Layout {
    seq: usize,
    d: usize,
    stride: usize,
    start: usize,
}

/// Two batches of two heads over 256 positions, without and with the
/// causal mask.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (batch, seq, heads, d) = (2, 256, 2, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let shape = [batch, seq, heads, d];
    let len = batch * seq * heads * d;
    let (qs, ks, vs) = (
        f16s(&rng.take(len)),
        f16s(&rng.take(len)),
        f16s(&rng.take(len)),
    );
    let q = dev.tensor_from_slice(&qs, &shape)?;
    let k = dev.tensor_from_slice(&ks, &shape)?;
    let v = dev.tensor_from_slice(&vs, &shape)?;
    let (qf, kf, vf) = (widen_f16(&qs), widen_f16(&ks), widen_f16(&vs));
    let grid = [seq.div_ceil(128) as u32, (batch * heads) as u32];
    let mut rows = Vec::new();
    for causal in [false, true] {
        let mut out = dev.zeros::<f16>(&shape)?;
        let mut lse = dev.zeros::<f32>(&[batch * heads, seq])?;
        let (time, code) = if causal {
            let time = timed(|| {
                let args = (&q, &k, &v, &mut out, &mut lse, scale);
                flash_attn_fwd::<128, 128, 64, 1>::launch(dev, grid, args)
            })?;
            (
                time,
                dev.kernel_code(&flash_attn_fwd::<128, 128, 64, 1>::kernel_spec())?,
            )
        } else {
            let time = timed(|| {
                let args = (&q, &k, &v, &mut out, &mut lse, scale);
                flash_attn_fwd::<128, 128, 64, 0>::launch(dev, grid, args)
            })?;
            (
                time,
                dev.kernel_code(&flash_attn_fwd::<128, 128, 64, 0>::kernel_spec())?,
            )
        };
        let (got, got_lse) = (widen_f16(&out.to_vec()?), lse.to_vec()?);
        let mut err: f64 = 0.0;
        for bh in 0..batch * heads {
            let at = Layout {
                seq,
                d,
                stride: heads * d,
                start: (bh / heads) * seq * heads * d + (bh % heads) * d,
            };
            let (want, want_lse) = reference(&qf, &kf, &vf, at, f64::from(scale), causal);
            let mine: Vec<f32> = (0..seq)
                .flat_map(|i| got[at.start + i * at.stride..][..d].to_vec())
                .collect();
            err = err
                .max(max_error(&mine, &want))
                .max(max_error(&got_lse[bh * seq..][..seq], &want_lse));
        }
        rows.push(Row {
            kernel: format!("flash_attn_fwd{}", if causal { " causal" } else { "" }),
            code,
            shape: format!("[{batch}, {seq}, {heads}, {d}] f16"),
            // The weights are rounded to f16 (2⁻¹¹) before the second
            // product, and the output too.
            max_error: err,
            tolerance: 2e-3,
            time,
        });
    }
    Ok(rows)
}
