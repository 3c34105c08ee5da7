//! Atomics: a histogram, a split-K matmul and an embedding's lookup and
//! its backward scatter-add. Programs that update one element at once do so
//! with atomic adds; their order is the device's.
//!
//! The float inputs of the matmul and the embedding gradient lie on a grid
//! of 1/16 in [-2, 2), so every partial sum is exact in `f32` and the
//! results do not depend on the order of the adds: the checks are exact.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

/// Counts `x`'s values into `bins` equal bins over `[lo, hi)`; values
/// outside are not counted.
#[tile_kernel(configs(B = 256))]
pub fn histogram<const B: usize>(x: &Tensor<f32>, hist: &mut Tensor<i32>, lo: f32, hi: f32) {
    let pid = program_id(0);
    let values = partition_view(x, [B]).load_masked(pid);
    let bins = hist.dim(0);
    let bin = ((values - lo) * (bins.cast::<f32>() / (hi - lo)))
        .floor()
        .cast::<i32>();
    let inside = (iota::<i32>([B]) + pid * B < x.dim(0)) & (bin >= 0) & (bin < bins);
    atomic_add(hist, [bin], 1, inside, Ordering::Relaxed);
}

/// `c += a · b`, with the `K` axis split across `program_id(2)`: each
/// program sums its share of the `BK`-wide slabs and adds its block to `c`
/// atomically (`c` starts at zero).
#[tile_kernel(configs(BM = 32, BN = 32, BK = 16, SPLIT = 4))]
pub fn matmul_split_k<const BM: usize, const BN: usize, const BK: usize, const SPLIT: usize>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n, pid_k) = (program_id(0), program_id(1), program_id(2));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let slabs = cdiv(a.dim(1), BK);
    let share = cdiv(slabs, SPLIT);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in pid_k * share..min(pid_k * share + share, slabs) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).atomic_add_masked(acc, pid_m, pid_n);
}

/// `out[t] = weight[ids[t]]`: one token a program (of one warp), `D`
/// columns at a time.
#[tile_kernel(configs(D = 32), num_warps = 1)]
pub fn embedding<const D: usize>(
    ids: &Tensor<i32>,
    weight: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let t = program_id(0);
    let row = gather(ids, [t]);
    let (vw, vo) = (partition_view(weight, [1, D]), partition_view(out, [1, D]));
    for j in 0..cdiv(weight.dim(1), D) {
        vo.store_masked(vw.load_masked(row, j), t, j);
    }
}

/// The backward of [`embedding`]: `dweight[ids[t]] += dout[t]`, with
/// atomic adds, since tokens repeat.
#[tile_kernel(configs(D = 32), num_warps = 1)]
pub fn embedding_backward<const D: usize>(
    ids: &Tensor<i32>,
    dout: &Tensor<f32, 2>,
    dweight: &mut Tensor<f32, 2>,
) {
    let t = program_id(0);
    let row = gather(ids, [t]);
    let (vd, vw) = (
        partition_view(dout, [1, D]),
        partition_view(dweight, [1, D]),
    );
    for j in 0..cdiv(dout.dim(1), D) {
        vw.atomic_add_masked(vd.load_masked(t, j), row, j);
    }
}

/// `n` inputs on a grid of 1/16 in [-2, 2).
fn on_grid(rng: &mut Inputs, n: usize) -> Vec<f32> {
    rng.take(n)
        .into_iter()
        .map(|v| (v * 16.0).floor() / 16.0)
        .collect()
}

/// Exactly what a row of the table checks: `got` against `want`.
fn row(
    kernel: &str,
    code: tile::KernelCode,
    shape: String,
    got: &[f32],
    want: &[f64],
    time: std::time::Duration,
) -> Row {
    Row {
        kernel: kernel.into(),
        code,
        shape,
        max_error: max_error(got, want),
        tolerance: 0.0,
        time,
    }
}

