//! Attention backward as the FlashAttention repository's Triton kernels
//! compute it (`flash_attn/flash_attn_triton.py`, no bias, whole blocks):
//! `_bwd_preprocess_do_o_dot`, the row sums `delta = Σ_d O ∘ dO` in
//! blocks of 128 rows, then `_bwd_kernel` with its sequence-parallel
//! configuration (`SEQUENCE_PARALLEL`, 128 × 128 blocks, 8 warps, one
//! stage): one program per block of `BN` keys of one head, which keeps its
//! keys and values, walks the query blocks (from the diagonal's when
//! `CAUSAL = 1`), recomputes the weights `P = exp(S · scale − lse)` from the
//! forward pass's log-sum-exp, accumulates its dK and dV, and adds each
//! query block's share of dQ to an f32 buffer with atomics. Tensors are laid
//! out `[batch, seq, heads, head]`; `lse` and `delta` `[batch · heads,
//! seq]`.

use super::{f16s, widen_f16};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error, KernelCode, Tensor};

/// `delta[i] = Σ_d O[i, d] · dO[i, d]` over a block of `BM` rows of one
/// head.
#[tile_kernel(
    configs(BM = 128, D = 64),
    aligned(out, dout, delta),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn flash_attn_bwd_preprocess<const BM: usize, const D: usize>(
    out: &Tensor<f16, 4>,
    dout: &Tensor<f16, 4>,
    delta: &mut Tensor<f32, 2>,
) {
    let (start_m, off_hb) = (program_id(0), program_id(1));
    let heads = out.dim(2);
    let (b, h) = (off_hb / heads, off_hb % heads);
    let o = partition_view(out, [1, BM, 1, D])
        .load(b, start_m, h, 0)
        .reshape([BM, D])
        .cast::<f32>();
    let d_o = partition_view(dout, [1, BM, 1, D])
        .load(b, start_m, h, 0)
        .reshape([BM, D])
        .cast::<f32>();
    let rows = (o * d_o).sum(1).reshape([1, BM]);
    partition_view(delta, [1, BM]).store(rows, off_hb, start_m);
}

/// dK and dV of a block of `BN` keys, and its share of dQ, added to `dq`.
#[tile_kernel(
    configs(BM = 128, BN = 128, D = 64, CAUSAL = 0),
    configs(BM = 128, BN = 128, D = 64, CAUSAL = 1),
    num_warps = 8,
    num_stages = 1,
    aligned(q, k, v, dout, dq, dk, dv, lse, delta),
    approx_math,
    allow(spills),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn flash_attn_bwd<const BM: usize, const BN: usize, const D: usize, const CAUSAL: usize>(
    q: &Tensor<f16, 4>,
    k: &Tensor<f16, 4>,
    v: &Tensor<f16, 4>,
    dout: &Tensor<f16, 4>,
    dq: &mut Tensor<f32, 4>,
    dk: &mut Tensor<f16, 4>,
    dv: &mut Tensor<f16, 4>,
    lse: &Tensor<f32, 2>,
    delta: &Tensor<f32, 2>,
    scale: f32,
) {
    let (start_n, off_hb) = (program_id(0), program_id(1));
    let heads = q.dim(2);
    let (b, h) = (off_hb / heads, off_hb % heads);
    let seq_q = q.dim(1);
    let kt = partition_view(k, [1, BN, 1, D])
        .load(b, start_n, h, 0)
        .reshape([BN, D]);
    let vt = partition_view(v, [1, BN, 1, D])
        .load(b, start_n, h, 0)
        .reshape([BN, D]);
    let (vq, vdo) = (
        partition_view(q, [1, BM, 1, D]),
        partition_view(dout, [1, BM, 1, D]),
    );
    let (vl, vd) = (partition_view(lse, [1, BM]), partition_view(delta, [1, BM]));
    let vdq = partition_view(dq, [1, BM, 1, D]);
    let cols = iota::<i32>([1, BN]) + start_n * BN;
    // Causal: the query blocks before the one holding this block's first
    // key see none of it.
    let begin = if CAUSAL == 1 { start_n * BN / BM } else { 0 };
    let mut dk_acc = zeros::<f32>([BN, D]);
    let mut dv_acc = zeros::<f32>([BN, D]);
    for m in begin..cdiv(seq_q, BM) {
        let qt = vq.load(b, m, h, 0).reshape([BM, D]);
        let mut qk = dot(qt, kt.transpose(), zeros::<f32>([BM, BN]));
        if CAUSAL == 1 {
            let rows = iota::<i32>([BM, 1]) + m * BM;
            qk = select(rows >= cols, qk, f32::NEG_INFINITY);
        }
        let lse_i = vl.load(off_hb, m).reshape([BM, 1]);
        let p = (qk * scale - lse_i).exp();
        let do_t = vdo.load(b, m, h, 0).reshape([BM, D]);
        dv_acc = dot(p.cast::<f16>().transpose(), do_t, dv_acc);
        let dp = dot(do_t, vt.transpose(), zeros::<f32>([BM, BN]));
        let di = vd.load(off_hb, m).reshape([BM, 1]);
        let ds = (p * (dp - di) * scale).cast::<f16>();
        dk_acc = dot(ds.transpose(), qt, dk_acc);
        let dq_t = dot(ds, kt, zeros::<f32>([BM, D]));
        vdq.atomic_add(dq_t.reshape([1, BM, 1, D]), b, m, h, 0);
    }
    partition_view(dv, [1, BN, 1, D]).store(
        dv_acc.cast::<f16>().reshape([1, BN, 1, D]),
        b,
        start_n,
        h,
        0,
    );
    partition_view(dk, [1, BN, 1, D]).store(
        dk_acc.cast::<f16>().reshape([1, BN, 1, D]),
        b,
        start_n,
        h,
        0,
    );
}

