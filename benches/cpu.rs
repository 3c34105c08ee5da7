//! CPU device throughput of the example kernels, side by side with plain
//! Rust loops, `ndarray`, the `matrixmultiply` crate (a tuned GEMM, on all
//! cores) and the machine's own copy bandwidth measured in the same run (the
//! roofline of the memory-bound kernels: copies and kernel runs alternate,
//! and each kernel's share of the copy is the median over the rounds).
//!
//! The CPU device runs each kernel's host code, compiled ahead of time by
//! `#[tile_kernel]` for the best instruction-set level this CPU supports.
//!
//! `cargo bench --bench cpu` (see docs/benchmarks.md). Every tile result is
//! checked against the plain-Rust result before it is timed.

#[allow(dead_code)] // each example's `run` is not used here
#[path = "../examples/kernels/attention.rs"]
mod attention;
#[allow(dead_code)] // the examples' table helpers are not used here
#[path = "../examples/common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../examples/kernels/layernorm.rs"]
mod layernorm;
#[allow(dead_code)]
#[path = "../examples/kernels/matmul.rs"]
mod matmul;
#[allow(dead_code)]
#[path = "../examples/kernels/softmax.rs"]
mod softmax;
#[allow(dead_code)]
#[path = "../examples/kernels/transpose.rs"]
mod transpose;
#[allow(dead_code)]
#[path = "../examples/kernels/vector_add.rs"]
mod vector_add;

#[path = "cpu/roofline.rs"]
mod roofline;

use common::Inputs;
use roofline::{against_copy, cores, gbps, CopyProbe};
use std::time::{Duration, Instant};
use tile::{tile_kernel, Device, Error, Tensor};

/// The median time of `runs` calls of `f`, after one warm-up call.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Rounds of copy and kernel for each memory-bound kernel.
const ROUNDS: usize = 9;

/// Asserts that two results agree to `tolerance` (relative to `1 + |want|`).
fn check(what: &str, got: &[f32], want: &[f32], tolerance: f32) {
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / (1.0 + w.abs()))
        .fold(0.0f32, f32::max);
    assert!(
        got.len() == want.len() && err <= tolerance,
        "{what}: error {err} above {tolerance}"
    );
}

struct Line {
    kernel: &'static str,
    shape: String,
    unit: &'static str,
    tile: f64,
    others: Vec<(&'static str, f64)>,
    /// The median ratio to the copy bandwidth (memory-bound kernels).
    of_copy: Option<f64>,
}

fn print(lines: &[Line], copy: f64) {
    if !copy.is_nan() {
        println!(
            "copy bandwidth (all {} cores, median of the runs alternating with the kernels): {copy:.1} GB/s\n",
            cores()
        );
    }
    println!(
        "{:<17} {:<18} {:>12}  {:<52} {:<}",
        "kernel", "shape", "tile (cpu)", "comparisons", "tile of roofline"
    );
    for l in lines {
        let others: Vec<String> = l
            .others
            .iter()
            .map(|(name, v)| format!("{name} {v:.1}"))
            .collect();
        let roof = l
            .of_copy
            .map_or("-".to_string(), |r| format!("{:.0}% of copy", 100.0 * r));
        println!(
            "{:<17} {:<18} {:>7.1} {:<5}  {:<52} {}",
            l.kernel,
            l.shape,
            l.tile,
            l.unit,
            others.join(", "),
            roof
        );
    }
}

fn bench_vector_add(dev: &Device, rng: &mut Inputs, copy: &mut CopyProbe) -> Result<Line, Error> {
    let n = 1 << 24;
    let (xs, ys) = (rng.take(n), rng.take(n));
    let (x, y) = (
        dev.tensor_from_slice(&xs, &[n])?,
        dev.tensor_from_slice(&ys, &[n])?,
    );
    let mut out = dev.zeros::<f32>(&[n])?;
    let grid = [n.div_ceil(1024) as u32];
    let bytes = 3 * 4 * n;
    let mut result = Ok(());
    let (tile, of_copy) = against_copy(copy, ROUNDS, bytes, || {
        result = vector_add::vector_add::<1024>::launch(dev, grid, (&x, &y, &mut out))
    });
    result?;
    let mut want = vec![0.0f32; n];
    let rust = median(5, || {
        for ((o, a), b) in want.iter_mut().zip(&xs).zip(&ys) {
            *o = a + b;
        }
    });
    check("vector_add", &out.to_vec()?, &want, 0.0);
    let (xa, ya) = (
        ndarray::Array1::from(xs.clone()),
        ndarray::Array1::from(ys.clone()),
    );
    let nd = median(5, || {
        std::hint::black_box(&xa + &ya);
    });
    Ok(Line {
        kernel: "vector_add",
        shape: format!("[{n}]"),
        unit: "GB/s",
        tile: gbps(bytes, tile),
        others: vec![("loop", gbps(bytes, rust)), ("ndarray", gbps(bytes, nd))],
        of_copy: Some(of_copy),
    })
}

/// The example's softmax with `#[tile_kernel(fast_math)]`: its `exp` from
/// the fast f32 library (within 1 ulp, docs/backends.md) where the
/// example's is the oracle's, bit for bit.
#[tile_kernel(configs(BR = 8, BC = 256), targets = "host", fast_math)]
fn softmax_fast<const BR: usize, const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid = program_id(0);
    let t = partition_view(x, [BR, BC]).load_masked_with(Padding::NegInf, pid, 0);
    let e = (t - t.max_along_keepdim(1)).exp();
    partition_view(out, [BR, BC]).store_masked(e / e.sum_keepdim(1), pid, 0);
}

