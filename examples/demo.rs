//! The demo: every example kernel on the best device, checked against plain
//! Rust on random inputs whose shapes leave partial edge tiles, with a table
//! of kernel, device, shape, check and time.
//!
//! The kernels come from `tile::ir::samples` (built with the IR builder) until
//! the `#[tile_kernel]` front end writes them from Rust.

use std::time::{Duration, Instant};
use tile::ir::samples;
use tile::{launch, Device, Error, KernelSpec, LaunchArg};

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

/// A kernel spec for IR built at start-up. The text lives for the whole
/// program, as the front end's embedded IR does.
fn spec(
    name: &'static str,
    func: Result<tile::ir::Function, tile::ir::builder::BuildError>,
) -> KernelSpec {
    let ir = match func {
        Ok(f) => f.to_string(),
        Err(e) => format!("the sample failed to build: {e}"),
    };
    KernelSpec {
        name,
        specialization: "demo",
        ir: Box::leak(ir.into_boxed_str()),
        num_warps: 4,
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

fn vector_add(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let n = 100_003;
    let (xs, ys) = (rng.take(n), rng.take(n));
    let x = dev.tensor_from_slice(&xs, &[n])?;
    let y = dev.tensor_from_slice(&ys, &[n])?;
    let mut out = dev.zeros::<f32>(&[n])?;
    let kernel = spec("vector_add", samples::vector_add(1024));
    let grid = [n.div_ceil(1024) as u32, 1, 1];
    let time = timed(|| {
        launch(
            dev,
            &kernel,
            grid,
            &mut [(&x).into(), (&y).into(), (&mut out).into()],
        )
    })?;
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    Ok(Row {
        kernel: "vector_add",
        shape: format!("[{n}]"),
        max_error: max_error(&out.to_vec()?, &want),
        tolerance: 0.0,
        time,
    })
}

fn softmax(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (rows, cols) = (301, 200);
    let xs = rng.take(rows * cols);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let kernel = spec("softmax", samples::softmax(4, 256));
    let time = timed(|| {
        launch(
            dev,
            &kernel,
            [rows.div_ceil(4) as u32, 1, 1],
            &mut [(&x).into(), (&mut out).into()],
        )
    })?;
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

fn layernorm(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (rows, cols, eps) = (257, 300, 1e-5f32);
    let (xs, ws, bs) = (rng.take(rows * cols), rng.take(cols), rng.take(cols));
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let b = dev.tensor_from_slice(&bs, &[cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let kernel = spec("layernorm", samples::layernorm(2, 384));
    let mut args: [LaunchArg; 5] = [
        (&x).into(),
        (&w).into(),
        (&b).into(),
        (&mut out).into(),
        LaunchArg::scalar(eps),
    ];
    let time = timed(|| launch(dev, &kernel, [rows.div_ceil(2) as u32, 1, 1], &mut args))?;
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

fn matmul(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (m, n, k) = (130, 70, 90);
    let (a_host, b_host) = (rng.take(m * k), rng.take(k * n));
    let a = dev.tensor_from_slice(&a_host, &[m, k])?;
    let b = dev.tensor_from_slice(&b_host, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let kernel = spec("matmul", samples::matmul(32, 32, 16, tile::ir::DType::F32));
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32, 1];
    let time = timed(|| {
        launch(
            dev,
            &kernel,
            grid,
            &mut [(&a).into(), (&b).into(), (&mut c).into()],
        )
    })?;
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

fn transpose(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (m, n) = (333, 177);
    let xs = rng.take(m * n);
    let x = dev.tensor_from_slice(&xs, &[m, n])?;
    let mut out = dev.zeros::<f32>(&[n, m])?;
    let kernel = spec("transpose", samples::transpose(32, 32));
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32, 1];
    let time = timed(|| launch(dev, &kernel, grid, &mut [(&x).into(), (&mut out).into()]))?;
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
        vector_add(&dev, &mut rng)?,
        softmax(&dev, &mut rng)?,
        layernorm(&dev, &mut rng)?,
        matmul(&dev, &mut rng)?,
        transpose(&dev, &mut rng)?,
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
