//! The attention forward benchmark: FlashAttention's online softmax over
//! `BH` heads at once, f16 in and out, the log-sum-exp of each query row
//! kept for the backward pass. Q, K, V and the output are `[BH · seq, D]`
//! (the heads one after another); the grid is `[seq / BM, BH]`. With
//! `causal` (0 or 1) a query attends to the keys at or before it only, and
//! its program stops at the diagonal block. `exp` is the GPU's own
//! approximation (`approx_math`: `ex2.approx` on NVIDIA), as Triton's and
//! FlashAttention's kernels compute it. Its sm_80 and gfx942 images spill
//! registers (the code generation issue these benchmarks measure), hence
//! `allow(spills)`. The 128-row specializations run on 8 warps (two
//! warpgroups of 64 rows on Hopper), the others on 4.

use super::{Bench, Case, Inputs, Peak, Problem};
use tile::autotune::Candidate;
use tile::{f16, tile_kernel, Device, Error, LaunchArg};

#[tile_kernel(
    targets = "sm_80,sm_90a,gfx942",
    aligned(q, k, v, out),
    approx_math,
    allow(spills),
    configs(BM = 64, BN = 32, D = 64),
    configs(BM = 64, BN = 64, D = 64),
    configs(BM = 128, BN = 64, D = 64, num_warps = 8),
    configs(BM = 64, BN = 32, D = 128, targets = "sm_80,sm_90a"),
    configs(BM = 64, BN = 64, D = 128, targets = "sm_80,sm_90a"),
    configs(BM = 128, BN = 128, D = 64, num_warps = 8, targets = "sm_90a"),
    configs(BM = 128, BN = 64, D = 128, num_warps = 8, targets = "sm_90a")
)]
pub fn attention_fwd<const BM: usize, const BN: usize, const D: usize>(
    q: &Tensor<f16, 2>,
    k: &Tensor<f16, 2>,
    v: &Tensor<f16, 2>,
    out: &mut Tensor<f16, 2>,
    lse: &mut Tensor<f32>,
    seq: i32,
    scale: f32,
    causal: i32,
) {
    let (pid_m, bh) = (program_id(0), program_id(1));
    let q_block = bh * (seq / BM) + pid_m;
    let first_key = bh * (seq / BN);
    let qt = partition_view(q, [BM, D]).load(q_block, 0);
    let (vk, vv) = (partition_view(k, [BN, D]), partition_view(v, [BN, D]));
    let query = (iota::<i32>([BM]) + pid_m * BM).reshape([BM, 1]);
    // Causal programs stop after the block holding their last query.
    let blocks = min(seq / BN, cdiv((pid_m + 1) * BM, BN) + (1 - causal) * seq);
    let mut m = full([BM, 1], f32::NEG_INFINITY);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..blocks {
        let kt = vk.load(first_key + j, 0);
        let s = dot(qt, kt.transpose(), zeros::<f32>([BM, BN])) * scale;
        let key = (iota::<i32>([BN]) + j * BN).reshape([1, BN]);
        let s = select((causal == 0) | (key <= query), s, f32::NEG_INFINITY);
        let m_new = m.max(s.max_along_keepdim(1));
        let p = (s - m_new).exp();
        let alpha = (m - m_new).exp();
        l = l * alpha + p.sum_keepdim(1);
        acc = dot(p.cast::<f16>(), vv.load(first_key + j, 0), acc * alpha);
        m = m_new;
    }
    partition_view(out, [BM, D]).store((acc / l).cast::<f16>(), q_block, 0);
    partition_view(lse, [BM]).store((m + l.ln()).reshape([BM]), q_block);
}

/// One attention problem: heads, sequence length, head size, causal.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Batch × heads.
    pub heads: usize,
    /// The sequence length (a multiple of 128).
    pub seq: usize,
    /// The head size, 64 or 128.
    pub d: usize,
    /// Whether queries see only the keys at or before them.
    pub causal: bool,
}

impl Shape {
    /// The forward pass's floating-point operations: two products of
    /// `seq² · d` per head, half of them under a causal mask.
    pub fn forward_flops(&self) -> f64 {
        let full = 4.0 * (self.heads * self.seq * self.seq * self.d) as f64;
        if self.causal {
            full / 2.0
        } else {
            full
        }
    }

    /// The parameters `reference.py` runs the same problem by.
    pub fn params(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("heads", self.heads),
            ("seq", self.seq),
            ("d", self.d),
            ("causal", usize::from(self.causal)),
        ]
    }

    /// The softmax scale, `1 / √d`.
    pub fn scale(&self) -> f32 {
        1.0 / (self.d as f32).sqrt()
    }
}

/// The inputs of one shape on the device, and widened on the host.
pub struct Inputs16 {
    /// Q, K, V (and, for the backward pass, dO) on the device.
    pub dev: Vec<tile::Tensor<f16>>,
    /// The same values as f32 on the host.
    pub host: Vec<Vec<f32>>,
}