/// A softmax kernel's launch over `rows` rows of `x` into `out`.
type SoftmaxLaunch = fn(&Device, usize, &Tensor<f32>, &mut Tensor<f32>) -> Result<(), Error>;

fn bench_softmax(dev: &Device, rng: &mut Inputs, copy: &mut CopyProbe) -> Result<Line, Error> {
    softmax_line("softmax", dev, rng, copy, |dev, rows, x, out| {
        softmax::softmax::<8, 256>::launch(dev, [rows.div_ceil(8) as u32], (x, out))
    })
}

fn bench_softmax_fast(dev: &Device, rng: &mut Inputs, copy: &mut CopyProbe) -> Result<Line, Error> {
    softmax_line("softmax fast_math", dev, rng, copy, |dev, rows, x, out| {
        softmax_fast::<8, 256>::launch(dev, [rows.div_ceil(8) as u32], (x, out))
    })
}

/// The line of the softmax kernel `launch`, against the loop and `ndarray`.
fn softmax_line(
    kernel: &'static str,
    dev: &Device,
    rng: &mut Inputs,
    copy: &mut CopyProbe,
    launch: SoftmaxLaunch,
) -> Result<Line, Error> {
    let (rows, cols) = (1 << 16, 256);
    let xs = rng.take(rows * cols);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let bytes = 2 * 4 * rows * cols;
    let mut result = Ok(());
    let (tile, of_copy) = against_copy(copy, ROUNDS, bytes, || {
        result = launch(dev, rows, &x, &mut out)
    });
    result?;
    let mut want = vec![0.0f32; rows * cols];
    let rust = median(5, || {
        for (o, row) in want.chunks_mut(cols).zip(xs.chunks(cols)) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for (o, &v) in o.iter_mut().zip(row) {
                *o = (v - max).exp();
                sum += *o;
            }
            o.iter_mut().for_each(|v| *v /= sum);
        }
    });
    check(kernel, &out.to_vec()?, &want, 1e-5);
    let xa = ndarray::Array2::from_shape_vec((rows, cols), xs.clone()).expect("shape");
    let nd = median(5, || {
        let max = xa.fold_axis(ndarray::Axis(1), f32::NEG_INFINITY, |a, &b| a.max(b));
        let e = (&xa - &max.insert_axis(ndarray::Axis(1))).mapv(f32::exp);
        let sum = e.sum_axis(ndarray::Axis(1)).insert_axis(ndarray::Axis(1));
        std::hint::black_box(e / sum);
    });
    Ok(Line {
        kernel,
        shape: format!("[{rows}, {cols}]"),
        unit: "GB/s",
        tile: gbps(bytes, tile),
        others: vec![("loop", gbps(bytes, rust)), ("ndarray", gbps(bytes, nd))],
        of_copy: Some(of_copy),
    })
}

