//! The GPU benchmarks' shared part: a benchmark case, the autotuner's
//! choice among a kernel's specializations, device-event timing of the
//! chosen one, and the device's peak rates for the fraction of peak.

pub mod attention;
pub mod attention_backward;
pub mod matmul;
pub mod memory;

pub use crate::common::Inputs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use tile::autotune::{Autotuner, Candidate, Progress};
use tile::{launch_on, Device, DeviceKind, Error, LaunchArg};

/// The benchmarks' kernels, each with all its specializations: for the
/// driver stand-ins' emulation images (`examples/standin_images.rs`).
#[allow(dead_code)] // `gpu_bench` itself does not need the list
pub fn kernels() -> Vec<&'static tile::meta::KernelInfo> {
    vec![
        &memory::vector_add::<1024>::INFO,
        &memory::softmax::<1, 1024>::INFO,
        &memory::layernorm::<1, 1024>::INFO,
        &matmul::matmul_f16::<128, 128, 64, 8>::INFO,
        &matmul::matmul_f16_tma::<128, 128, 64, 8>::INFO,
        &matmul::matmul_bf16::<128, 128, 64, 8>::INFO,
        &matmul::matmul_bf16_tma::<128, 128, 64, 8>::INFO,
        &matmul::matmul_f8::<128, 128, 128, 8>::INFO,
        &matmul::matmul_f8_tma::<128, 128, 128, 8>::INFO,
        &matmul::matmul_tf32::<128, 128, 32, 8>::INFO,
        &matmul::matmul_tf32_tma::<128, 128, 32, 8>::INFO,
        &attention::attention_fwd::<64, 32, 64>::INFO,
        &attention_backward::attention_delta::<64, 64>::INFO,
        &attention_backward::attention_dkdv::<32, 64, 64>::INFO,
        &attention_backward::attention_dq::<64, 32, 64>::INFO,
    ]
}

/// What one launch does: floating-point operations or bytes moved.
#[derive(Clone, Copy, Debug)]
pub enum Problem {
    /// Floating-point operations, rated in TFLOP/s against the tensor-core
    /// peak of the dtype.
    Flops(f64, Peak),
    /// Bytes read and written, rated in GB/s against the memory's peak.
    Bytes(f64),
}

/// Which tensor-core peak a compute-bound case is rated against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peak {
    /// f16 and bf16 inputs, f32 accumulation.
    Half,
    /// FP8 inputs, f32 accumulation.
    Fp8,
    /// f32 inputs read as TF32, f32 accumulation.
    Tf32,
}

/// One benchmark case: its name in the table, the kind and parameters the
/// reference script (`reference.py`) runs the same problem by, and its work.
pub struct Case {
    /// The row's name, e.g. `matmul f16`.
    pub name: String,
    /// The problem's kind for `reference.py`: `matmul`, `attention`, ...
    pub kind: &'static str,
    /// Its sizes and switches, e.g. `m=4096`.
    pub params: Vec<(&'static str, usize)>,
    /// The work of one launch.
    pub problem: Problem,
}

/// A benchmark's result.
pub struct Bench {
    /// The case.
    pub case: Case,
    /// The kernel and specialization the autotuner chose.
    pub config: String,
    /// How many candidates it chose among.
    pub candidates: usize,
    /// The median time of a launch in milliseconds, from device events.
    pub ms: f64,
    /// The largest error of the sampled outputs against an f64 reference
    /// (relative to `1 + |want|` unless the case says otherwise).
    pub error: f64,
    /// The largest error accepted.
    pub tolerance: f64,
}

/// At most this many launches per timed batch, and batches (the median is
/// reported); one of one in a quick run ([`set_quick`]).
const BATCH: usize = 10;
const BATCHES: usize = 5;

/// Whether runs time one launch only (the smoke run, on the stand-ins).
static QUICK: AtomicBool = AtomicBool::new(false);

/// Times one launch per benchmark from now on instead of 5 batches of 10.
pub fn set_quick(quick: bool) {
    QUICK.store(quick, Ordering::Relaxed);
}

impl Bench {
    /// Lets the autotuner choose among `candidates` for this problem (each
    /// timed on a fresh copy of `args`, their outputs compared), launches
    /// the choice once more, then times batches of it with device events on
    /// a stream of its own; the error is for the caller to fill in. `None`
    /// when no candidate is built for the device.
    pub fn run(
        dev: &Device,
        case: Case,
        candidates: &[Candidate],
        mut args: Vec<LaunchArg<'_>>,
    ) -> Result<Option<Bench>, Error> {
        // The specializations built for this device (the TMA and FP8 ones
        // are Hopper's only).
        let candidates: Vec<Candidate> = candidates
            .iter()
            .filter(|c| dev.kernel_code(&c.spec).is_ok())
            .copied()
            .collect();
        if candidates.is_empty() {
            return Ok(None);
        }
        let dir = tuner_dir();
        let tuner = Autotuner::in_dir(&dir)
            .with_tolerance(2e-2)
            .with_progress(print_timed);
        let key: Vec<i64> = case.params.iter().map(|&(_, v)| v as i64).collect();
        let chosen = tuner.launch(dev, &key, &candidates, &mut args);
        let _ = std::fs::remove_dir_all(&dir);
        let chosen = &candidates[chosen?];
        let stream = dev.stream()?;
        launch_on(&stream, &chosen.spec, chosen.grid, &mut args)?;
        stream.synchronize()?;
        let (batch, batches) = match QUICK.load(Ordering::Relaxed) {
            true => (1, 1),
            false => {
                // Batches of about 50 ms, at most `BATCH` launches: a slow
                // kernel is timed one launch at a time.
                let start = stream.record()?;
                launch_on(&stream, &chosen.spec, chosen.grid, &mut args)?;
                let end = stream.record()?;
                end.synchronize()?;
                let once = f64::from(end.elapsed_ms(&start)?);
                (
                    (50.0 / once.max(1e-3)).clamp(1.0, BATCH as f64) as usize,
                    BATCHES,
                )
            }
        };
        let mut times = Vec::with_capacity(batches);
        for _ in 0..batches {
            let start = stream.record()?;
            for _ in 0..batch {
                launch_on(&stream, &chosen.spec, chosen.grid, &mut args)?;
            }
            let end = stream.record()?;
            end.synchronize()?;
            stream.synchronize()?;
            times.push(f64::from(end.elapsed_ms(&start)?) / batch as f64);
        }
        times.sort_by(f64::total_cmp);
        Ok(Some(Bench {
            case,
            config: format!("{} {}", chosen.spec.name(), chosen.spec.specialization()),
            candidates: candidates.len(),
            ms: times[batches / 2],
            error: f64::NAN,
            tolerance: 0.0,
        }))
    }

