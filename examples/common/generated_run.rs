//! Runs the generated programs' images of a directory (`generated_bundle.rs`)
//! on a GPU and judges each against the interpreter, as the differential
//! suite on the emulation target does (`tile_testgen::agreement`): each
//! seed's case generated again, its optimized tile IR checked against the
//! digest its images were compiled from, the image launched through the
//! runtime on the case's own buffers (`generated_args.rs`), the results
//! compared with the interpreter's within the suite's bounds. It needs no
//! LLVM.

use crate::generated_args::DeviceArgs;
use crate::generated_bundle::{digest, optimized_ir, CaseEntry, ImageEntry, Manifest};
use std::path::Path;
use tile::ir::interp::{self, Arg};
use tile::runtime::{GpuArch, Image, KernelSpec};
use tile::{Device, Error};
use tile_testgen::agreement::{agreement, f64_ulps, Agreement, Difference};
use tile_testgen::{generate, Case, GenConfig};

/// How one seed fared on one target.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every element has the interpreter's bits.
    Identical,
    /// Some float differs from the interpreter's, within the bounds.
    WithinBounds,
    /// The interpreter rejects the case and the kernel's own checks
    /// stopped it on the device too.
    RejectedByBoth,
    /// The builder could not compile the seed for the target (why).
    NotCompiled(String),
    /// Anything else: the whole message.
    Failed(String),
}

impl Outcome {
    /// The outcome's name in tables and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Identical => "identical",
            Outcome::WithinBounds => "within bounds",
            Outcome::RejectedByBoth => "rejected by both",
            Outcome::NotCompiled(_) => "not compiled",
            Outcome::Failed(_) => "failed",
        }
    }
}

/// One seed on one target.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The seed.
    pub seed: u64,
    /// The target (`sm_80`).
    pub target: String,
    /// How it fared.
    pub outcome: Outcome,
}

/// Splits `targets` into those `dev` runs (CUDA: every `sm_XY` not above
/// its compute capability, an `sm_XYa` only on its own; HIP: its own
/// `gfx`) and the others, each with why not.
pub fn runnable(dev: &Device, targets: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let arch = dev.info().map(|info| info.arch.clone());
    let mut here = Vec::new();
    let mut elsewhere = Vec::new();
    for target in targets {
        let runs = match &arch {
            Some(GpuArch::Cuda { major, minor }) => {
                let capability = major * 10 + minor;
                let number = target.strip_prefix("sm_");
                let specific = number.is_some_and(|n| n.ends_with('a'));
                number
                    .map(|n| n.trim_end_matches('a'))
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|n| n == capability || (n < capability && !specific))
            }
            Some(GpuArch::Hip(name)) => name.split(':').next() == Some(target.as_str()),
            None => false,
        };
        if runs {
            here.push(target.clone());
        } else {
            let device = arch
                .as_ref()
                .map_or("the CPU".to_string(), |a| a.to_string());
            elsewhere.push((target.clone(), format!("not for {device}")));
        }
    }
    (here, elsewhere)
}

/// A seed made ready on the host: its case, the IR its images run as, and
/// the interpreter's results (or why it rejects the case).
struct Prepared {
    seed: u64,
    case: Case,
    ir: Result<&'static str, String>,
    expected: Result<Vec<Arg>, String>,
}

/// Regenerates seed `seed`, checks its optimized IR against the
/// manifest's digest and runs the interpreter on it.
fn prepare(seed: u64, entry: &CaseEntry) -> Prepared {
    let case = generate(seed, &GenConfig::default());
    let ir = optimized_ir(&case.func).and_then(|ir| {
        if digest(ir.as_bytes()) == entry.ir_digest {
            // Leaked: a `KernelSpec` holds its IR for the process's life.
            Ok(&*Box::leak(ir.into_boxed_str()))
        } else {
            Err(format!(
                "its images were compiled from other tile IR (digest {}, here {}): the bundle was built by another version of tile-testgen or of the passes",
                entry.ir_digest,
                digest(ir.as_bytes())
            ))
        }
    });
    let mut expected = case.args.clone();
    let expected = interp::run(&case.func, case.grid, &mut expected)
        .map(|()| expected)
        .map_err(|e| e.to_string());
    Prepared {
        seed,
        case,
        ir,
        expected,
    }
}

/// Checks each of `seeds` on each of `targets` (which `dev` must run: see
/// [`runnable`]) with the images of `dir`, the interpreter running on
/// `threads` threads ahead of the launches; `on_record` sees each record
/// as it is made. Seeds missing from the manifest are an error.
pub fn check(
    dev: &Device,
    (dir, manifest): (&Path, &Manifest),
    seeds: &[u64],
    targets: &[String],
    threads: usize,
    on_record: &mut dyn FnMut(&Record),
) -> Result<Vec<Record>, String> {
    let entries: Vec<(u64, &CaseEntry)> = seeds
        .iter()
        .map(|&seed| {
            manifest
                .cases
                .get(&seed)
                .map(|entry| (seed, entry))
                .ok_or_else(|| format!("seed {seed} is not in {}", dir.display()))
        })
        .collect::<Result<_, _>>()?;
    let mut records = Vec::new();
    let threads = threads.max(1);
    for chunk in entries.chunks(4 * threads) {
        let prepared = prepare_all(chunk, threads);
        for (ready, &(_, entry)) in prepared.iter().zip(chunk) {
            for target in targets {
                let outcome = outcome(dev, dir, ready, entry, target);
                let record = Record {
                    seed: ready.seed,
                    target: target.clone(),
                    outcome,
                };
                on_record(&record);
                records.push(record);
            }
        }
    }
    Ok(records)
}

