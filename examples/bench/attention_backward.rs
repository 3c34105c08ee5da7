//! The attention backward benchmark, FlashAttention-2's way: `delta`, the
//! row sums of `O ∘ dO`; then one kernel that owns a block of keys and
//! accumulates its dK and dV over the query blocks, and one that owns a
//! block of queries and accumulates its dQ over the key blocks, each
//! recomputing the weights `P = exp(S − lse)` from the forward pass's
//! log-sum-exp. Layouts, grids and `exp` (`approx_math`) as in the forward
//! pass (`attention.rs`).
//! Their images spill registers on sm_80 and gfx942 (the code generation
//! issue these benchmarks measure), hence `allow(spills)`.

use super::attention::{self, forward_candidates, scores, Shape};
use super::{Bench, Case, Peak, Problem};
use tile::autotune::Candidate;
use tile::{f16, tile_kernel, Device, Error, LaunchArg};

/// `delta[i] = Σ_d O[i, d] · dO[i, d]`, `B` rows per program: 64 of head
/// 64, 32 of head 128 (64 rows of 128 columns are 64 elements of each
/// operand a thread, which spill on sm_80).
#[tile_kernel(
    targets = "sm_80,sm_90a,gfx942",
    aligned(o, dout),
    configs(B = 64, D = 64),
    configs(B = 32, D = 128)
)]
pub fn attention_delta<const B: usize, const D: usize>(
    o: &Tensor<f16, 2>,
    dout: &Tensor<f16, 2>,
    delta: &mut Tensor<f32>,
) {
    let pid = program_id(0);
    let prod = partition_view(o, [B, D]).load(pid, 0).cast::<f32>()
        * partition_view(dout, [B, D]).load(pid, 0).cast::<f32>();
    partition_view(delta, [B]).store(prod.sum(1), pid);
}

/// dK and dV of a block of `BN` keys, over the query blocks of `BM` rows
/// that see them.
#[tile_kernel(
    targets = "sm_80,sm_90a,gfx942",
    aligned(q, k, v, dout, dk, dv),
    approx_math,
    allow(spills),
    configs(BM = 32, BN = 64, D = 64),
    configs(BM = 64, BN = 64, D = 64),
    configs(BM = 32, BN = 64, D = 128, targets = "sm_80,sm_90a")
)]
pub fn attention_dkdv<const BM: usize, const BN: usize, const D: usize>(
    q: &Tensor<f16, 2>,
    k: &Tensor<f16, 2>,
    v: &Tensor<f16, 2>,
    dout: &Tensor<f16, 2>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    dk: &mut Tensor<f16, 2>,
    dv: &mut Tensor<f16, 2>,
    seq: i32,
    scale: f32,
    causal: i32,
) {
    let (pid_n, bh) = (program_id(0), program_id(1));
    let key_block = bh * (seq / BN) + pid_n;
    let kt = partition_view(k, [BN, D]).load(key_block, 0);
    let vt = partition_view(v, [BN, D]).load(key_block, 0);
    let (vq, vdo) = (partition_view(q, [BM, D]), partition_view(dout, [BM, D]));
    let (vl, vd) = (partition_view(lse, [BM]), partition_view(delta, [BM]));
    let key = (iota::<i32>([BN]) + pid_n * BN).reshape([BN, 1]);
    let base = bh * (seq / BM);
    // Causal: the query blocks before this block's first key see none of it.
    let start = causal * (pid_n * BN / BM);
    let mut dk_acc = zeros::<f32>([BN, D]);
    let mut dv_acc = zeros::<f32>([BN, D]);
    for i in start..seq / BM {
        let qt = vq.load(base + i, 0);
        let do_t = vdo.load(base + i, 0);
        let l = vl.load(base + i).reshape([1, BM]);
        let dl = vd.load(base + i).reshape([1, BM]);
        let query = (iota::<i32>([BM]) + i * BM).reshape([1, BM]);
        let st = dot(kt, qt.transpose(), zeros::<f32>([BN, BM])) * scale;
        let pt = select((causal == 0) | (query >= key), (st - l).exp(), 0.0);
        dv_acc = dot(pt.cast::<f16>(), do_t, dv_acc);
        let dpt = dot(vt, do_t.transpose(), zeros::<f32>([BN, BM]));
        dk_acc = dot((pt * (dpt - dl)).cast::<f16>(), qt, dk_acc);
    }
    partition_view(dk, [BN, D]).store((dk_acc * scale).cast::<f16>(), key_block, 0);
    partition_view(dv, [BN, D]).store(dv_acc.cast::<f16>(), key_block, 0);
}