fn bench_layernorm(dev: &Device, rng: &mut Inputs, copy: &mut CopyProbe) -> Result<Line, Error> {
    let (rows, cols, eps) = (1 << 15, 384, 1e-5f32);
    let (xs, ws, bs) = (rng.take(rows * cols), rng.take(cols), rng.take(cols));
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let (w, b) = (
        dev.tensor_from_slice(&ws, &[cols])?,
        dev.tensor_from_slice(&bs, &[cols])?,
    );
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let grid = [rows.div_ceil(8) as u32];
    let bytes = 2 * 4 * rows * cols;
    let mut result = Ok(());
    let (tile, of_copy) = against_copy(copy, ROUNDS, bytes, || {
        result = layernorm::layernorm::<8, 384>::launch(dev, grid, (&x, &w, &b, &mut out, eps))
    });
    result?;
    let mut want = vec![0.0f32; rows * cols];
    let rust = median(5, || {
        for (o, row) in want.chunks_mut(cols).zip(xs.chunks(cols)) {
            let mean = row.iter().sum::<f32>() / cols as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / cols as f32;
            let rstd = 1.0 / (var + eps).sqrt();
            for (j, (o, v)) in o.iter_mut().zip(row).enumerate() {
                *o = ((v - mean) * rstd).mul_add(ws[j], bs[j]);
            }
        }
    });
    check("layernorm", &out.to_vec()?, &want, 1e-4);
    Ok(Line {
        kernel: "layernorm",
        shape: format!("[{rows}, {cols}]"),
        unit: "GB/s",
        tile: gbps(bytes, tile),
        others: vec![("loop", gbps(bytes, rust))],
        of_copy: Some(of_copy),
    })
}

fn bench_transpose(dev: &Device, rng: &mut Inputs, copy: &mut CopyProbe) -> Result<Line, Error> {
    let (m, n) = (4096, 4096);
    let xs = rng.take(m * n);
    let x = dev.tensor_from_slice(&xs, &[m, n])?;
    let mut out = dev.zeros::<f32>(&[n, m])?;
    let grid = [n.div_ceil(32) as u32, m.div_ceil(32) as u32];
    let bytes = 2 * 4 * m * n;
    let mut result = Ok(());
    let (tile, of_copy) = against_copy(copy, ROUNDS, bytes, || {
        result = transpose::transpose::<32, 32>::launch(dev, grid, (&x, &mut out))
    });
    result?;
    let mut want = vec![0.0f32; m * n];
    let rust = median(5, || {
        for i in 0..m {
            for j in 0..n {
                want[j * m + i] = xs[i * n + j];
            }
        }
    });
    check("transpose", &out.to_vec()?, &want, 0.0);
    let xa = ndarray::Array2::from_shape_vec((m, n), xs.clone()).expect("shape");
    let nd = median(5, || {
        std::hint::black_box(xa.t().as_standard_layout().into_owned());
    });
    Ok(Line {
        kernel: "transpose",
        shape: format!("[{m}, {n}]"),
        unit: "GB/s",
        tile: gbps(bytes, tile),
        others: vec![("loop", gbps(bytes, rust)), ("ndarray", gbps(bytes, nd))],
        of_copy: Some(of_copy),
    })
}

