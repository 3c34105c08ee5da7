//! The GPU bundle's check of the differential suite's generated programs
//! on a device: the images `generated_images` compiled where `tile`
//! builds, launched on the GPU through the runtime and judged against the
//! interpreter within the suite's bounds (`tile_testgen::agreement`). It
//! needs no LLVM.
//!
//! ```text
//! generated_check --images DIR [--seeds A..B | --sample N] [--targets sm_80,sm_90a]
//!                 [--device best|cuda|hip] [--json FILE] [--threads N]
//! ```
//!
//! On a CUDA device it runs every NVIDIA image the device can run (sm_80
//! and sm_90a PTX on an sm_90 device), on a HIP device its own `gfx`'s. It
//! prints a table per target and the first failure's whole message, and
//! exits with 1 when a case failed, 2 when it could not check (no GPU, no
//! bundle, a bad option).

#[path = "common/generated_args.rs"]
mod generated_args;
// Writing a manifest is the builder's part.
#[allow(dead_code)]
#[path = "common/generated_bundle.rs"]
mod generated_bundle;
#[path = "common/generated_report.rs"]
mod generated_report;
#[path = "common/generated_run.rs"]
mod generated_run;

use generated_bundle::Manifest;
use generated_run::Outcome;
use std::path::PathBuf;
use std::process::ExitCode;
use tile::{Device, DeviceKind};

const USAGE: &str = "usage: generated_check --images DIR [--seeds A..B | --sample N] \
[--targets T,..] [--device best|cuda|hip] [--json FILE] [--threads N]";

/// The command line.
struct Args {
    images: PathBuf,
    seeds: Option<(u64, u64)>,
    sample: Option<usize>,
    targets: Option<Vec<String>>,
    device: String,
    json: Option<PathBuf>,
    threads: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        images: PathBuf::new(),
        seeds: None,
        sample: None,
        targets: None,
        device: "best".into(),
        json: None,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut images = None;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--images" => images = Some(PathBuf::from(value()?)),
            "--seeds" => {
                let v = value()?;
                let (a, b) = v
                    .split_once("..")
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                    .ok_or(format!("--seeds {v}: expected A..B"))?;
                args.seeds = Some((a, b));
            }
            "--sample" => {
                let v = value()?;
                args.sample = Some(v.parse().map_err(|_| format!("--sample {v}: a number"))?);
            }
            "--targets" => args.targets = Some(value()?.split(',').map(str::to_string).collect()),
            "--device" => args.device = value()?,
            "--json" => args.json = Some(PathBuf::from(value()?)),
            "--threads" => {
                let v = value()?;
                args.threads = v.parse().map_err(|_| format!("--threads {v}: a number"))?;
            }
            other => return Err(format!("an unknown option {other:?}")),
        }
    }
    args.images = images.ok_or("--images DIR is required")?;
    if args.seeds.is_some() && args.sample.is_some() {
        return Err("--seeds and --sample exclude each other".into());
    }
    Ok(args)
}

/// The seeds to check: those of `manifest` in the range, or `sample` of
/// them spread evenly, or all.
fn seeds(args: &Args, manifest: &Manifest) -> Result<Vec<u64>, String> {
    let all: Vec<u64> = manifest.cases.keys().copied().collect();
    match (args.seeds, args.sample) {
        (Some((a, b)), _) => {
            let missing: Vec<u64> = (a..b).filter(|s| !manifest.cases.contains_key(s)).collect();
            if let Some(first) = missing.first() {
                return Err(format!(
                    "{} of seeds {a}..{b} are not in the bundle (the first: {first})",
                    missing.len()
                ));
            }
            Ok((a..b).collect())
        }
        (None, Some(n)) if n > 0 && !all.is_empty() => {
            let n = n.min(all.len());
            Ok((0..n).map(|i| all[i * all.len() / n]).collect())
        }
        (None, Some(_)) => Err("--sample needs a positive count and seeds in the bundle".into()),
        (None, None) => Ok(all),
    }
}

fn open(device: &str) -> Result<Device, String> {
    let dev = match device {
        "best" => Device::best(),
        "cuda" => Device::cuda(0),
        "hip" => Device::hip(0),
        other => return Err(format!("--device {other}: best, cuda or hip")),
    }
    .map_err(|e| format!("no {device} device: {e}"))?;
    if dev.kind() == DeviceKind::Cpu {
        return Err("no CUDA or HIP device found: nothing to check".into());
    }
    Ok(dev)
}

fn run(args: &Args) -> Result<bool, String> {
    let manifest = Manifest::read(&args.images)?;
    let seeds = seeds(args, &manifest)?;
    let targets = match &args.targets {
        Some(wanted) => {
            if let Some(t) = wanted.iter().find(|t| !manifest.targets.contains(t)) {
                return Err(format!(
                    "--targets: the bundle has no {t} images (it has {})",
                    manifest.targets.join(", ")
                ));
            }
            wanted.clone()
        }
        None => manifest.targets.clone(),
    };
    let dev = open(&args.device)?;
    let info = dev.info().map_or(dev.to_string(), |i| i.to_string());
    let (here, not_here) = generated_run::runnable(&dev, &targets);
    println!(
        "generated programs: {} seeds on {info}, targets {}",
        seeds.len(),
        if here.is_empty() {
            "none".to_string()
        } else {
            here.join(", ")
        }
    );
    if here.is_empty() {
        return Err(format!(
            "the device runs none of the bundle's targets ({})",
            targets.join(", ")
        ));
    }
    let started = std::time::Instant::now();
    let mut done = 0usize;
    let mut failed = 0usize;
    let total = seeds.len() * here.len();
    let mut progress = |record: &generated_run::Record| {
        done += 1;
        if matches!(record.outcome, Outcome::Failed(_)) {
            failed += 1;
            if failed <= 20 {
                println!("  FAILED: seed {} on {}", record.seed, record.target);
            }
        }
        if done.is_multiple_of(250) || done == total {
            println!("  {done} of {total} checked, {failed} failed");
        }
    };
    let records = generated_run::check(
        &dev,
        (&args.images, &manifest),
        &seeds,
        &here,
        args.threads,
        &mut progress,
    )?;
    println!(
        "{}",
        generated_report::table(&records, &here, &not_here).trim_end()
    );
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        let json = generated_report::json(&info, &records, &here, &not_here);
        std::fs::write(path, json).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(records
        .iter()
        .all(|r| !matches!(r.outcome, Outcome::Failed(_))))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("generated_check: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("generated_check: {e}");
            ExitCode::from(2)
        }
    }
}
