//! The corpus's code beside Triton's (`examples/corpus/`,
//! `scripts/corpus/triton_kernels.py`): per kernel and target (sm_80,
//! sm_90a, sm_100a, sm_120a, gfx942), registers per thread, spills (NVIDIA: bytes of
//! spill stores from `ptxas -v`; AMD: VGPRs spilled, from the code object's
//! metadata), shared memory per block, tensor-core instructions (`mma.sync`,
//! `wgmma.mma_async` and `tcgen05.mma`; `v_mfma`), asynchronous copies (`cp.async` and
//! TMA; loads into LDS) and vector global accesses, as `tile / Triton`.
//!
//! Triton's figures come from the TSV `scripts/corpus/triton_stats.py`
//! writes (`scripts/corpus-vs-triton.sh` makes it and runs this bench with
//! `--triton FILE`); without one only tile's are printed. Where Triton does
//! not compile a kernel for a target (its row in the TSV says `error`, and
//! why in its last column, `note`), Triton's figures are `—` and the reason
//! is printed under the table. No GPU is needed.
//!
//! `--generic` sets tile's code for AMD processors beside its code for
//! their families' generic processors instead (gfx942 / `gfx9-4-generic`,
//! gfx1100 / `gfx11-generic`, gfx1200 / `gfx12-generic`), each compiled with
//! the member's own settings.
//!
//! `--only NAME` (repeatable) keeps the rows of the kernels named: a
//! kernel's name or its corpus name (`flash_attn_fwd_causal`). Any other
//! argument is refused with the usage.
//!
//! `TILE_DUMP=DIR` writes every stage of every build under `DIR`, as the
//! macro does (`DIR/<kernel>/<specialization>/`).

#[allow(dead_code)] // the examples' harness is not used here
#[path = "../examples/common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../examples/corpus/mod.rs"]
mod corpus;
#[allow(dead_code)] // only the options builder is used here
#[path = "../examples/common/emulation_images.rs"]
mod emulation_images;

use std::collections::HashMap;
use std::process::ExitCode;
use tile::meta::{KernelInfo, SpecInfo};
use tile_codegen::driver::{self, Spills};
use tile_codegen::{Gfx, Sm, Target};

/// The targets compared.
const TARGETS: [Target; 5] = [
    Target::Nvptx(Sm::Sm80),
    Target::Nvptx(Sm::Sm90a),
    Target::Nvptx(Sm::Sm100a),
    Target::Nvptx(Sm::Sm120a),
    Target::Amdgpu(Gfx::Gfx942),
];

/// The AMD processors `--generic` compares with their families' generic
/// ones.
const MEMBERS: [Gfx; 3] = [Gfx::Gfx942, Gfx::Gfx1100, Gfx::Gfx1200];

/// The columns after the kernel and the target.
const COLUMNS: [&str; 6] = [
    "registers",
    "spill",
    "shared",
    "mma",
    "async_copy",
    "vector_global",
];

/// One kernel's figures on one target, in the order of [`COLUMNS`].
type Figures = [String; 6];

/// The TSV's optional last column: why Triton's compile failed, if it did.
const NOTE: &str = "note";

/// Triton's row of one kernel on one target: its figures, and the reason
/// its compile failed (empty where it did not).
struct TritonRow {
    figures: Figures,
    note: String,
}

impl TritonRow {
    /// Whether Triton did not compile the kernel for the target.
    fn failed(&self) -> bool {
        self.figures[0] == "error"
    }
}

/// The corpus name of a specialization: the kernel's, `_causal` added for
/// the causal attention (Triton's corpus has one kernel per variant).
fn corpus_name(info: &KernelInfo, label: &str) -> String {
    if label.contains("CAUSAL=1") {
        format!("{}_causal", info.name)
    } else {
        info.name.to_string()
    }
}

/// The PTX's instructions with their operands, one per statement:
/// comments, directives and labels cut, inline assembly's `{ ..; .. }`
/// blocks split at their semicolons, predicates stripped.
fn ptx_instructions(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|line| line.split("//").next())
        .flat_map(|code| code.split([';', '{', '}']))
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.starts_with(['.', '$']) && !s.ends_with(':'))
        .map(|s| match s.strip_prefix('@') {
            Some(rest) => rest
                .split_once(char::is_whitespace)
                .map_or("", |(_, r)| r.trim_start()),
            None => s,
        })
        .collect()
}

/// Whether a PTX mnemonic has a `.v2`, `.v4` or `.v8` vector type.
fn is_vector(mnemonic: &str) -> bool {
    mnemonic
        .split('.')
        .any(|part| matches!(part, "v2" | "v4" | "v8"))
}

/// The mnemonic of a PTX instruction.
fn mnemonic(instruction: &str) -> &str {
    instruction.split_whitespace().next().unwrap_or_default()
}