/// [`prepare`] for each of `chunk`, on `threads` threads, in order.
fn prepare_all(chunk: &[(u64, &CaseEntry)], threads: usize) -> Vec<Prepared> {
    let per_thread = chunk.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = chunk
            .chunks(per_thread)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|&(seed, entry)| prepare(seed, entry))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    })
}

/// How `ready`'s image for `target` fares on `dev`.
fn outcome(dev: &Device, dir: &Path, ready: &Prepared, entry: &CaseEntry, target: &str) -> Outcome {
    let seed = ready.seed;
    let case = &ready.case;
    let warps = if entry.warps == 1 { "warp" } else { "warps" };
    let at = format!(
        "seed {seed} on {target} ({} {warps}, {} stages, grid {:?})",
        entry.warps, entry.stages, case.grid
    );
    let Some(image) = entry.images.iter().find(|i| i.target == target) else {
        return match entry.skipped.iter().find(|(t, _)| t == target) {
            Some((_, why)) => Outcome::NotCompiled(why.clone()),
            None => Outcome::Failed(format!("{at}: the bundle has no image and no reason")),
        };
    };
    let ir = match &ready.ir {
        Ok(ir) => *ir,
        Err(why) => return Outcome::Failed(format!("{at}: {why}")),
    };
    let spec = match spec(dir, ready, entry, image, ir) {
        Ok(spec) => spec,
        Err(why) => return Outcome::Failed(format!("{at}: {why}")),
    };
    let launched = DeviceArgs::upload(dev, &case.args).and_then(|mut args| {
        let result = tile::runtime::launch(dev, &spec, case.grid, &mut args.launch_args());
        match result {
            Ok(()) => args.read_back().map(Ok),
            Err(e) => Ok(Err(e)),
        }
    });
    let launched = match launched {
        Ok(launched) => launched,
        Err(why) => return Outcome::Failed(format!("{at}: {why}")),
    };
    let reproduce = format!(
        "(the case: tile_testgen::generate({seed}, &GenConfig::default()); the kernel:\n{})",
        case.func
    );
    match (&ready.expected, launched) {
        (Ok(expected), Ok(actual)) => match agreement(&actual, expected, f64_ulps(&case.func)) {
            Agreement::Identical => Outcome::Identical,
            Agreement::WithinBounds => Outcome::WithinBounds,
            Agreement::Apart(difference) => Outcome::Failed(format!(
                "{at}: {}: {difference}\n{reproduce}",
                output_name(case, &difference)
            )),
        },
        (Err(_), Err(Error::DeviceCheck { .. })) => Outcome::RejectedByBoth,
        (Ok(_), Err(e)) => Outcome::Failed(format!(
            "{at}: the interpreter runs it, the device reports: {e}\n{reproduce}"
        )),
        (Err(why), Ok(_)) => Outcome::Failed(format!(
            "{at}: the interpreter rejects it ({why}), the device ran it to the end\n{reproduce}"
        )),
        (Err(why), Err(e)) => Outcome::Failed(format!(
            "{at}: the interpreter rejects it ({why}); the device failed otherwise than by the kernel's checks: {e}\n{reproduce}"
        )),
    }
}

/// The kernel parameter a difference is in, by name.
fn output_name(case: &Case, difference: &Difference) -> String {
    let arg = match difference {
        Difference::Element { arg, .. } | Difference::Shape { arg, .. } => *arg,
    };
    match case.func.params.get(arg) {
        Some(param) => format!("output `%{}`", param.name),
        None => format!("argument {arg}"),
    }
}

/// The kernel spec of `image` (read from `dir`) for `ready`'s seed: the
/// image, its checks and the IR it was compiled from, leaked (a spec
/// lives as long as the process).
fn spec(
    dir: &Path,
    ready: &Prepared,
    entry: &CaseEntry,
    image: &ImageEntry,
    ir: &'static str,
) -> Result<KernelSpec, String> {
    let bytes =
        std::fs::read(dir.join(&image.file)).map_err(|e| format!("reading {}: {e}", image.file))?;
    let checks: Vec<&'static str> = image
        .bounds_checks
        .iter()
        .map(|c| &*Box::leak(c.clone().into_boxed_str()))
        .collect();
    let images: &'static [Image] = Box::leak(Box::new([Image {
        kind: image.kind,
        target: Box::leak(image.target.clone().into_boxed_str()),
        bytes: Box::leak(bytes.into_boxed_slice()),
        shared_memory_bytes: image.shared_memory_bytes,
        block_threads: image.block_threads,
    }]));
    let name: &'static str = Box::leak(ready.case.func.name.clone().into_boxed_str());
    let label: &'static str = Box::leak(format!("seed={}", ready.seed).into_boxed_str());
    // SAFETY: the image is `driver::compile`'s compilation of this seed's
    // kernel after the pass pipeline, whose text `ir` is (checked by its
    // digest in `prepare`), with these checks, written by the builder
    // (`generated_build.rs`) of the same tile as this checker.
    Ok(unsafe {
        KernelSpec::new(
            name,
            label,
            ir,
            entry.warps,
            images,
            Box::leak(checks.into_boxed_slice()),
            &[],
        )
    })
}