    /// The rate: TFLOP/s or GB/s.
    pub fn rate(&self) -> (f64, &'static str) {
        match self.case.problem {
            Problem::Flops(flops, _) => (flops / self.ms / 1e9, "TFLOP/s"),
            Problem::Bytes(bytes) => (bytes / self.ms / 1e6, "GB/s"),
        }
    }

    /// The rate as a fraction of the device's peak, where it is known.
    pub fn of_peak(&self, dev: &Device) -> Option<f64> {
        let (rate, _) = self.rate();
        let peak = match self.case.problem {
            Problem::Flops(_, peak) => peak_tflops(dev, peak)?,
            Problem::Bytes(_) => dev.info()?.peak_bandwidth()? / 1e9,
        };
        Some(rate / peak)
    }

    /// Whether the sampled outputs are within the tolerance.
    pub fn passed(&self) -> bool {
        self.error <= self.tolerance
    }
}

/// A fresh directory for the autotuner's choices, so every run tunes.
fn tuner_dir() -> PathBuf {
    std::env::temp_dir().join(format!("tile-gpu-bench-{}", std::process::id()))
}

/// The dense tensor-core peak in TFLOP/s: multiprocessors × clock ×
/// operations per clock per multiprocessor, for the architectures whose
/// rate is published (A100, H100/H200, MI300); `None` elsewhere.
pub fn peak_tflops(dev: &Device, peak: Peak) -> Option<f64> {
    let info = dev.info()?;
    let arch = info.arch.to_string();
    let per_clock = match (arch.as_str(), peak) {
        ("sm_80", Peak::Half) => 2048.0,
        ("sm_90", Peak::Half) => 4096.0,
        ("sm_90", Peak::Fp8) => 8192.0,
        ("sm_80", Peak::Tf32) => 1024.0,
        ("sm_90", Peak::Tf32) => 2048.0,
        ("gfx942", Peak::Half) => 2048.0,
        ("gfx942", Peak::Fp8) => 4096.0,
        _ => return None,
    };
    let clock = f64::from(info.clock_khz) * 1e3;
    (clock > 0.0).then(|| f64::from(info.multiprocessors) * clock * per_clock / 1e12)
}

/// The largest of `error(row)` over a sample of rows spread over `rows`
/// (the first, the last and up to 30 between).
pub fn sampled_rows(rows: usize, error: impl Fn(usize) -> f64) -> f64 {
    let step = (rows / 31).max(1);
    (0..rows)
        .step_by(step)
        .chain([rows - 1])
        .map(error)
        .fold(0.0, f64::max)
}

/// The autotuner's report as the benchmarks print it: each candidate's
/// median launch, so that the tables' choices can be read against the rest.
fn print_timed(progress: &Progress<'_>) {
    if let Progress::Timed {
        kernel,
        key,
        label,
        time,
    } = progress
    {
        eprintln!("  candidate {kernel} [{key}] {label}: {time:?}");
    }
}

/// Whether the benchmarks run at their full sizes: on a GPU, not on the
/// CPU device or the driver stand-ins' smoke run.
pub fn full_size(dev: &Device, smoke: bool) -> bool {
    !smoke && dev.kind() != DeviceKind::Cpu
}
