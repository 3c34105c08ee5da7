//! The GPU benchmarks of the GPU bundle (`scripts/gpu-bundle.sh`): matmul
//! in f16, bf16 and FP8, attention forward and backward, softmax, layer
//! norm and vector add, each at the configuration the autotuner chooses on
//! the device (printed), timed with device events, with sampled outputs
//! checked against f64 and the rate as a fraction of the device's peak.
//!
//! `gpu_bench [--smoke] [--tsv FILE] [--only TEXT]`: `--smoke` runs tiny
//! shapes (the bundle's smoke run on the driver stand-ins); `--tsv` writes
//! one line per benchmark, which the bundle's `reference.py` reads to time
//! the same problems through PyTorch and Triton and print them side by
//! side; `--only` keeps the benchmarks whose label contains `TEXT` (e.g.
//! `matmul Bf16`, `attention fwd`). The exit status is 1 when a benchmark
//! failed or its check did.

#[path = "bench/mod.rs"]
mod bench;
#[allow(dead_code)] // the benchmarks take only its inputs
mod common;

use bench::attention::Shape;
use bench::matmul::Dtype;
use bench::{attention, attention_backward, matmul, memory, Bench};
use std::io::Write as _;
use std::process::ExitCode;
use tile::{Device, Error};

/// How a benchmark runs on a device: its result, or `None` when its kernel
/// is not built for the device.
type Runner = Box<dyn Fn(&Device) -> Result<Option<Bench>, Error>>;

/// One benchmark to run: its label for errors, and how.
type Run = (String, Runner);

/// The benchmarks, at full size or the smoke run's.
fn runs(full: bool) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    let (n, rows, cols) = if full {
        (1 << 28, 65536, 1024)
    } else {
        (4096, 8, 1024)
    };
    runs.push((
        "vector add".into(),
        Box::new(move |d| memory::vector_add_bench(d, n)),
    ));
    runs.push((
        "softmax".into(),
        Box::new(move |d| memory::softmax_bench(d, rows, cols)),
    ));
    runs.push((
        "layer norm".into(),
        Box::new(move |d| memory::layernorm_bench(d, rows, cols)),
    ));
    let sizes: &[usize] = if full { &[4096, 8192] } else { &[256] };
    for dtype in [Dtype::F16, Dtype::Bf16, Dtype::F8, Dtype::Tf32] {
        for &size in sizes {
            let label = format!("matmul {dtype:?} {size}");
            runs.push((label, Box::new(move |d| matmul::bench(d, dtype, size))));
        }
    }
    let (heads, seqs): (usize, &[usize]) = if full {
        (32, &[1024, 4096, 16384])
    } else {
        (2, &[128])
    };
    for backward in [false, true] {
        for &seq in seqs {
            for d in [64, 128] {
                for causal in [false, true] {
                    let shape = Shape {
                        heads,
                        seq,
                        d,
                        causal,
                    };
                    let label = format!(
                        "attention {} {shape:?}",
                        if backward { "bwd" } else { "fwd" }
                    );
                    let run: Runner = match backward {
                        false => Box::new(move |dev| attention::bench(dev, &shape)),
                        true => Box::new(move |dev| attention_backward::bench(dev, &shape)),
                    };
                    runs.push((label, run));
                }
            }
        }
    }
    runs
}