/// `count` tensors of `[heads · seq, d]` f16 values.
pub fn inputs(dev: &Device, shape: &Shape, count: usize) -> Result<Inputs16, Error> {
    let mut rng = Inputs::default();
    let rows = shape.heads * shape.seq;
    let mut out = Inputs16 {
        dev: Vec::new(),
        host: Vec::new(),
    };
    for _ in 0..count {
        let h: Vec<f16> = rng
            .take(rows * shape.d)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        out.dev.push(dev.tensor_from_slice(&h, &[rows, shape.d])?);
        out.host.push(h.iter().map(|x| x.to_f32()).collect());
    }
    Ok(out)
}

/// The forward pass's candidates for a shape: every specialization of its
/// head size.
pub fn forward_candidates(shape: &Shape) -> Vec<Candidate> {
    let grid = |bm: usize| [(shape.seq / bm) as u32, shape.heads as u32, 1];
    match shape.d {
        64 => vec![
            Candidate {
                spec: attention_fwd::<64, 32, 64>::kernel_spec(),
                grid: grid(64),
            },
            Candidate {
                spec: attention_fwd::<64, 64, 64>::kernel_spec(),
                grid: grid(64),
            },
            Candidate {
                spec: attention_fwd::<128, 64, 64>::kernel_spec(),
                grid: grid(128),
            },
            Candidate {
                spec: attention_fwd::<128, 128, 64>::kernel_spec(),
                grid: grid(128),
            },
        ],
        _ => vec![
            Candidate {
                spec: attention_fwd::<64, 32, 128>::kernel_spec(),
                grid: grid(64),
            },
            Candidate {
                spec: attention_fwd::<64, 64, 128>::kernel_spec(),
                grid: grid(64),
            },
            Candidate {
                spec: attention_fwd::<128, 64, 128>::kernel_spec(),
                grid: grid(128),
            },
        ],
    }
}

/// The scaled scores of query row `i` (a row of all heads' rows) against
/// every key of its head, with the causal mask as `-inf`.
pub fn scores(shape: &Shape, q: &[f32], k: &[f32], i: usize) -> Vec<f64> {
    let (seq, d) = (shape.seq, shape.d);
    let head = i / seq;
    let qi = &q[i * d..(i + 1) * d];
    (0..seq)
        .map(|j| {
            if shape.causal && j > i % seq {
                return f64::NEG_INFINITY;
            }
            let kj = &k[(head * seq + j) * d..(head * seq + j + 1) * d];
            let dot: f64 = qi
                .iter()
                .zip(kj)
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum();
            dot * f64::from(shape.scale())
        })
        .collect()
}

/// The log-sum-exp of a row of scores.
pub fn log_sum_exp(s: &[f64]) -> f64 {
    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    max + s.iter().map(|x| (x - max).exp()).sum::<f64>().ln()
}

/// The forward pass on a shape: autotuned, timed, and sampled rows of its
/// output and log-sum-exp checked against f64.
pub fn bench(dev: &Device, shape: &Shape) -> Result<Option<Bench>, Error> {
    let ins = inputs(dev, shape, 3)?;
    let rows = shape.heads * shape.seq;
    let mut out = dev.zeros::<f16>(&[rows, shape.d])?;
    let mut lse = dev.zeros::<f32>(&[rows])?;
    let name = format!(
        "attention fwd d{}{}",
        shape.d,
        if shape.causal { " causal" } else { "" }
    );
    let case = Case {
        name,
        kind: "attention_fwd",
        params: shape.params(),
        problem: Problem::Flops(shape.forward_flops(), Peak::Half),
    };
    let args: Vec<LaunchArg<'_>> = vec![
        (&ins.dev[0]).into(),
        (&ins.dev[1]).into(),
        (&ins.dev[2]).into(),
        (&mut out).into(),
        (&mut lse).into(),
        LaunchArg::scalar(shape.seq as i32),
        LaunchArg::scalar(shape.scale()),
        LaunchArg::scalar(i32::from(shape.causal)),
    ];
    let Some(mut bench) = Bench::run(dev, case, &forward_candidates(shape), args)? else {
        return Ok(None);
    };
    let (got, got_lse) = (out.to_vec()?, lse.to_vec()?);
    let (q, k, v) = (&ins.host[0], &ins.host[1], &ins.host[2]);
    let d = shape.d;
    bench.error = super::sampled_rows(rows, |i| {
        let s = scores(shape, q, k, i);
        let total = log_sum_exp(&s);
        let head = i / shape.seq;
        let out_err = (0..d)
            .map(|x| {
                let want: f64 = (0..shape.seq)
                    .map(|j| (s[j] - total).exp() * f64::from(v[(head * shape.seq + j) * d + x]))
                    .sum();
                (f64::from(got[i * d + x].to_f32()) - want).abs() / (1.0 + want.abs())
            })
            .fold(0.0, f64::max);
        out_err.max((f64::from(got_lse[i]) - total).abs() / (1.0 + total.abs()))
    });
    // The weights are rounded to f16 before the second product, and the
    // output to f16.
    bench.tolerance = 4e-3;
    Ok(Some(bench))
}