/// One head's rows in a `[batch, seq, heads, head]` tensor: `seq` rows of
/// `d` values from `start`, `stride` apart.
#[derive(Clone, Copy)]
struct Head {
    seq: usize,
    d: usize,
    stride: usize,
    start: usize,
}

impl Head {
    /// Row `i` of `x`, widened to f64.
    fn row(self, x: &[f32], i: usize) -> Vec<f64> {
        x[self.start + i * self.stride..][..self.d]
            .iter()
            .map(|&v| f64::from(v))
            .collect()
    }

    /// Every row of `x`, in order.
    fn rows(self, x: &[f32]) -> Vec<f32> {
        (0..self.seq)
            .flat_map(|i| x[self.start + i * self.stride..][..self.d].to_vec())
            .collect()
    }
}

/// What the forward pass leaves for the backward one, of one head in f64:
/// the output rows and the log-sum-exp of each row's scaled scores.
fn forward(q: &[f32], k: &[f32], v: &[f32], at: Head, scale: f64, causal: bool) -> Forward {
    let mut out = Vec::new();
    let mut lse = Vec::new();
    for i in 0..at.seq {
        let s = scores(q, k, at, scale, causal, i);
        let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let l = max + s.iter().map(|x| (x - max).exp()).sum::<f64>().ln();
        for x in 0..at.d {
            out.push(
                (0..s.len())
                    .map(|j| (s[j] - l).exp() * at.row(v, j)[x])
                    .sum(),
            );
        }
        lse.push(l);
    }
    Forward { out, lse }
}

/// The forward pass's output rows and log-sum-exp of one head.
struct Forward {
    out: Vec<f64>,
    lse: Vec<f64>,
}

/// Row `i`'s scaled scores against the keys it sees.
fn scores(q: &[f32], k: &[f32], at: Head, scale: f64, causal: bool, i: usize) -> Vec<f64> {
    let qi = at.row(q, i);
    let keys = if causal { i + 1 } else { at.seq };
    (0..keys)
        .map(|j| {
            at.row(k, j)
                .iter()
                .zip(&qi)
                .map(|(a, b)| a * b)
                .sum::<f64>()
                * scale
        })
        .collect()
}

/// The gradients of one head in f64, `[seq, d]` each: `(dq, dk, dv)`.
fn backward(inputs: [&[f32]; 4], at: Head, fwd: &Forward, scale: f64, causal: bool) -> Grads {
    let [q, k, v, dout] = inputs;
    let (seq, d) = (at.seq, at.d);
    let mut grads = Grads {
        dq: vec![0.0; seq * d],
        dk: vec![0.0; seq * d],
        dv: vec![0.0; seq * d],
    };
    for i in 0..seq {
        let s = scores(q, k, at, scale, causal, i);
        let p: Vec<f64> = s.iter().map(|x| (x - fwd.lse[i]).exp()).collect();
        let doi = at.row(dout, i);
        let delta: f64 = (0..d).map(|x| fwd.out[i * d + x] * doi[x]).sum();
        let qi = at.row(q, i);
        for (j, &pj) in p.iter().enumerate() {
            let (kj, vj) = (at.row(k, j), at.row(v, j));
            let dp: f64 = doi.iter().zip(&vj).map(|(a, b)| a * b).sum();
            let ds = pj * (dp - delta) * scale;
            for x in 0..d {
                grads.dv[j * d + x] += pj * doi[x];
                grads.dk[j * d + x] += ds * qi[x];
                grads.dq[i * d + x] += ds * kj[x];
            }
        }
    }
    grads
}

/// One head's gradients.
struct Grads {
    dq: Vec<f64>,
    dk: Vec<f64>,
    dv: Vec<f64>,
}

