//! `tilec`: compiles a kernel in the tile IR's text form for some targets
//! and prints what each GPU image costs, for the compiler's edit loop:
//!
//! ```text
//! cargo run --release -p tile-codegen --example tilec -- FILE [--targets sm_80,gfx942] [--warps N] [--stages N] [--tma] [--fast-math] [--approx-math] [--dump DIR]
//! ```
//!
//! Each PTX image gets `ptxas -v`'s registers and spills and counts of its
//! tensor-core, async-copy and shared-memory instructions; each AMDGPU image
//! its size, MFMA/WMMA counts and scratch accesses in its disassembly (its
//! register counts are in the dumped assembly's metadata). `--dump DIR`
//! writes every stage as `TILE_DUMP` does (docs/backends.md).

use std::path::PathBuf;
use std::process::ExitCode;
use tile_codegen::driver::{self, Options};
use tile_codegen::{parse_targets, tools, CodegenOptions, Target};

struct Args {
    file: PathBuf,
    targets: Vec<Target>,
    warps: u32,
    stages: Option<u32>,
    /// `--tma`: sm_90a's pipelined `wgmma` operands come by the TMA.
    tma: bool,
    /// `--fast-math` and `--approx-math`: the kernel attributes of those
    /// names (sums in any order; one-instruction transcendentals).
    fast_math: bool,
    approx_math: bool,
    dump: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let (mut file, mut targets, mut warps, mut stages, mut dump) = (None, None, 4, None, None);
    let (mut tma, mut fast_math, mut approx_math) = (false, false, false);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} takes a value"));
        match arg.as_str() {
            "--targets" => {
                let list = value("--targets")?;
                targets = Some(parse_targets(&list).map_err(|e| e.to_string())?);
            }
            "--warps" => {
                let n = value("--warps")?;
                warps = n
                    .parse()
                    .map_err(|_| format!("--warps {n}: not a number"))?;
            }
            "--stages" => {
                let n = value("--stages")?;
                stages = Some(
                    n.parse()
                        .map_err(|_| format!("--stages {n}: not a number"))?,
                );
            }
            "--dump" => dump = Some(PathBuf::from(value("--dump")?)),
            "--tma" => tma = true,
            "--fast-math" => fast_math = true,
            "--approx-math" => approx_math = true,
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => file = Some(PathBuf::from(arg)),
        }
    }
    Ok(Args {
        file: file.ok_or(
            "usage: tilec FILE [--targets LIST] [--warps N] [--stages N] [--tma] [--fast-math] [--approx-math] [--dump DIR]",
        )?,
        targets: match targets {
            Some(t) => t,
            None => parse_targets("sm_80").map_err(|e| e.to_string())?,
        },
        warps,
        stages,
        tma,
        fast_math,
        approx_math,
        dump,
    })
}

/// Lines of `text` matching any of `needles`.
fn count(text: &str, needles: &[&str]) -> usize {
    text.lines()
        .filter(|l| needles.iter().any(|n| l.contains(n)))
        .count()
}

fn report(image: &driver::CompiledImage) -> Result<String, String> {
    match image.target {
        Target::Nvptx(sm) => {
            let ptx = String::from_utf8_lossy(&image.bytes);
            let usage = tools::ptxas_resource_usage(&ptx, sm).map_err(|e| e.to_string())?;
            let usage: Vec<&str> = usage
                .lines()
                .filter(|l| l.contains("registers") || l.contains("spill"))
                .map(str::trim)
                .collect();
            Ok(format!(
                "{}\n  mma {}  wgmma {}  ldmatrix {}  cp.async {}  tma {}  ld.shared {}  st.shared {}  bar {}",
                usage.join("\n  "),
                count(&ptx, &["mma.sync"]),
                count(&ptx, &["wgmma.mma_async"]),
                count(&ptx, &["ldmatrix"]),
                count(&ptx, &["cp.async.cg", "cp.async.ca"]),
                count(&ptx, &["cp.async.bulk.tensor"]),
                count(&ptx, &["ld.shared"]),
                count(&ptx, &["st.shared"]),
                count(&ptx, &["bar.sync", "barrier.sync"]),
            ))
        }
        Target::Amdgpu(_) => {
            let disassembly = tools::disassemble(&image.bytes).map_err(|e| e.to_string())?;
            Ok(format!(
                "{} bytes; v_mfma {}  v_wmma {}  scratch accesses {}",
                image.bytes.len(),
                count(&disassembly, &["v_mfma"]),
                count(&disassembly, &["v_wmma"]),
                count(
                    &disassembly,
                    &["scratch_", "buffer_store_dword v", "buffer_load_dword v"]
                ),
            ))
        }
        Target::Host(_) => Ok(format!("{} bytes", image.bytes.len())),
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let text =
        std::fs::read_to_string(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let mut func = tile_ir::text::parse_function(&text).map_err(|e| e.to_string())?;
    let options = Options {
        targets: args.targets,
        num_warps: args.warps,
        codegen: CodegenOptions {
            tma: args.tma,
            fast_math: args.fast_math,
            approx_math: args.approx_math,
            ..CodegenOptions::default()
        },
        dump_dir: args.dump,
        num_stages: args.stages,
        // The compiler's edit loop: every image compiled afresh.
        cache: None,
        max_threads: None,
        target_warps: Vec::new(),
        target_stages: Vec::new(),
    };
    let compiled = driver::compile(&mut func, "tilec", &options).map_err(|e| e.to_string())?;
    for image in &compiled.images {
        println!("{}: {}", image.target, report(image)?);
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tilec: {e}");
            ExitCode::FAILURE
        }
    }
}