/// `m=4096, n=4096` from a case's parameters.
fn shape_text(params: &[(&str, usize)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The printed row of a benchmark.
fn row(dev: &Device, b: &Bench) -> String {
    let (rate, unit) = b.rate();
    let peak = b
        .of_peak(dev)
        .map_or("—".to_string(), |f| format!("{:.0}%", f * 100.0));
    let check = if b.passed() { "ok" } else { "FAILED" };
    format!(
        "{:<26} {:<36} {:>10.4} {:>9.1} {:<7} {:>6} {check} (error {:.1e}, at most {:.0e}) {} (of {})",
        b.case.name,
        shape_text(&b.case.params),
        b.ms,
        rate,
        unit,
        peak,
        b.error,
        b.tolerance,
        b.config,
        b.candidates,
    )
}

/// The TSV line `reference.py` reads.
fn tsv(dev: &Device, b: &Bench) -> String {
    let (rate, unit) = b.rate();
    let work = match b.case.problem {
        bench::Problem::Flops(f, _) => f,
        bench::Problem::Bytes(bytes) => bytes,
    };
    let params = b
        .case
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "{}\t{}\t{params}\t{}\t{:.6}\t{work}\t{unit}\t{rate:.3}\t{}\t{:.3e}\t{}",
        b.case.name,
        b.case.kind,
        b.config,
        b.ms,
        b.of_peak(dev).map_or(String::new(), |f| format!("{f:.4}")),
        b.error,
        if b.passed() { "ok" } else { "failed" }
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut smoke = false;
    let mut tsv_file = None;
    let mut only: Option<String> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match (arg.as_str(), it.clone().next()) {
            ("--smoke", _) => smoke = true,
            ("--tsv", Some(file)) => {
                tsv_file = Some(file.clone());
                it.next();
            }
            ("--only", Some(text)) => {
                only = Some(text.clone());
                it.next();
            }
            _ => {
                eprintln!("usage: gpu_bench [--smoke] [--tsv FILE] [--only TEXT]");
                return ExitCode::from(2);
            }
        }
    }
    let dev = match Device::best() {
        Ok(dev) => dev,
        Err(e) => {
            eprintln!("gpu_bench: no device: {e}");
            return ExitCode::FAILURE;
        }
    };
    match dev.info() {
        Some(info) => {
            let bandwidth = info
                .peak_bandwidth()
                .map_or("unknown".into(), |b| format!("{:.0} GB/s", b / 1e9));
            let flops = |p| {
                bench::peak_tflops(&dev, p).map_or("unknown".into(), |t| format!("{t:.0} TFLOP/s"))
            };
            println!(
                "device: {info}; peaks: memory {bandwidth}, f16/bf16 tensor {}, FP8 tensor {}, TF32 tensor {}",
                flops(bench::Peak::Half),
                flops(bench::Peak::Fp8),
                flops(bench::Peak::Tf32)
            );
        }
        None => println!("device: {dev}"),
    }
    let timing = match bench::full_size(&dev, smoke) {
        true => "median of 5 batches of up to 10 launches (about 50 ms each)",
        false => "one launch (a smoke run)",
    };
    println!(
        "each at the configuration the autotuner chose on the device; {timing}, timed with device events\n"
    );
    println!(
        "{:<26} {:<36} {:>10} {:>9} {:<7} {:>6} check, and the configuration (of candidates)",
        "benchmark", "shape", "ms", "rate", "unit", "peak"
    );
    // The TSV grows a line per benchmark, so a run stopped early keeps what it measured.
    let mut tsv_out = match tsv_file.as_deref().map(std::fs::File::create).transpose() {
        Ok(file) => file,
        Err(e) => {
            eprintln!("gpu_bench: cannot write the TSV file: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut failed = 0;
    let full = bench::full_size(&dev, smoke);
    bench::set_quick(!full);
    let chosen = runs(full).into_iter().filter(|(label, _)| {
        only.as_ref()
            .is_none_or(|text| label.contains(text.as_str()))
    });
    for (label, run) in chosen {
        match run(&dev) {
            Ok(Some(b)) => {
                println!("{}", row(&dev, &b));
                if let Some(file) = tsv_out.as_mut() {
                    if let Err(e) = writeln!(file, "{}", tsv(&dev, &b)) {
                        eprintln!("gpu_bench: cannot write the TSV file: {e}");
                        return ExitCode::FAILURE;
                    }
                }
                failed += usize::from(!b.passed());
            }
            Ok(None) => println!("{label}: not built for {dev}"),
            Err(e) => {
                println!("{label}: FAILED: {e}");
                failed += 1;
            }
        }
        let _ = std::io::stdout().flush();
    }
    println!("\n{failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
