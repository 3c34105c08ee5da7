//! Compiles the differential suite's generated programs for the GPU
//! targets into a directory (`common/generated_bundle.rs`) that the GPU
//! bundle carries and `generated_check` runs on a device; with
//! `--emulation`, also the emulation images the driver stand-ins run for
//! some of them (the bundle's smoke run). It links LLVM, so it runs where
//! `tile` builds (`scripts/gpu-bundle.sh`).
//!
//! ```text
//! generated_images DIR [--seeds A..B] [--targets sm_80,sm_90a,..] [--threads N]
//!                      [--emulation DIR2 [--emulation-seeds A..B]]
//! ```
//!
//! Defaults: seeds 0..1000, targets sm_80 and sm_90a, the machine's cores;
//! emulation images of seeds 0..6 for sm_80, sm_90a and gfx942 (the
//! stand-ins' devices) where those are among the targets. sm_80's PTX runs
//! on every NVIDIA GPU since Ampere (the driver compiles it for the device;
//! sm_86's to sm_90's PTX of these programs differ from it only in their
//! `.target` line), and sm_90a's is what a Hopper GPU loads (LLVM selects
//! some instructions differently for it; the generated products are too
//! small for `wgmma` and stay on `mma.sync`). The AMD targets
//! (`--targets sm_80,sm_90a,gfx942,gfx1100`) are not compiled by default:
//! LLVM's AMDGPU back end takes about 20 times as long as NVPTX on these
//! programs (a minute for some), and the GPU machines lent so far are
//! NVIDIA's. Compiling goes through the kernel cache (`TILE_CACHE`,
//! `TILE_CACHE_DIR`), so a rebuild by the same compiler is quick.

#[path = "common/generated_build.rs"]
mod generated_build;
#[path = "common/generated_bundle.rs"]
mod generated_bundle;

use std::path::PathBuf;
use std::process::ExitCode;
use tile_codegen::{Gfx, Sm, Target};

/// The targets compiled when `--targets` is not given.
const TARGETS: [Target; 2] = [Target::Nvptx(Sm::Sm80), Target::Nvptx(Sm::Sm90a)];

/// The targets of the stand-ins' devices: their defaults, and sm_90 and
/// sm_90a (a Hopper stand-in, `TILE_STANDIN_SM=90`, runs sm_80's to
/// sm_90a's PTX).
const STANDIN_TARGETS: [Target; 4] = [
    Target::Nvptx(Sm::Sm80),
    Target::Nvptx(Sm::Sm90),
    Target::Nvptx(Sm::Sm90a),
    Target::Amdgpu(Gfx::Gfx942),
];

struct Args {
    dir: PathBuf,
    seeds: (u64, u64),
    targets: Vec<Target>,
    threads: usize,
    emulation: Option<PathBuf>,
    emulation_seeds: (u64, u64),
}

fn range(flag: &str, v: &str) -> Result<(u64, u64), String> {
    v.split_once("..")
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .filter(|(a, b)| a < b)
        .ok_or(format!("{flag} {v}: expected A..B with A < B"))
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut args = Args {
        dir: PathBuf::new(),
        seeds: (0, 1000),
        targets: TARGETS.to_vec(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        emulation: None,
        emulation_seeds: (0, 6),
    };
    let mut dir = None;
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--seeds" => args.seeds = range(&flag, &value()?)?,
            "--targets" => {
                args.targets = tile_codegen::target::parse_targets(&value()?)
                    .map_err(|e| format!("--targets: {e}"))?;
            }
            "--threads" => {
                let v = value()?;
                args.threads = v.parse().map_err(|_| format!("--threads {v}: a number"))?;
            }
            "--emulation" => args.emulation = Some(PathBuf::from(value()?)),
            "--emulation-seeds" => args.emulation_seeds = range(&flag, &value()?)?,
            other if !other.starts_with("--") && dir.is_none() => dir = Some(PathBuf::from(other)),
            other => return Err(format!("an unknown argument {other:?}")),
        }
    }
    args.dir = dir.ok_or("the output directory is required")?;
    if let Some(t) = args.targets.iter().find(|t| !t.is_gpu()) {
        return Err(format!("--targets: {t} is not a GPU target"));
    }
    Ok(args)
}

fn run(args: &Args) -> Result<(), String> {
    let started = std::time::Instant::now();
    if args.dir.exists() {
        std::fs::remove_dir_all(&args.dir)
            .map_err(|e| format!("emptying {}: {e}", args.dir.display()))?;
    }
    let seeds: Vec<u64> = (args.seeds.0..args.seeds.1).collect();
    let cache = generated_build::open_cache();
    let (_, built) = generated_build::build(
        &args.dir,
        &seeds,
        &args.targets,
        (args.threads, cache.as_ref()),
    )?;
    let names: Vec<String> = args.targets.iter().map(Target::to_string).collect();
    println!(
        "{} images of seeds {}..{} for {} in {} ({:.1} MiB; {} seed-target pairs not compiled), {:.0} s",
        built.images,
        args.seeds.0,
        args.seeds.1,
        names.join(", "),
        args.dir.display(),
        built.bytes as f64 / 1048576.0,
        built.skipped,
        started.elapsed().as_secs_f64()
    );
    if let Some(emulation) = &args.emulation {
        let (a, b) = args.emulation_seeds;
        let sample: Vec<u64> = (a..b).filter(|s| seeds.contains(s)).collect();
        let targets: Vec<Target> = STANDIN_TARGETS
            .into_iter()
            .filter(|t| args.targets.contains(t))
            .collect();
        let written =
            generated_build::write_emulation_images(&args.dir, emulation, &sample, &targets)?;
        println!(
            "{written} emulation images of seeds {a}..{b} in {}",
            emulation.display()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("generated_images: {e}");
            ExitCode::from(2)
        }
    }
}
