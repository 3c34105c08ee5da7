//! The demo: every example kernel on the best device, checked against plain
//! Rust on random inputs whose shapes leave partial edge tiles, with a table
//! of kernel, device, shape, check and time.
//!
//! The kernels are written with `#[tile_kernel]`: `cargo build` lowers them to
//! tile IR, and the launcher runs them on the device.

use std::time::{Duration, Instant};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(configs(BLOCK = 1024))]
fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let (px, py) = (partition_view(x, [BLOCK]), partition_view(y, [BLOCK]));
    partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
}

#[tile_kernel(configs(BR = 4, BC = 256))]
fn softmax<const BR: usize, const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid = program_id(0);
    // Columns past the end read as -inf and add exp(-inf) = 0 to the sum.
    let t = partition_view(x, [BR, BC]).load_masked_with(Padding::NegInf, pid, 0);
    let e = (t - t.max_along_keepdim(1)).exp();
    partition_view(out, [BR, BC]).store_masked(e / e.sum_keepdim(1), pid, 0);
}

#[tile_kernel(configs(BR = 2, BC = 384))]
fn layernorm<const BR: usize, const BC: usize>(
    x: &Tensor<f32, 2>,
    w: &Tensor<f32>,
    bias: &Tensor<f32>,
    out: &mut Tensor<f32, 2>,
    eps: f32,
) {
    let pid = program_id(0);
    let cols = x.dim(1);
    let n = cols.cast::<f32>();
    let t = partition_view(x, [BR, BC]).load_masked(pid, 0);
    let mean = t.sum_keepdim(1) / n;
    // Padded columns must not add (0 - mean)^2 to the variance.
    let inside = iota::<i32>([BC]).broadcast_to([BR, BC]) < cols;
    let centered = select(inside, t - mean, zeros::<f32>([BR, BC]));
    let rstd = ((centered * centered).sum_keepdim(1) / n + eps).rsqrt();
    let wt = partition_view(w, [BC]).load_masked(0);
    let bt = partition_view(bias, [BC]).load_masked(0);
    partition_view(out, [BR, BC]).store_masked(fma(centered * rstd, wt, bt), pid, 0);
}

#[tile_kernel(configs(BM = 32, BN = 32, BK = 16))]
fn matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

#[tile_kernel(configs(BM = 32, BN = 32))]
fn transpose<const BM: usize, const BN: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let t = partition_view(x, [BM, BN]).load_masked(pid_m, pid_n);
    partition_view(out, [BN, BM]).store_masked(t.transpose(), pid_n, pid_m);
}

/// A deterministic pseudo-random f32 in [-2, 2) (xorshift), so every run
/// checks the same inputs.
struct Inputs(u64);

impl Inputs {
    fn take(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0
            })
            .collect()
    }
}

struct Row {
    kernel: &'static str,
    shape: String,
    max_error: f32,
    tolerance: f32,
    time: Duration,
}

fn timed(f: impl FnOnce() -> Result<(), Error>) -> Result<Duration, Error> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}

fn max_error(got: &[f32], want: &[f32]) -> f32 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / (1.0 + w.abs()))
        .fold(0.0, f32::max)
}

fn run_vector_add(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let n = 100_003;
    let (xs, ys) = (rng.take(n), rng.take(n));
    let x = dev.tensor_from_slice(&xs, &[n])?;
    let y = dev.tensor_from_slice(&ys, &[n])?;
    let mut out = dev.zeros::<f32>(&[n])?;
    let grid = [n.div_ceil(1024) as u32];
    let time = timed(|| vector_add::<1024>::launch(dev, grid, (&x, &y, &mut out)))?;
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    Ok(Row {
        kernel: "vector_add",
        shape: format!("[{n}]"),
        max_error: max_error(&out.to_vec()?, &want),
        tolerance: 0.0,
        time,
    })
}

fn run_softmax(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (rows, cols) = (301, 200);
    let xs = rng.take(rows * cols);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let grid = [rows.div_ceil(4) as u32];
    let time = timed(|| softmax::<4, 256>::launch(dev, grid, (&x, &mut out)))?;
    let mut want = Vec::with_capacity(rows * cols);
    for row in xs.chunks(cols) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = row.iter().map(|v| (v - max).exp()).collect();
        let sum: f32 = e.iter().sum();
        want.extend(e.iter().map(|v| v / sum));
    }
    Ok(Row {
        kernel: "softmax",
        shape: format!("[{rows}, {cols}]"),
        max_error: max_error(&out.to_vec()?, &want),
        tolerance: 1e-6,
        time,
    })
}

