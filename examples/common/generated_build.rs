//! Writes the directory of generated programs' device images
//! (`generated_bundle.rs`): each seed's kernel through
//! `tile_codegen::driver::compile` for each target, as `#[tile_kernel]`
//! compiles a kernel, with the suite's warps and stages; and, for the
//! driver stand-ins, the emulation images of some of them. It links LLVM,
//! so it runs where `tile` builds (`examples/generated_images.rs`,
//! `tests/generated_bundle.rs`).

use crate::generated_bundle::{digest, optimized_ir, CaseEntry, ImageEntry, Manifest};
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tile::ir::Function;
use tile::runtime::ImageKind;
use tile_codegen::cache::Cache;
use tile_codegen::driver::{self, Emulated, Options};
use tile_codegen::{CodegenOptions, Target};
use tile_testgen::agreement::warps_and_stages;
use tile_testgen::{generate, GenConfig};

/// The label of seed `seed`'s one specialization.
pub fn label(seed: u64) -> String {
    format!("seed={seed}")
}

/// What the builder did.
#[derive(Debug, Default)]
pub struct Built {
    /// Images written.
    pub images: usize,
    /// `(seed, target)` pairs without one, with why.
    pub skipped: usize,
    /// Bytes of the images.
    pub bytes: u64,
}

/// The kernel cache the builder compiles through, as `#[tile_kernel]`
/// does (`TILE_CACHE=off` turns it off, `TILE_CACHE_DIR` moves it from
/// `tile-cache` in the target directory): a rebuild of the same seeds by
/// the same compiler then costs no LLVM work. `None`, with the reason on
/// standard error, when it is off or cannot be used.
pub fn open_cache() -> Option<Cache> {
    if std::env::var("TILE_CACHE").is_ok_and(|v| v == "off") {
        return None;
    }
    let dir = match std::env::var_os("TILE_CACHE_DIR") {
        Some(dir) => Ok(std::path::PathBuf::from(dir)),
        None => Cache::default_dir(),
    };
    match dir.and_then(|dir| Cache::open(&dir, 2 << 30)) {
        Ok(cache) => Some(cache),
        Err(e) => {
            eprintln!("generated images: compiling without the kernel cache: {e}");
            None
        }
    }
}