/// dQ of a block of `BM` queries, over the key blocks they see.
#[tile_kernel(
    targets = "sm_80,sm_90a,gfx942",
    aligned(q, k, v, dout, dq),
    approx_math,
    allow(spills),
    configs(BM = 64, BN = 32, D = 64),
    configs(BM = 64, BN = 64, D = 64),
    configs(BM = 64, BN = 32, D = 128, targets = "sm_80,sm_90a")
)]
pub fn attention_dq<const BM: usize, const BN: usize, const D: usize>(
    q: &Tensor<f16, 2>,
    k: &Tensor<f16, 2>,
    v: &Tensor<f16, 2>,
    dout: &Tensor<f16, 2>,
    lse: &Tensor<f32>,
    delta: &Tensor<f32>,
    dq: &mut Tensor<f16, 2>,
    seq: i32,
    scale: f32,
    causal: i32,
) {
    let (pid_m, bh) = (program_id(0), program_id(1));
    let q_block = bh * (seq / BM) + pid_m;
    let first_key = bh * (seq / BN);
    let qt = partition_view(q, [BM, D]).load(q_block, 0);
    let do_t = partition_view(dout, [BM, D]).load(q_block, 0);
    let l = partition_view(lse, [BM]).load(q_block).reshape([BM, 1]);
    let dl = partition_view(delta, [BM]).load(q_block).reshape([BM, 1]);
    let (vk, vv) = (partition_view(k, [BN, D]), partition_view(v, [BN, D]));
    let query = (iota::<i32>([BM]) + pid_m * BM).reshape([BM, 1]);
    let blocks = min(seq / BN, cdiv((pid_m + 1) * BM, BN) + (1 - causal) * seq);
    let mut dq_acc = zeros::<f32>([BM, D]);
    for j in 0..blocks {
        let kt = vk.load(first_key + j, 0);
        let s = dot(qt, kt.transpose(), zeros::<f32>([BM, BN])) * scale;
        let key = (iota::<i32>([BN]) + j * BN).reshape([1, BN]);
        let p = select((causal == 0) | (key <= query), (s - l).exp(), 0.0);
        let dp = dot(
            do_t,
            vv.load(first_key + j, 0).transpose(),
            zeros::<f32>([BM, BN]),
        );
        dq_acc = dot((p * (dp - dl)).cast::<f16>(), kt, dq_acc);
    }
    partition_view(dq, [BM, D]).store((dq_acc * scale).cast::<f16>(), q_block, 0);
}

/// The backward pass on a shape: the forward pass for its output and
/// log-sum-exp, then `delta`, dK and dV, and dQ, each autotuned and timed;
/// the reported time is their sum. Sampled rows of dQ, dK and dV are
/// checked against f64 (with the device's log-sum-exp and output, which the
/// forward benchmark checks).
pub fn bench(dev: &Device, shape: &Shape) -> Result<Option<Bench>, Error> {
    let ins = attention::inputs(dev, shape, 4)?;
    let (rows, d) = (shape.heads * shape.seq, shape.d);
    let mut o = dev.zeros::<f16>(&[rows, d])?;
    let mut lse = dev.zeros::<f32>(&[rows])?;
    // The scalar arguments every kernel but `delta` ends with.
    let scalars = || {
        [
            LaunchArg::scalar(shape.seq as i32),
            LaunchArg::scalar(shape.scale()),
            LaunchArg::scalar(i32::from(shape.causal)),
        ]
    };
    let [q, k, v, dout] = [&ins.dev[0], &ins.dev[1], &ins.dev[2], &ins.dev[3]];
    let forward = &forward_candidates(shape)[0];
    tile::launch(
        dev,
        &forward.spec,
        forward.grid,
        &mut [
            q.into(),
            k.into(),
            v.into(),
            (&mut o).into(),
            (&mut lse).into(),
        ]
        .into_iter()
        .chain(scalars())
        .collect::<Vec<_>>(),
    )?;
    let case = |kind| Case {
        name: String::new(),
        kind,
        params: shape.params(),
        problem: Problem::Flops(0.0, Peak::Half),
    };
    let mut delta = dev.zeros::<f32>(&[rows])?;
    let (delta_spec, delta_rows) = match d {
        64 => (attention_delta::<64, 64>::kernel_spec(), 64),
        _ => (attention_delta::<32, 128>::kernel_spec(), 32),
    };
    let Some(delta_run) = Bench::run(
        dev,
        case("attention_delta"),
        &[Candidate {
            spec: delta_spec,
            grid: [(rows / delta_rows) as u32, 1, 1],
        }],
        vec![(&o).into(), dout.into(), (&mut delta).into()],
    )?
    else {
        return Ok(None);
    };
    let (mut dk, mut dv) = (dev.zeros::<f16>(&[rows, d])?, dev.zeros::<f16>(&[rows, d])?);
    let grid = |b: usize| [(shape.seq / b) as u32, shape.heads as u32, 1];
    let dkdv_candidates = match d {
        64 => vec![
            Candidate {
                spec: attention_dkdv::<32, 64, 64>::kernel_spec(),
                grid: grid(64),
            },
            Candidate {
                spec: attention_dkdv::<64, 64, 64>::kernel_spec(),
                grid: grid(64),
            },
        ],
        _ => vec![Candidate {
            spec: attention_dkdv::<32, 64, 128>::kernel_spec(),
            grid: grid(64),
        }],
    };
    let Some(dkdv_run) = Bench::run(
        dev,
        case("attention_dkdv"),
        &dkdv_candidates,
        vec![
            q.into(),
            k.into(),
            v.into(),
            dout.into(),
            (&lse).into(),
            (&delta).into(),
            (&mut dk).into(),
            (&mut dv).into(),
        ]
        .into_iter()
        .chain(scalars())
        .collect(),
    )?
    else {
        return Ok(None);
    };
    let mut dq = dev.zeros::<f16>(&[rows, d])?;
    let dq_candidates = match d {
        64 => vec![
            Candidate {
                spec: attention_dq::<64, 32, 64>::kernel_spec(),
                grid: grid(64),
            },
            Candidate {
                spec: attention_dq::<64, 64, 64>::kernel_spec(),
                grid: grid(64),
            },
        ],
        _ => vec![Candidate {
            spec: attention_dq::<64, 32, 128>::kernel_spec(),
            grid: grid(64),
        }],
    };
    let Some(dq_run) = Bench::run(
        dev,
        case("attention_dq"),
        &dq_candidates,
        vec![
            q.into(),
            k.into(),
            v.into(),
            dout.into(),
            (&lse).into(),
            (&delta).into(),
            (&mut dq).into(),
        ]
        .into_iter()
        .chain(scalars())
        .collect(),
    )?
    else {
        return Ok(None);
    };
    let error = check(
        shape,
        &ins.host,
        (&o.to_vec()?, &lse.to_vec()?),
        [&dq.to_vec()?, &dk.to_vec()?, &dv.to_vec()?],
    );
    Ok(Some(Bench {
        case: Case {
            name: format!(
                "attention bwd d{d}{}",
                if shape.causal { " causal" } else { "" }
            ),
            kind: "attention_bwd",
            params: shape.params(),
            // FlashAttention's count: the backward pass is 2.5 forward passes.
            problem: Problem::Flops(2.5 * shape.forward_flops(), Peak::Half),
        },
        config: format!("{}; {}", dkdv_run.config, dq_run.config),
        candidates: dkdv_run.candidates + dq_run.candidates,
        ms: delta_run.ms + dkdv_run.ms + dq_run.ms,
        error,
        tolerance: 1e-2,
    }))
}

