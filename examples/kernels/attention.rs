//! Attention forward with an online softmax (FlashAttention style): each
//! program instance owns `BM` query rows and streams the keys and values in
//! blocks of `BN`, keeping a running row maximum `m`, a running sum `l` and
//! an unnormalized output `acc`, rescaled whenever the maximum grows.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error};

#[tile_kernel(configs(BM = 16, BN = 16, D = 64))]
pub fn attention<const BM: usize, const BN: usize, const D: usize>(
    q: &Tensor<f32, 2>,
    k: &Tensor<f32, 2>,
    v: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
    scale: f32,
) {
    let pid = program_id(0);
    let seq = k.dim(0);
    let qt = partition_view(q, [BM, D]).load_masked(pid, 0) * scale;
    let (vk, vv) = (partition_view(k, [BN, D]), partition_view(v, [BN, D]));
    let mut m = full([BM, 1], f32::NEG_INFINITY);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..cdiv(seq, BN) {
        let s = dot(qt, vk.load_masked(j, 0).transpose(), zeros::<f32>([BM, BN]));
        // Keys past the end of the sequence get no weight.
        let key = iota::<i32>([BN]) + j * BN;
        let s = select(key < seq, s, f32::NEG_INFINITY);
        let m_new = m.max(s.max_along_keepdim(1));
        let p = (s - m_new).exp();
        let alpha = (m - m_new).exp();
        l = l * alpha + p.sum_keepdim(1);
        acc = dot(p, vv.load_masked(j, 0), acc * alpha);
        m = m_new;
    }
    partition_view(out, [BM, D]).store_masked(acc / l, pid, 0);
}

/// The same in f16: both products are `tensor` dots (on `mma.sync` from
/// sm_80 on, on MFMA's 32×32×8 on gfx90a and gfx942), the scores and the
/// running statistics in f32, the weights rounded to f16 for the second
/// product. 64 query rows and 32 keys per block give both products whole
/// 16×8 blocks for NVIDIA's 4 warps; CDNA's 4 waves share the 64×64 output
/// as 32×32 blocks and the 64×32 scores as 16×16 ones.
/// Built for those targets and the CPU only (as chains of FMAs, the AMD
/// targets' LLVM took 20 s per target over it; gfx1100 is not built).
#[tile_kernel(configs(
    BM = 64,
    BN = 32,
    D = 64,
    targets = "sm_80,sm_86,sm_89,sm_90,gfx90a,gfx942,host"
))]
pub fn attention_f16<const BM: usize, const BN: usize, const D: usize>(
    q: &Tensor<f16, 2>,
    k: &Tensor<f16, 2>,
    v: &Tensor<f16, 2>,
    out: &mut Tensor<f32, 2>,
    scale: f32,
) {
    let pid = program_id(0);
    let seq = k.dim(0);
    let qt = partition_view(q, [BM, D]).load_masked(pid, 0);
    let (vk, vv) = (partition_view(k, [BN, D]), partition_view(v, [BN, D]));
    let mut m = full([BM, 1], f32::NEG_INFINITY);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..cdiv(seq, BN) {
        let s = dot(qt, vk.load_masked(j, 0).transpose(), zeros::<f32>([BM, BN])) * scale;
        let key = iota::<i32>([BN]) + j * BN;
        let s = select(key < seq, s, f32::NEG_INFINITY);
        let m_new = m.max(s.max_along_keepdim(1));
        let p = (s - m_new).exp();
        let alpha = (m - m_new).exp();
        l = l * alpha + p.sum_keepdim(1);
        acc = dot(p.cast::<f16>(), vv.load_masked(j, 0), acc * alpha);
        m = m_new;
    }
    partition_view(out, [BM, D]).store_masked(acc / l, pid, 0);
}

/// The plain-Rust reference: softmax(q kᵀ · scale) v in f64.
pub fn reference(q: &[f32], k: &[f32], v: &[f32], seq: usize, d: usize, scale: f32) -> Vec<f64> {
    let mut out = vec![0.0; seq * d];
    for i in 0..seq {
        let scores: Vec<f64> = (0..seq)
            .map(|j| {
                let dot: f64 = (0..d)
                    .map(|x| f64::from(q[i * d + x]) * f64::from(k[j * d + x]))
                    .sum();
                dot * f64::from(scale)
            })
            .collect();
        let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
        let sum: f64 = weights.iter().sum();
        for x in 0..d {
            let o: f64 = (0..seq).map(|j| weights[j] * f64::from(v[j * d + x])).sum();
            out[i * d + x] = o / sum;
        }
    }
    out
}

/// One head of attention over a sequence length that leaves partial blocks.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (seq, d) = (200, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let (qs, ks, vs) = (rng.take(seq * d), rng.take(seq * d), rng.take(seq * d));
    let q = dev.tensor_from_slice(&qs, &[seq, d])?;
    let k = dev.tensor_from_slice(&ks, &[seq, d])?;
    let v = dev.tensor_from_slice(&vs, &[seq, d])?;
    let mut out = dev.zeros::<f32>(&[seq, d])?;
    let grid = [seq.div_ceil(16) as u32];
    let time = timed(|| attention::<16, 16, 64>::launch(dev, grid, (&q, &k, &v, &mut out, scale)))?;
    let f32_row = Row {
        kernel: "attention".into(),
        code: dev.kernel_code(&attention::<16, 16, 64>::kernel_spec())?,
        shape: format!("seq {seq}, head {d}"),
        max_error: max_error(&out.to_vec()?, &reference(&qs, &ks, &vs, seq, d, scale)),
        tolerance: 1e-5,
        time,
    };
    let spec = attention_f16::<64, 32, 64>::kernel_spec();
    let code = match dev.kernel_code(&spec) {
        Ok(code) => code,
        Err(Error::NoImage { .. }) => {
            println!(
                "attention f16: not built for {dev} (sm_80 and later, gfx90a, gfx942, the CPU)"
            );
            return Ok(vec![f32_row]);
        }
        Err(e) => return Err(e),
    };
    let half = |x: &[f32]| x.iter().map(|&v| f16::from_f32(v)).collect::<Vec<f16>>();
    let (q16, k16, v16) = (half(&qs), half(&ks), half(&vs));
    let q = dev.tensor_from_slice(&q16, &[seq, d])?;
    let k = dev.tensor_from_slice(&k16, &[seq, d])?;
    let v = dev.tensor_from_slice(&v16, &[seq, d])?;
    let mut out = dev.zeros::<f32>(&[seq, d])?;
    let grid = [seq.div_ceil(64) as u32];
    let time =
        timed(|| attention_f16::<64, 32, 64>::launch(dev, grid, (&q, &k, &v, &mut out, scale)))?;
    let widen = |x: &[f16]| x.iter().map(|v| v.to_f32()).collect::<Vec<f32>>();
    let want = reference(&widen(&q16), &widen(&k16), &widen(&v16), seq, d, scale);
    let f16_row = Row {
        kernel: "attention f16".into(),
        code,
        shape: format!("seq {seq}, head {d}"),
        // The weights are rounded to f16 (relative 2^-11) before the second
        // product; the output is a weighted mean of v.
        max_error: max_error(&out.to_vec()?, &want),
        tolerance: 2e-3,
        time,
    };
    Ok(vec![f32_row, f16_row])
}