/// Compiles each of `seeds` for each of `targets` on `threads` threads
/// (through `cache`, if any) and writes the images and the manifest into
/// `dir` (made if missing).
/// A seed that does not compile for a target is recorded with the
/// compiler's reason (the checker counts it as not compiled); any other
/// failure stops the build.
pub fn build(
    dir: &Path,
    seeds: &[u64],
    targets: &[Target],
    (threads, cache): (usize, Option<&Cache>),
) -> Result<(Manifest, Built), String> {
    for target in targets {
        let sub = dir.join(target.to_string());
        std::fs::create_dir_all(&sub).map_err(|e| format!("creating {}: {e}", sub.display()))?;
    }
    let next = AtomicU64::new(0);
    let entries: Mutex<Vec<(u64, CaseEntry)>> = Mutex::new(Vec::new());
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(&seed) = seeds.get(i) else { break };
                if first_error.lock().map_or(true, |e| e.is_some()) {
                    break;
                }
                match build_seed(dir, seed, targets, cache) {
                    Ok(entry) => entries.lock().expect("entries").push((seed, entry)),
                    Err(e) => {
                        first_error.lock().expect("error").get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = first_error
        .into_inner()
        .map_err(|_| "a builder thread panicked")?
    {
        return Err(e);
    }
    let mut manifest = Manifest {
        targets: targets.iter().map(Target::to_string).collect(),
        cases: Default::default(),
    };
    let mut built = Built::default();
    for (seed, entry) in entries
        .into_inner()
        .map_err(|_| "a builder thread panicked")?
    {
        built.images += entry.images.len();
        built.skipped += entry.skipped.len();
        for image in &entry.images {
            built.bytes += std::fs::metadata(dir.join(&image.file)).map_or(0, |m| m.len());
        }
        manifest.cases.insert(seed, entry);
    }
    let path = dir.join(crate::generated_bundle::MANIFEST);
    std::fs::write(&path, manifest.to_text())
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok((manifest, built))
}

/// The pipeline's options for `target` with `warps` and `stages`, one
/// thread (the builder runs seeds in parallel instead), through `cache`.
fn options(target: Target, (warps, stages): (u32, u32), cache: Option<&Cache>) -> Options {
    Options {
        targets: vec![target],
        num_warps: warps,
        codegen: CodegenOptions::default(),
        num_stages: Some(stages),
        dump_dir: None,
        cache: cache.cloned(),
        max_threads: NonZeroUsize::new(1),
        target_warps: Vec::new(),
        target_stages: Vec::new(),
    }
}

/// Compiles seed `seed` for each of `targets` into `dir`.
fn build_seed(
    dir: &Path,
    seed: u64,
    targets: &[Target],
    cache: Option<&Cache>,
) -> Result<CaseEntry, String> {
    let case = generate(seed, &GenConfig::default());
    let (warps, stages) = warps_and_stages(seed);
    let ir = optimized_ir(&case.func).map_err(|e| format!("seed {seed}: {e}"))?;
    let mut entry = CaseEntry {
        warps,
        stages,
        ir_digest: digest(ir.as_bytes()),
        images: Vec::new(),
        skipped: Vec::new(),
    };
    for &target in targets {
        let mut func = case.func.clone();
        let compiled = match driver::compile(
            &mut func,
            &label(seed),
            &options(target, (warps, stages), cache),
        ) {
            Ok(compiled) => compiled,
            Err(e) => {
                entry.skipped.push((target.to_string(), e.to_string()));
                continue;
            }
        };
        if func.without_locations().to_string() != ir {
            return Err(format!(
                "seed {seed}: the pipeline's optimized tile IR is not the pass pipeline's"
            ));
        }
        let image = compiled
            .images
            .into_iter()
            .find(|i| i.target == target)
            .ok_or_else(|| format!("seed {seed}: the pipeline made no {target} image"))?;
        let extension = match image.kind {
            ImageKind::Ptx => "ptx",
            ImageKind::Hsaco => "hsaco",
            ImageKind::Host => return Err(format!("seed {seed}: a host image for {target}")),
        };
        let file = format!("{target}/{seed}.{extension}");
        std::fs::write(dir.join(&file), &image.bytes)
            .map_err(|e| format!("writing {file}: {e}"))?;
        entry.images.push(ImageEntry {
            target: target.to_string(),
            kind: image.kind,
            shared_memory_bytes: image.shared_memory_bytes,
            block_threads: image.block_threads,
            file,
            bounds_checks: compiled.bounds_checks,
        });
    }
    Ok(entry)
}

/// The device image and the emulation image of `func` (already through
/// the pass pipeline) for `target`, compiled as seed `seed` is.
pub fn emulation_image(func: &Function, seed: u64, target: Target) -> Result<Emulated, String> {
    let options = options(target, warps_and_stages(seed), None);
    driver::emulate(func, &label(seed), target, &options).map_err(|e| e.to_string())
}

/// Writes into `emulation_dir`, for each of `seeds` and each image of it in
/// `dir` (built by [`build`]) whose target is among `targets`, the
/// emulation image the driver stand-ins run in its place (`tile-standin`:
/// `<key of the device image>.so`), checking that the device image
/// rebuilt beside it is the one in `dir`. Returns how many it wrote.
pub fn write_emulation_images(
    dir: &Path,
    emulation_dir: &Path,
    seeds: &[u64],
    targets: &[Target],
) -> Result<usize, String> {
    let manifest = Manifest::read(dir)?;
    std::fs::create_dir_all(emulation_dir)
        .map_err(|e| format!("creating {}: {e}", emulation_dir.display()))?;
    let mut written = 0;
    for &seed in seeds {
        let entry = manifest
            .cases
            .get(&seed)
            .ok_or_else(|| format!("seed {seed} is not in {}", dir.display()))?;
        let mut func = generate(seed, &GenConfig::default()).func;
        driver::optimize(&mut func).map_err(|e| format!("seed {seed}: {e}"))?;
        for image in &entry.images {
            let target: Target = image.target.parse().map_err(|e| format!("{e}"))?;
            if !targets.contains(&target) {
                continue;
            }
            let bytes = std::fs::read(dir.join(&image.file))
                .map_err(|e| format!("reading {}: {e}", image.file))?;
            let built = emulation_image(&func, seed, target)?;
            if built.device.bytes != bytes {
                return Err(format!(
                    "seed {seed}: the {target} image rebuilt for emulation differs from {}",
                    image.file
                ));
            }
            write_under_key(emulation_dir, &bytes, &built)?;
            written += 1;
        }
    }
    Ok(written)
}

/// Writes `built`'s emulation image into `emulation_dir` under the key of
/// the device image `device_bytes`: what the stand-ins run when that image
/// is launched.
pub fn write_under_key(
    emulation_dir: &Path,
    device_bytes: &[u8],
    built: &Emulated,
) -> Result<(), String> {
    let key = tile_standin::image_key(device_bytes);
    let path = emulation_dir.join(format!("{key}.so"));
    std::fs::write(&path, &built.emulation.shared_object)
        .map_err(|e| format!("writing {}: {e}", path.display()))
}
