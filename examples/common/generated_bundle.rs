//! The directory of generated programs' device images that the GPU bundle
//! carries (written by `examples/generated_images.rs`, which links LLVM,
//! read by `examples/generated_check.rs`, which does not): the differential
//! suite's seeds (`tile_testgen::generate` with `GenConfig::default()`),
//! each compiled by `tile_codegen::driver::compile` for every target, as
//! `#[tile_kernel]` compiles a kernel.
//!
//! ```text
//! <dir>/manifest.txt          what follows, one line per fact
//! <dir>/<target>/<seed>.ptx   sm_* images (PTX text)
//! <dir>/<target>/<seed>.hsaco gfx* images (AMDGPU code objects)
//! ```
//!
//! The manifest, line by line (fields split by one space; a text field is
//! the rest of its line, with `\` and newlines escaped as `\\` and `\n`):
//!
//! ```text
//! tile generated images 2
//! targets sm_80 sm_90 ..
//! case <seed> <warps> <stages> <digest of the optimized tile IR>
//! image <seed> <target> ptx|hsaco <shared memory bytes> <block threads> <file>
//! check <text>                 the image's run-time checks, in order
//! skip <seed> <target> <text>  why the seed has no image for the target
//! ```
//!
//! Each image is the compilation of its seed's kernel after the tile IR's
//! pass pipeline, whose text the reader derives again from the seed
//! ([`optimized_ir`]) and knows by its digest: a manifest made from
//! another generator or other passes is refused, not run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use tile::ir::passes::PassManager;
use tile::ir::Function;
use tile::runtime::ImageKind;

/// The manifest's file name in the directory.
pub const MANIFEST: &str = "manifest.txt";

/// The manifest's first line (its format's version).
const HEADER: &str = "tile generated images 2";

/// Everything the directory holds, by seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifest {
    /// The targets the builder compiled for (`sm_80`, `gfx942`, ..).
    pub targets: Vec<String>,
    /// The seeds, in order.
    pub cases: BTreeMap<u64, CaseEntry>,
}

/// One seed's kernel and its images.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseEntry {
    /// Warps per program.
    pub warps: u32,
    /// Software-pipeline stages on targets with `cp.async`.
    pub stages: u32,
    /// The digest of its optimized tile IR ([`optimized_ir`], [`digest`]).
    pub ir_digest: String,
    /// Its images, one per target it compiled for.
    pub images: Vec<ImageEntry>,
    /// `(target, why)` for each target it has no image for.
    pub skipped: Vec<(String, String)>,
}

/// One device image of a seed.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageEntry {
    /// Its target.
    pub target: String,
    /// PTX or HSACO.
    pub kind: ImageKind,
    /// The shared memory a block needs.
    pub shared_memory_bytes: usize,
    /// The threads of a block.
    pub block_threads: u32,
    /// Its file, relative to the directory.
    pub file: String,
    /// The tile-IR ops of its run-time checks, in the order its status
    /// record counts them.
    pub bounds_checks: Vec<String>,
}

/// The text of `func` after the tile IR's pass pipeline, without source
/// locations: the IR every image of it is compiled from, and the one the
/// runtime is given beside them.
pub fn optimized_ir(func: &Function) -> Result<String, String> {
    let mut optimized = func.clone();
    PassManager::default_pipeline()
        .run(&mut optimized, |_, _| {})
        .map_err(|e| format!("the pass pipeline failed: {e}"))?;
    Ok(optimized.without_locations().to_string())
}

/// 16 hex digits of the FNV-1a hash of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

impl Manifest {
    /// The manifest as its file holds it.
    pub fn to_text(&self) -> String {
        let mut out = format!("{HEADER}\ntargets {}\n", self.targets.join(" "));
        for (seed, case) in &self.cases {
            let _ = writeln!(
                out,
                "case {seed} {} {} {}",
                case.warps, case.stages, case.ir_digest
            );
            for image in &case.images {
                let kind = match image.kind {
                    ImageKind::Ptx => "ptx",
                    ImageKind::Hsaco => "hsaco",
                    ImageKind::Host => "host",
                };
                let _ = writeln!(
                    out,
                    "image {seed} {} {kind} {} {} {}",
                    image.target, image.shared_memory_bytes, image.block_threads, image.file
                );
                for check in &image.bounds_checks {
                    let _ = writeln!(out, "check {}", escape(check));
                }
            }
            for (target, why) in &case.skipped {
                let _ = writeln!(out, "skip {seed} {target} {}", escape(why));
            }
        }
        out
    }