fn bench_matmul(dev: &Device, rng: &mut Inputs) -> Result<Line, Error> {
    let n = 1024;
    let (a_vals, b_vals) = (rng.take(n * n), rng.take(n * n));
    let a = dev.tensor_from_slice(&a_vals, &[n, n])?;
    let b = dev.tensor_from_slice(&b_vals, &[n, n])?;
    let mut c = dev.zeros::<f32>(&[n, n])?;
    let grid = [n.div_ceil(64) as u32, n.div_ceil(64) as u32];
    let mut result = Ok(());
    let tile = median(3, || {
        result = matmul::matmul::<64, 64, 32>::launch(dev, grid, (&a, &b, &mut c))
    });
    result?;
    let mut want = vec![0.0f32; n * n];
    let gemm = median(3, || {
        // SAFETY: the pointers and strides describe the three n x n row-major
        // buffers above, which live across the call and do not overlap `want`.
        unsafe {
            matrixmultiply::sgemm(
                n,
                n,
                n,
                1.0,
                a_vals.as_ptr(),
                n as isize,
                1,
                b_vals.as_ptr(),
                n as isize,
                1,
                0.0,
                want.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    });
    // The two sum 1024 products in different orders (the interpreter's
    // sequential `k` against matrixmultiply's blocks): their roundings
    // differ by a few times 1e-4 of `1 + |c|` at worst over a million
    // outputs, where a wrong element is off by about 1.
    check("matmul", &c.to_vec()?, &want, 1e-3);
    let mut looped = vec![0.0f32; n * n];
    let rust = median(1, || {
        looped.fill(0.0);
        for i in 0..n {
            for k in 0..n {
                let aik = a_vals[i * n + k];
                let row = &b_vals[k * n..(k + 1) * n];
                for (o, &bv) in looped[i * n..(i + 1) * n].iter_mut().zip(row) {
                    *o = aik.mul_add(bv, *o);
                }
            }
        }
    });
    let (aa, ba) = (
        ndarray::Array2::from_shape_vec((n, n), a_vals.clone()).expect("shape"),
        ndarray::Array2::from_shape_vec((n, n), b_vals.clone()).expect("shape"),
    );
    let nd = median(3, || {
        std::hint::black_box(aa.dot(&ba));
    });
    let flops = 2 * n * n * n;
    let gflops = |t: Duration| flops as f64 / t.as_secs_f64() / 1e9;
    Ok(Line {
        kernel: "matmul f32",
        shape: format!("{n}^3"),
        unit: "GF/s",
        tile: gflops(tile),
        others: vec![
            ("matrixmultiply", gflops(gemm)),
            ("ndarray", gflops(nd)),
            ("loop", gflops(rust)),
        ],
        of_copy: None,
    })
}

fn bench_attention(dev: &Device, rng: &mut Inputs) -> Result<Line, Error> {
    let (seq, d) = (2048, 64);
    let scale = 0.125f32;
    let (qs, ks, vs) = (rng.take(seq * d), rng.take(seq * d), rng.take(seq * d));
    let q = dev.tensor_from_slice(&qs, &[seq, d])?;
    let k = dev.tensor_from_slice(&ks, &[seq, d])?;
    let v = dev.tensor_from_slice(&vs, &[seq, d])?;
    let mut out = dev.zeros::<f32>(&[seq, d])?;
    let grid = [seq.div_ceil(16) as u32];
    let mut result = Ok(());
    let tile = median(3, || {
        result =
            attention::attention::<16, 16, 64>::launch(dev, grid, (&q, &k, &v, &mut out, scale))
    });
    result?;
    let mut want = vec![0.0f32; seq * d];
    let rust = median(1, || {
        let mut scores = vec![0.0f32; seq];
        for i in 0..seq {
            let qi = &qs[i * d..(i + 1) * d];
            for (j, s) in scores.iter_mut().enumerate() {
                *s = qi
                    .iter()
                    .zip(&ks[j * d..(j + 1) * d])
                    .map(|(a, b)| a * b)
                    .sum::<f32>()
                    * scale;
            }
            let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            scores.iter_mut().for_each(|s| {
                *s = (*s - max).exp();
                sum += *s;
            });
            let o = &mut want[i * d..(i + 1) * d];
            o.fill(0.0);
            for (j, s) in scores.iter().enumerate() {
                for (o, vv) in o.iter_mut().zip(&vs[j * d..(j + 1) * d]) {
                    *o += s * vv;
                }
            }
            o.iter_mut().for_each(|v| *v /= sum);
        }
    });
    check("attention", &out.to_vec()?, &want, 1e-4);
    let flops = 4 * seq * seq * d;
    let gflops = |t: Duration| flops as f64 / t.as_secs_f64() / 1e9;
    Ok(Line {
        kernel: "attention",
        shape: format!("seq {seq}, d {d}"),
        unit: "GF/s",
        tile: gflops(tile),
        others: vec![("loop", gflops(rust))],
        of_copy: None,
    })
}

/// A kernel that does next to nothing: `out = x + 1` on 16 elements per
/// program, to time what a launch costs beside the kernel's work.
#[tile_kernel(configs(B = 16), targets = "host")]
fn tiny<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load(pid);
    partition_view(out, [B]).store(v + 1.0, pid);
}

/// The launch overhead of the CPU device: the tiny kernel launched on grids
/// of 1, the cores and 64 programs (what `launch` costs, checks and
/// argument packing included), beside what starting and joining a thread
/// per extra worker costs (what every launch paid on top when the CPU device
/// started its threads per launch).
fn bench_launch(dev: &Device) -> Result<(), Error> {
    let runs = 2001;
    println!("launch overhead of a tiny kernel (16 f32 per program), median of {runs} launches:");
    println!(
        "{:<10} {:>14} {:>34}",
        "programs", "launch (us)", "start + join of its helpers (us)"
    );
    for programs in [1, cores(), 64] {
        let n = 16 * programs;
        let x = dev.tensor_from_slice(&vec![1.0f32; n], &[n])?;
        let mut out = dev.zeros::<f32>(&[n])?;
        let mut result = Ok(());
        let launch = median(runs, || {
            result = tiny::<16>::launch(dev, [programs as u32], (&x, &mut out));
        });
        result?;
        check("tiny", &out.to_vec()?, &vec![2.0; n], 0.0);
        let helpers = cores().min(programs) - 1;
        let spawn = median(runs, || {
            std::thread::scope(|s| {
                for _ in 0..helpers {
                    s.spawn(|| std::hint::black_box(0));
                }
            })
        });
        let micros = |t: Duration| t.as_secs_f64() * 1e6;
        println!(
            "{programs:<10} {:>14.1} {:>34.1}",
            micros(launch),
            micros(spawn)
        );
    }
    println!();
    Ok(())
}

/// One benchmark: the kernel's name and the function that measures it.
type Bench = (
    &'static str,
    fn(&Device, &mut Inputs, &mut CopyProbe) -> Result<Line, Error>,
);

fn main() -> Result<(), Error> {
    // `cargo test --all-targets` runs bench binaries too, without `--bench`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("benchmarks run with `cargo bench --bench cpu`");
        return Ok(());
    }
    // `cargo bench --bench cpu -- softmax layernorm` runs only the kernels
    // whose names contain one of the words (`launch`: the launch overhead).
    let words: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let benches: [Bench; 7] = [
        ("vector_add", bench_vector_add),
        ("softmax", bench_softmax),
        ("softmax fast_math", bench_softmax_fast),
        ("layernorm", bench_layernorm),
        ("transpose", bench_transpose),
        ("matmul", |dev, rng, _| bench_matmul(dev, rng)),
        ("attention", |dev, rng, _| bench_attention(dev, rng)),
    ];
    let dev = Device::cpu();
    if words.is_empty() || words.iter().any(|w| "launch".contains(w.as_str())) {
        bench_launch(&dev)?;
    }
    let chosen: Vec<Bench> = benches
        .into_iter()
        .filter(|(name, _)| words.is_empty() || words.iter().any(|w| name.contains(w.as_str())))
        .collect();
    if chosen.is_empty() {
        return Ok(());
    }
    let mut rng = Inputs::default();
    let mut copy = CopyProbe::new(256 << 20);
    let mut lines = Vec::new();
    for (_, bench) in chosen {
        lines.push(bench(&dev, &mut rng, &mut copy)?);
    }
    print(&lines, copy.median());
    Ok(())
}