/// The largest error of sampled rows of dQ, dK and dV against f64, relative
/// to `1 + |want|`, given the inputs Q, K, V, dO and the device's forward
/// output and log-sum-exp.
fn check(
    shape: &Shape,
    host: &[Vec<f32>],
    (o, lse): (&[f16], &[f32]),
    [dq, dk, dv]: [&[f16]; 3],
) -> f64 {
    let (q, k, v, dout) = (&host[0], &host[1], &host[2], &host[3]);
    let (seq, d) = (shape.seq, shape.d);
    let scale = f64::from(shape.scale());
    let rows = shape.heads * seq;
    let delta = |i: usize| -> f64 {
        (0..d)
            .map(|x| f64::from(o[i * d + x].to_f32()) * f64::from(dout[i * d + x]))
            .sum()
    };
    let dot = |a: &[f32], b: &[f32]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| f64::from(x) * f64::from(y))
            .sum()
    };
    fn row(m: &[f32], d: usize, i: usize) -> &[f32] {
        &m[i * d..(i + 1) * d]
    }
    let rel = |got: f16, want: f64| (f64::from(got.to_f32()) - want).abs() / (1.0 + want.abs());
    super::sampled_rows(rows, |i| {
        let head = i / seq;
        // dQ of query row i: Σ_j dS[i, j] K[j] · scale.
        let s = scores(shape, q, k, i);
        let (lse_i, delta_i) = (f64::from(lse[i]), delta(i));
        let mut dq_want = vec![0.0; d];
        for (j, &sj) in s.iter().enumerate() {
            let kj = head * seq + j;
            let p = (sj - lse_i).exp();
            let ds = p * (dot(row(dout, d, i), row(v, d, kj)) - delta_i);
            for (x, w) in dq_want.iter_mut().enumerate() {
                *w += ds * f64::from(k[kj * d + x]) * scale;
            }
        }
        // dK and dV of key row i: sums over the queries of its head.
        let (mut dk_want, mut dv_want) = (vec![0.0; d], vec![0.0; d]);
        for qi in head * seq..(head + 1) * seq {
            if shape.causal && qi % seq < i % seq {
                continue;
            }
            let p = (dot(row(q, d, qi), row(k, d, i)) * scale - f64::from(lse[qi])).exp();
            let ds = p * (dot(row(dout, d, qi), row(v, d, i)) - delta(qi));
            for x in 0..d {
                dv_want[x] += p * f64::from(dout[qi * d + x]);
                dk_want[x] += ds * f64::from(q[qi * d + x]) * scale;
            }
        }
        (0..d)
            .map(|x| {
                rel(dq[i * d + x], dq_want[x])
                    .max(rel(dk[i * d + x], dk_want[x]))
                    .max(rel(dv[i * d + x], dv_want[x]))
            })
            .fold(0.0, f64::max)
    })
}