/// The histogram of 100,003 values into 37 bins.
fn run_histogram(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (n, bins, lo, hi) = (100_003, 37, -1.5f32, 1.75f32);
    let xs = rng.take(n);
    let x = dev.tensor_from_slice(&xs, &[n])?;
    let mut hist = dev.zeros::<i32>(&[bins])?;
    let grid = [n.div_ceil(256) as u32];
    let time = timed(|| {
        hist = dev.zeros::<i32>(&[bins])?;
        histogram::<256>::launch(dev, grid, (&x, &mut hist, lo, hi))
    })?;
    let mut want = vec![0.0f64; bins];
    for &v in &xs {
        let bin = ((v - lo) * (bins as f32 / (hi - lo))).floor();
        if (0.0..bins as f32).contains(&bin) {
            want[bin as usize] += 1.0;
        }
    }
    let got: Vec<f32> = hist.to_vec()?.iter().map(|&c| c as f32).collect();
    let code = dev.kernel_code(&histogram::<256>::kernel_spec())?;
    Ok(row(
        "histogram",
        code,
        format!("[{n}] -> [{bins}]"),
        &got,
        &want,
        time,
    ))
}

/// A 70×45×300 split-K matmul, 4 ways.
fn run_split_k(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (m, n, k) = (70, 45, 300);
    let (a_host, b_host) = (on_grid(rng, m * k), on_grid(rng, k * n));
    let a = dev.tensor_from_slice(&a_host, &[m, k])?;
    let b = dev.tensor_from_slice(&b_host, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32, 4];
    let time = timed(|| {
        c = dev.zeros::<f32>(&[m, n])?;
        matmul_split_k::<32, 32, 16, 4>::launch(dev, grid, (&a, &b, &mut c))
    })?;
    let want: Vec<f64> = (0..m * n)
        .map(|i| {
            let (r, col) = (i / n, i % n);
            (0..k)
                .map(|j| f64::from(a_host[r * k + j]) * f64::from(b_host[j * n + col]))
                .sum()
        })
        .collect();
    let code = dev.kernel_code(&matmul_split_k::<32, 32, 16, 4>::kernel_spec())?;
    Ok(row(
        "matmul split-K x4",
        code,
        format!("[{m}, {k}] x [{k}, {n}]"),
        &c.to_vec()?,
        &want,
        time,
    ))
}

/// An embedding of 50 rows of 80 columns: 300 tokens looked up, and the
/// gradient of 300 rows of `dout` scattered back.
fn run_embedding(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (vocab, width, tokens) = (50, 80, 300);
    let weights = rng.take(vocab * width);
    let ids: Vec<i32> = rng
        .take(tokens)
        .iter()
        .map(|&v| ((v + 2.0) * 12.5) as i32 % vocab as i32)
        .collect();
    let (w, id) = (
        dev.tensor_from_slice(&weights, &[vocab, width])?,
        dev.tensor_from_slice(&ids, &[tokens])?,
    );
    let mut out = dev.zeros::<f32>(&[tokens, width])?;
    let grid = [tokens as u32];
    let time = timed(|| embedding::<32>::launch(dev, grid, (&id, &w, &mut out)))?;
    let want: Vec<f64> = (0..tokens * width)
        .map(|i| f64::from(weights[ids[i / width] as usize * width + i % width]))
        .collect();
    let code = dev.kernel_code(&embedding::<32>::kernel_spec())?;
    let shape = format!("[{tokens}] of [{vocab}, {width}]");
    let forward = row(
        "embedding",
        code,
        shape.clone(),
        &out.to_vec()?,
        &want,
        time,
    );

    let grads = on_grid(rng, tokens * width);
    let dout = dev.tensor_from_slice(&grads, &[tokens, width])?;
    let mut dw = dev.zeros::<f32>(&[vocab, width])?;
    let time = timed(|| {
        dw = dev.zeros::<f32>(&[vocab, width])?;
        embedding_backward::<32>::launch(dev, grid, (&id, &dout, &mut dw))
    })?;
    let mut want = vec![0.0f64; vocab * width];
    for (t, &r) in ids.iter().enumerate() {
        for j in 0..width {
            want[r as usize * width + j] += f64::from(grads[t * width + j]);
        }
    }
    let code = dev.kernel_code(&embedding_backward::<32>::kernel_spec())?;
    let backward = row(
        "embedding backward",
        code,
        shape,
        &dw.to_vec()?,
        &want,
        time,
    );
    Ok(vec![forward, backward])
}

/// Runs the histogram, the split-K matmul and the embedding.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let mut rows = vec![run_histogram(dev, rng)?, run_split_k(dev, rng)?];
    rows.extend(run_embedding(dev, rng)?);
    Ok(rows)
}