/// The AMDGPU assembly's instructions (tab-indented lines that are not
/// directives), comments cut.
fn amdgpu_instructions(assembly: &str) -> Vec<&str> {
    assembly
        .lines()
        .filter(|l| l.starts_with('\t') && !l.starts_with("\t."))
        .map(|l| l.split(';').next().unwrap_or_default().trim())
        .filter(|s| s.starts_with(|c: char| c.is_ascii_lowercase()))
        .collect()
}

/// tile's figures for specialization `spec` of `info` on `target`, with
/// the options the macro gives it on the target named `settings`.
fn tile_figures(info: &KernelInfo, spec: &SpecInfo, target: Target, settings: &str) -> Figures {
    let label = spec.label;
    let mut func = tile::ir::text::parse_function(spec.ir).expect("the embedded tile IR");
    let mut options =
        emulation_images::options_with_settings_of(info, spec, target, settings, false);
    // `TILE_DUMP=DIR` writes every stage of every build, as the macro does.
    options.dump_dir = std::env::var_os("TILE_DUMP").map(std::path::PathBuf::from);
    let compiled = match driver::compile(&mut func, label, &options) {
        Ok(compiled) => compiled,
        Err(e) => {
            eprintln!("{} ({label}) for {target}: {e}", info.name);
            return std::array::from_fn(|i| if i == 0 { "error".into() } else { "-".into() });
        }
    };
    let image = &compiled.images[0];
    let usage = compiled.registers.first();
    let registers = usage.map_or("?".into(), |u| u.registers.to_string());
    let spill = match usage.map(|u| u.spills) {
        Some(Spills::Bytes { stores, .. }) => stores.to_string(),
        Some(Spills::Registers { vgprs, .. }) => vgprs.to_string(),
        None => "?".into(),
    };
    let (mma, copies, vector) = match target {
        Target::Amdgpu(_) => {
            let assembly = compiled.texts[0]
                .amdgpu_assembly
                .as_deref()
                .unwrap_or_default();
            let ins = amdgpu_instructions(assembly);
            let count = |f: &dyn Fn(&str) -> bool| ins.iter().filter(|s| f(s)).count();
            let lds_load = |s: &str| {
                (s.starts_with("global_load") || s.starts_with("buffer_load"))
                    && (s.contains("_lds") || s.split([' ', ',']).any(|w| w == "lds"))
            };
            // CDNA names a wide access by dwords (`global_load_dwordx4`),
            // RDNA by bits (`global_load_b128`).
            let wide = |s: &str| {
                [
                    "global_load_",
                    "global_store_",
                    "buffer_load_",
                    "buffer_store_",
                ]
                .iter()
                .filter_map(|p| s.strip_prefix(p))
                .any(|r| {
                    r.strip_prefix("dwordx")
                        .is_some_and(|n| n.starts_with(['2', '3', '4']))
                        || ["b64", "b96", "b128"]
                            .iter()
                            .any(|b| r.split(' ').next() == Some(b))
                })
            };
            (
                count(&|s| s.starts_with("v_mfma") || s.starts_with("v_wmma")),
                count(&lds_load),
                count(&wide),
            )
        }
        _ => {
            let ptx = std::str::from_utf8(&image.bytes).expect("PTX is text");
            let ins: Vec<&str> = ptx_instructions(ptx).into_iter().map(mnemonic).collect();
            let count = |f: &dyn Fn(&str) -> bool| ins.iter().filter(|m| f(m)).count();
            (
                count(&|m| {
                    ["mma.sync", "wgmma.mma_async", "tcgen05.mma"]
                        .iter()
                        .any(|p| m.starts_with(p))
                }),
                count(&|m| {
                    ["cp.async.ca.", "cp.async.cg.", "cp.async.bulk.tensor"]
                        .iter()
                        .any(|p| m.starts_with(p))
                }),
                count(&|m| {
                    (m.starts_with("ld.global") || m.starts_with("st.global")) && is_vector(m)
                }),
            )
        }
    };
    [
        registers,
        spill,
        image.shared_memory_bytes.to_string(),
        mma.to_string(),
        copies.to_string(),
        vector.to_string(),
    ]
}

/// Triton's rows by (kernel, target) from the TSV at `path`.
fn triton_figures(path: &str) -> HashMap<(String, String), TritonRow> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    assert_eq!(
        header[..2],
        ["kernel", "target"],
        "{path}: not the corpus TSV"
    );
    let figures_end = 2 + COLUMNS.len();
    assert!(
        header.get(2..figures_end) == Some(&COLUMNS[..])
            && matches!(header.get(figures_end..), Some([] | [NOTE])),
        "{path}: other columns than the bench's"
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            let figures = std::array::from_fn(|i| cells.get(i + 2).unwrap_or(&"?").to_string());
            let note = cells.get(figures_end).unwrap_or(&"").trim().to_string();
            let key = (cells[0].to_string(), cells[1].to_string());
            (key, TritonRow { figures, note })
        })
        .collect()
}