fn run_layernorm(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (rows, cols, eps) = (257, 300, 1e-5f32);
    let (xs, ws, bs) = (rng.take(rows * cols), rng.take(cols), rng.take(cols));
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let b = dev.tensor_from_slice(&bs, &[cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let grid = [rows.div_ceil(2) as u32];
    let time = timed(|| layernorm::<2, 384>::launch(dev, grid, (&x, &w, &b, &mut out, eps)))?;
    let mut want = Vec::with_capacity(rows * cols);
    for row in xs.chunks(cols) {
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / cols as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / cols as f64;
        let rstd = 1.0 / (var + f64::from(eps)).sqrt();
        want.extend(row.iter().enumerate().map(|(j, &v)| {
            ((f64::from(v) - mean) * rstd * f64::from(ws[j]) + f64::from(bs[j])) as f32
        }));
    }
    Ok(Row {
        kernel: "layernorm",
        shape: format!("[{rows}, {cols}]"),
        max_error: max_error(&out.to_vec()?, &want),
        tolerance: 1e-5,
        time,
    })
}

fn run_matmul(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (m, n, k) = (130, 70, 90);
    let (a_host, b_host) = (rng.take(m * k), rng.take(k * n));
    let a = dev.tensor_from_slice(&a_host, &[m, k])?;
    let b = dev.tensor_from_slice(&b_host, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32];
    let time = timed(|| matmul::<32, 32, 16>::launch(dev, grid, (&a, &b, &mut c)))?;
    let mut want = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).fold(0.0f32, |acc, kk| {
                a_host[i * k + kk].mul_add(b_host[kk * n + j], acc)
            });
        }
    }
    Ok(Row {
        kernel: "matmul",
        shape: format!("[{m}, {k}] x [{k}, {n}]"),
        max_error: max_error(&c.to_vec()?, &want),
        tolerance: 0.0,
        time,
    })
}

fn run_transpose(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (m, n) = (333, 177);
    let xs = rng.take(m * n);
    let x = dev.tensor_from_slice(&xs, &[m, n])?;
    let mut out = dev.zeros::<f32>(&[n, m])?;
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32];
    let time = timed(|| transpose::<32, 32>::launch(dev, grid, (&x, &mut out)))?;
    let mut want = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[j * m + i] = xs[i * n + j];
        }
    }
    Ok(Row {
        kernel: "transpose",
        shape: format!("[{m}, {n}]"),
        max_error: max_error(&out.to_vec()?, &want),
        tolerance: 0.0,
        time,
    })
}

fn main() -> Result<(), Error> {
    let dev = Device::best()?;
    let mut rng = Inputs(0x9e37_79b9_7f4a_7c15);
    let rows = [
        run_vector_add(&dev, &mut rng)?,
        run_softmax(&dev, &mut rng)?,
        run_layernorm(&dev, &mut rng)?,
        run_matmul(&dev, &mut rng)?,
        run_transpose(&dev, &mut rng)?,
    ];
    println!(
        "{:<11} {:<7} {:<22} {:<28} {:>10}",
        "kernel", "device", "shape", "check", "time"
    );
    let mut all_ok = true;
    for row in &rows {
        let ok = row.max_error <= row.tolerance;
        all_ok &= ok;
        let check = if row.tolerance == 0.0 {
            format!("{} (exact)", if ok { "ok" } else { "FAILED" })
        } else {
            format!(
                "{} (err {:.1e} <= {:.0e})",
                if ok { "ok" } else { "FAILED" },
                row.max_error,
                row.tolerance
            )
        };
        println!(
            "{:<11} {:<7} {:<22} {:<28} {:>8.1}ms",
            row.kernel,
            dev,
            row.shape,
            check,
            row.time.as_secs_f64() * 1e3
        );
    }
    println!("\nDevice {dev}: kernels run through the tile IR reference interpreter (no GPU back end yet).");
    if !all_ok {
        std::process::exit(1);
    }
    Ok(())
}