/// The backward pass's launches on one device: `delta`, then dQ, dK and
/// dV, for the causal mask or not.
fn launch(dev: &Device, ins: &Launch<'_>, causal: bool) -> Result<Outputs, Error> {
    let Launch {
        q,
        k,
        v,
        out,
        dout,
        lse,
        shape,
        scale,
    } = ins;
    let [batch, seq, heads, _] = *shape;
    let grid = [seq.div_ceil(128) as u32, (batch * heads) as u32];
    let mut delta = dev.zeros::<f32>(&[batch * heads, seq])?;
    let mut dq = dev.zeros::<f32>(shape)?;
    let mut dk = dev.zeros::<f16>(shape)?;
    let mut dv = dev.zeros::<f16>(shape)?;
    let time = timed(|| {
        // The kernel adds to dQ, which the launcher zeroes first (the
        // source's `pre_hook`).
        dq.fill(0.0)?;
        flash_attn_bwd_preprocess::<128, 64>::launch(dev, grid, (out, *dout, &mut delta))?;
        let args = (
            *q, *k, *v, *dout, &mut dq, &mut dk, &mut dv, lse, &delta, *scale,
        );
        if causal {
            flash_attn_bwd::<128, 128, 64, 1>::launch(dev, grid, args)
        } else {
            flash_attn_bwd::<128, 128, 64, 0>::launch(dev, grid, args)
        }
    })?;
    let spec = if causal {
        flash_attn_bwd::<128, 128, 64, 1>::kernel_spec()
    } else {
        flash_attn_bwd::<128, 128, 64, 0>::kernel_spec()
    };
    Ok(Outputs {
        dq: dq.to_vec()?,
        dk: widen_f16(&dk.to_vec()?),
        dv: widen_f16(&dv.to_vec()?),
        code: dev.kernel_code(&spec)?,
        time,
    })
}

/// The backward pass's inputs on the device.
struct Launch<'a> {
    q: &'a Tensor<f16>,
    k: &'a Tensor<f16>,
    v: &'a Tensor<f16>,
    out: Tensor<f16>,
    dout: &'a Tensor<f16>,
    lse: Tensor<f32>,
    shape: [usize; 4],
    scale: f32,
}

/// What one backward pass returns.
struct Outputs {
    dq: Vec<f32>,
    dk: Vec<f32>,
    dv: Vec<f32>,
    code: KernelCode,
    time: std::time::Duration,
}

/// Two batches of two heads over 256 positions, without and with the
/// causal mask: the forward pass's output (rounded to f16) and
/// log-sum-exp from f64, then the device's gradients against f64's.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (batch, seq, heads, d) = (2, 256, 2, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let shape = [batch, seq, heads, d];
    let len = batch * seq * heads * d;
    let take = |rng: &mut Inputs| widen_f16(&f16s(&rng.take(len)));
    let (qf, kf, vf, dof) = (take(rng), take(rng), take(rng), take(rng));
    let head = |bh: usize| Head {
        seq,
        d,
        stride: heads * d,
        start: (bh / heads) * seq * heads * d + (bh % heads) * d,
    };
    let q = dev.tensor_from_slice(&f16s(&qf), &shape)?;
    let k = dev.tensor_from_slice(&f16s(&kf), &shape)?;
    let v = dev.tensor_from_slice(&f16s(&vf), &shape)?;
    let dout = dev.tensor_from_slice(&f16s(&dof), &shape)?;
    let mut rows = Vec::new();
    for causal in [false, true] {
        let fwds: Vec<Forward> = (0..batch * heads)
            .map(|bh| forward(&qf, &kf, &vf, head(bh), f64::from(scale), causal))
            .collect();
        let (mut out, mut lse) = (vec![0.0f32; len], Vec::with_capacity(batch * heads * seq));
        for (bh, fwd) in fwds.iter().enumerate() {
            let at = head(bh);
            for i in 0..seq {
                for x in 0..d {
                    out[at.start + i * at.stride + x] = fwd.out[i * d + x] as f32;
                }
            }
            lse.extend(fwd.lse.iter().map(|&l| l as f32));
        }
        // The backward pass reads the output as the forward pass stored it.
        let out = widen_f16(&f16s(&out));
        let ins = Launch {
            q: &q,
            k: &k,
            v: &v,
            out: dev.tensor_from_slice(&f16s(&out), &shape)?,
            dout: &dout,
            lse: dev.tensor_from_slice(&lse, &[batch * heads, seq])?,
            shape,
            scale,
        };
        let got = launch(dev, &ins, causal)?;
        let mut err: f64 = 0.0;
        for (bh, fwd) in fwds.iter().enumerate() {
            let at = head(bh);
            let fwd = Forward {
                out: at.rows(&out).iter().map(|&x| f64::from(x)).collect(),
                lse: fwd.lse.clone(),
            };
            let want = backward([&qf, &kf, &vf, &dof], at, &fwd, f64::from(scale), causal);
            err = err
                .max(max_error(&at.rows(&got.dq), &want.dq))
                .max(max_error(&at.rows(&got.dk), &want.dk))
                .max(max_error(&at.rows(&got.dv), &want.dv));
        }
        rows.push(Row {
            kernel: format!("flash_attn_bwd{}", if causal { " causal" } else { "" }),
            code: got.code,
            shape: format!("[{batch}, {seq}, {heads}, {d}] f16"),
            // The weights and their gradients are rounded to f16 (2⁻¹¹)
            // before the products, and dK and dV after them.
            max_error: err,
            tolerance: 2e-3,
            time: got.time,
        });
    }
    Ok(rows)
}