    /// Reads `dir`'s manifest.
    pub fn read(dir: &Path) -> Result<Manifest, String> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        Manifest::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a manifest's text.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, HEADER)) => {}
            other => {
                return Err(format!(
                    "not a manifest of this format: it starts {:?}, not {HEADER:?}",
                    other.map_or("", |(_, l)| l)
                ))
            }
        }
        let mut manifest = Manifest::default();
        for (number, line) in lines {
            parse_line(&mut manifest, line).map_err(|e| format!("line {}: {e}", number + 1))?;
        }
        if manifest.targets.is_empty() {
            return Err("no `targets` line".into());
        }
        Ok(manifest)
    }
}

/// Adds one manifest line's fact to `manifest`.
fn parse_line(manifest: &mut Manifest, line: &str) -> Result<(), String> {
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let mut fields = rest.split(' ');
    let mut field = |what: &str| {
        fields
            .next()
            .filter(|f| !f.is_empty())
            .ok_or_else(|| format!("`{word}` without its {what}"))
    };
    match word {
        "targets" => manifest.targets = rest.split(' ').map(str::to_string).collect(),
        "case" => {
            let seed = number(field("seed")?)?;
            let entry = CaseEntry {
                warps: number(field("warps")?)?,
                stages: number(field("stages")?)?,
                ir_digest: field("IR digest")?.to_string(),
                images: Vec::new(),
                skipped: Vec::new(),
            };
            if manifest.cases.insert(seed, entry).is_some() {
                return Err(format!("seed {seed} twice"));
            }
        }
        "image" => {
            let seed = number(field("seed")?)?;
            let target = field("target")?.to_string();
            let kind = match field("kind")? {
                "ptx" => ImageKind::Ptx,
                "hsaco" => ImageKind::Hsaco,
                other => return Err(format!("an image of kind {other:?}")),
            };
            let image = ImageEntry {
                target,
                kind,
                shared_memory_bytes: number(field("shared memory")?)?,
                block_threads: number(field("block threads")?)?,
                file: field("file")?.to_string(),
                bounds_checks: Vec::new(),
            };
            case_of(manifest, seed)?.images.push(image);
        }
        "check" => {
            let image = manifest
                .cases
                .values_mut()
                .next_back()
                .and_then(|case| case.images.last_mut())
                .ok_or("a check before any image")?;
            image.bounds_checks.push(unescape(rest)?);
        }
        "skip" => {
            let seed = number(field("seed")?)?;
            let target = field("target")?.to_string();
            let why = rest.splitn(3, ' ').nth(2).unwrap_or_default();
            let why = unescape(why)?;
            case_of(manifest, seed)?.skipped.push((target, why));
        }
        other => return Err(format!("an unknown line {other:?}")),
    }
    Ok(())
}

/// The entry of `seed`, which must be the last one so far.
fn case_of(manifest: &mut Manifest, seed: u64) -> Result<&mut CaseEntry, String> {
    match manifest.cases.iter_mut().next_back() {
        Some((&last, entry)) if last == seed => Ok(entry),
        _ => Err(format!("seed {seed} outside its `case` line's block")),
    }
}

fn number<T: std::str::FromStr>(field: &str) -> Result<T, String> {
    field
        .parse()
        .map_err(|_| format!("{field:?} is not a number"))
}

/// `text` on one line: `\` as `\\`, a newline as `\n`.
pub fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The text [`escape`] made `line` from.
pub fn unescape(line: &str) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            other => return Err(format!("an unknown escape \\{other:?} in {line:?}")),
        }
    }
    Ok(out)
}