/// What the command line asks for.
#[derive(Default)]
struct Request {
    /// `--generic`: the generic AMD table instead of the Triton one.
    generic: bool,
    /// `--triton FILE`: Triton's figures.
    triton: Option<String>,
    /// `--only NAME`: the kernels whose rows are printed (all if empty).
    only: Vec<String>,
}

const USAGE: &str =
    "usage: cargo bench --bench corpus -- [--triton FILE] [--generic] [--only NAME]...";

impl Request {
    /// The request of `args` (after the program's name), or why it is
    /// refused. Cargo adds `--bench`.
    fn parse(args: &[String]) -> Result<Request, String> {
        let mut request = Request::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--bench" => {}
                "--generic" => request.generic = true,
                "--triton" | "--only" => {
                    let value = it.next().ok_or(format!("{arg} needs a value"))?.clone();
                    if arg == "--triton" {
                        request.triton = Some(value);
                    } else {
                        request.only.push(value);
                    }
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        let kernels = corpus::kernels();
        let names: Vec<String> = (kernels.iter())
            .flat_map(|info| {
                info.specializations
                    .iter()
                    .map(|s| corpus_name(info, s.label))
            })
            .collect();
        for name in &request.only {
            if !kernels.iter().any(|info| info.name == name) && !names.contains(name) {
                return Err(format!(
                    "no corpus kernel `{name}`; the corpus has {}",
                    names.join(", ")
                ));
            }
        }
        Ok(request)
    }

    /// Whether the rows of specialization `spec` of `info` are printed.
    fn wants(&self, info: &KernelInfo, spec: &SpecInfo) -> bool {
        let name = corpus_name(info, spec.label);
        self.only.is_empty() || self.only.iter().any(|o| *o == info.name || *o == name)
    }
}

/// tile's code for each AMD processor of [`MEMBERS`] beside its code for
/// the family's generic processor.
fn generic_table(request: &Request) {
    println!("the corpus (examples/corpus) on AMD processors, each figure as the processor's code / its family's generic code; spill: VGPRs spilled");
    print!("{:<24} {:<24}", "kernel", "target");
    for column in COLUMNS {
        print!(" {column:>13}");
    }
    println!();
    for info in corpus::kernels() {
        for spec in info
            .specializations
            .iter()
            .filter(|s| request.wants(info, s))
        {
            let name = corpus_name(info, spec.label);
            for gfx in MEMBERS {
                let member = gfx.name();
                let generic = tile_abi::amd_generic::family_of(member).expect("a family");
                let generic_target: Target = generic.parse().expect("a generic target");
                let ours = tile_figures(info, spec, Target::Amdgpu(gfx), member);
                let theirs = tile_figures(info, spec, generic_target, member);
                print!("{name:<24} {:<24}", format!("{member} / {generic}"));
                for (a, b) in ours.iter().zip(&theirs) {
                    print!(" {:>13}", format!("{a} / {b}"));
                }
                println!();
            }
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let request = match Request::parse(&args) {
        Ok(request) => request,
        Err(why) => {
            eprintln!("corpus: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if request.generic {
        generic_table(&request);
        return ExitCode::SUCCESS;
    }
    let triton = request.triton.as_deref().map(triton_figures);
    let unknown: Figures = std::array::from_fn(|_| "·".to_string());
    let rejected: Figures = std::array::from_fn(|_| "—".to_string());
    let mut failures = Vec::new();
    println!("the corpus (examples/corpus), each figure as tile / Triton; spill: bytes of spill stores (NVIDIA), VGPRs spilled (AMD)");
    print!("{:<24} {:<7}", "kernel", "target");
    for column in COLUMNS {
        print!(" {column:>13}");
    }
    println!();
    for info in corpus::kernels() {
        for spec in info
            .specializations
            .iter()
            .filter(|s| request.wants(info, s))
        {
            let name = corpus_name(info, spec.label);
            for target in TARGETS {
                let ours = tile_figures(info, spec, target, &target.to_string());
                let row = triton
                    .as_ref()
                    .and_then(|t| t.get(&(name.clone(), target.to_string())));
                let theirs = match row {
                    Some(row) if row.failed() => {
                        let why = match row.note.as_str() {
                            "" => "(the TSV has no reason; triton_stats.py printed it)",
                            note => note,
                        };
                        failures.push(format!("{name} {target}: {why}"));
                        &rejected
                    }
                    Some(row) => &row.figures,
                    None => &unknown,
                };
                print!("{name:<24} {:<7}", target.to_string());
                for (a, b) in ours.iter().zip(theirs) {
                    print!(" {:>13}", format!("{a} / {b}"));
                }
                println!();
            }
        }
    }
    if !failures.is_empty() {
        println!("—: Triton does not compile the kernel for the target:");
        for failure in failures {
            println!("  {failure}");
        }
    }
    ExitCode::SUCCESS
}
