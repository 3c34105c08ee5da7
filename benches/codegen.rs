//! Code-generation numbers, side by side from one run:
//!
//! - compile latency of each example kernel per target: the whole
//!   `#[tile_kernel]` expansion (Rust → tile IR → passes → thread-level
//!   program → LLVM → PTX / HSACO), median of several runs; and for the
//!   default targets, compiled one at a time and concurrently (the kernel
//!   cache is off throughout);
//! - PTX statistics of each example's embedded PTX per sm target: registers,
//!   spills and stack from `ptxas -v`, and counts of vector loads and stores,
//!   shuffles, barriers and FMAs in the PTX;
//! - the f16 matmul of Triton's tutorial (128×128×64 tiles, 8 warps) for
//!   sm_80 (`mma.sync`) and sm_90a (`wgmma`) beside Triton's PTX of it
//!   (Triton 3.9.0's ahead-of-time compile for cuda:80 and cuda:90, read
//!   from `../shared/tritonref/ptx` beside the checkout when it is there):
//!   registers and spills from `ptxas -v`,
//!   tensor-core and async-copy instructions;
//! - the same matmul (f16 and bf16) for gfx90a, gfx942 and gfx950 on MFMA
//!   (and in E4M3 for gfx942 and gfx950): registers and scratch from the
//!   code object's metadata, `v_mfma` and `ds_read` counts, the time to
//!   lower, emit and link it.
//!
//! `cargo bench --bench codegen` (see docs/benchmarks.md); `-- latency`,
//! `-- ptx`, `-- triton` or `-- mfma` runs only those sections.

#[allow(dead_code)]
#[path = "../examples/kernels/attention.rs"]
mod attention;
#[allow(dead_code)] // the examples' harness is not used here
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

use quote::ToTokens;
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};
use tile::meta::KernelInfo;
use tile::ImageKind;
use tile_codegen::{tools, Sm};
use tile_frontend::attr::EnvTargets;
use tile_frontend::expand::{tile_kernel, ExpandOptions};
use tile_thread::lower::LowerOptions;

/// The `#[tile_kernel]` functions of an example file: (name, attribute
/// arguments, the function without the attribute).
fn kernels_of(path: &str) -> Vec<(String, proc_macro2::TokenStream, proc_macro2::TokenStream)> {
    let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let file = syn::parse_file(&source).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    for item in file.items {
        let syn::Item::Fn(mut f) = item else { continue };
        let Some(at) = f
            .attrs
            .iter()
            .position(|a| a.path().is_ident("tile_kernel"))
        else {
            continue;
        };
        let attr = f.attrs.remove(at);
        let args = match attr.meta {
            syn::Meta::List(list) => list.tokens,
            _ => proc_macro2::TokenStream::new(),
        };
        out.push((f.sig.ident.to_string(), args, f.into_token_stream()));
    }
    out
}

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
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

fn compile_latency() {
    let targets = ["host", "sm_80", "sm_90", "gfx90a", "gfx1100"];
    println!("compile latency (ms, median of 5): the #[tile_kernel] expansion per target");
    println!(
        "and for the default targets (median of 3), their targets one at a time and concurrently"
    );
    println!(
        "{:<18} {}{:>12}{:>12}",
        "kernel",
        targets.map(|t| format!("{t:>9}")).join(""),
        "all, 1 by 1",
        "all, ||"
    );
    let expand = |name: &str,
                  attr: &proc_macro2::TokenStream,
                  item: &proc_macro2::TokenStream,
                  options: &ExpandOptions| {
        let out = tile_kernel(attr.clone(), item.clone(), options).to_string();
        assert!(!out.contains("compile_error"), "{name}: {out}");
    };
    for file in [
        "vector_add",
        "softmax",
        "layernorm",
        "matmul",
        "transpose",
        "attention",
    ] {
        for (name, attr, item) in kernels_of(&format!("examples/kernels/{file}.rs")) {
            let mut row = format!("{name:<18} ");
            for target in targets {
                let options = ExpandOptions {
                    env_targets: Some(EnvTargets::tile_targets(target)),
                    ..ExpandOptions::default()
                };
                let t = median(5, || expand(&name, &attr, &item, &options));
                row.push_str(&format!("{:>9.1}", t.as_secs_f64() * 1e3));
            }
            for max_threads in [NonZeroUsize::new(1), None] {
                let options = ExpandOptions {
                    max_threads,
                    ..ExpandOptions::default()
                };
                let t = median(3, || expand(&name, &attr, &item, &options));
                row.push_str(&format!("{:>12.1}", t.as_secs_f64() * 1e3));
            }
            println!("{row}");
        }
    }
}

/// `ptxas -v`'s "Used N registers" and "N bytes stack frame, N bytes spill
/// stores" as (registers, stack, spill stores).
fn resources(report: &str) -> (u32, u32, u32) {
    let number_before = |text: &str, key: &str| -> u32 {
        text.find(key)
            .and_then(|at| text[..at].split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let registers = report
        .find("Used ")
        .and_then(|at| report[at + 5..].split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (
        registers,
        number_before(report, "bytes stack frame"),
        number_before(report, "bytes spill stores"),
    )
}

fn ptx_statistics() {
    println!("\nPTX statistics of the embedded images: registers, stack and spill bytes from ptxas -v; instruction counts in the PTX");
    println!(
        "{:<30} {:<6} {:>5} {:>6} {:>6} {:>8} {:>8} {:>6} {:>5} {:>5} {:>5} {:>5}",
        "kernel (specialization)",
        "sm",
        "regs",
        "stack",
        "spill",
        "ld.v2/v4",
        "st.v2/v4",
        "shfl",
        "bar",
        "fma",
        "mma",
        "wgmma"
    );
    let infos: [&KernelInfo; 11] = [
        &vector_add::vector_add::<1024>::INFO,
        &softmax::softmax::<4, 256>::INFO,
        &layernorm::layernorm::<8, 384>::INFO,
        &matmul::matmul::<32, 32, 16>::INFO,
        &matmul::matmul_f16::<32, 32, 16>::INFO,
        &matmul::matmul_f16_large::<128, 128, 64>::INFO,
        &matmul::matmul_bf16_large::<128, 128, 64>::INFO,
        &transpose::transpose::<32, 32>::INFO,
        &transpose::transpose_lview::<224, 160, 32, 32>::INFO,
        &attention::attention::<16, 16, 64>::INFO,
        &attention::attention_f16::<64, 32, 64>::INFO,
    ];
    for info in infos {
        for spec in info.specializations {
            for image in spec.images.iter().filter(|i| i.kind == ImageKind::Ptx) {
                let ptx = std::str::from_utf8(image.bytes).expect("PTX is text");
                let Some(sm) = Sm::ALL.into_iter().find(|s| s.name() == image.target) else {
                    continue;
                };
                let report = tools::ptxas_resource_usage(ptx, sm).unwrap_or_else(|e| panic!("{e}"));
                let (regs, stack, spill) = resources(&report);
                let count = |needle: &str| ptx.matches(needle).count();
                let vector_loads = count("ld.global.v2")
                    + count("ld.global.v4")
                    + count("ld.global.nc.v2")
                    + count("ld.global.nc.v4");
                let vector_stores = count("st.global.v2") + count("st.global.v4");
                println!(
                    "{:<30} {:<6} {:>5} {:>6} {:>6} {:>8} {:>8} {:>6} {:>5} {:>5} {:>5} {:>5}",
                    format!("{} ({})", info.name, spec.label),
                    image.target,
                    regs,
                    stack,
                    spill,
                    vector_loads,
                    vector_stores,
                    count("shfl.sync"),
                    count("bar.sync"),
                    count("fma.rn"),
                    count("mma.sync"),
                    count("wgmma.mma_async")
                );
            }
        }
    }
}

/// One row of the tensor-core comparison: `ptxas -v` figures for `sm` and
/// counts of the instructions that make a tensor-core matmul, in `ptx`.
fn tensor_core_row(name: &str, sm: Sm, ptx: &str) {
    let report = tools::ptxas_resource_usage(ptx, sm).unwrap_or_else(|e| panic!("{e}"));
    let (regs, _, spill) = resources(&report);
    let count = |needle: &str| ptx.matches(needle).count();
    println!(
        "{:<34} {:>5} {:>6} {:>5} {:>6} {:>8} {:>8} {:>9} {:>5}",
        name,
        regs,
        spill,
        count("mma.sync"),
        count("wgmma.mma_async"),
        count("ldmatrix"),
        count("cp.async.cg") + count("cp.async.ca"),
        count("ld.shared"),
        count("bar.sync"),
    );
}

/// Our PTX of the f16 matmul at Triton's tutorial configuration beside
/// Triton's (3 pipeline stages), both assembled by the same ptxas: on
/// sm_80 (`mma.sync`) and on sm_90a (`wgmma`).
fn tensor_cores_against_triton() {
    let func = tile::ir::samples::matmul(128, 128, 64, tile::ir::DType::F16).expect("the sample");
    for (sm, reference) in [
        (Sm::Sm80, "matmul_cuda_80.ptx"),
        (Sm::Sm90a, "matmul_cuda_90.ptx"),
    ] {
        println!("\nf16 matmul 128x128x64, 8 warps, {sm}: ptxas -v registers and spill bytes; instruction counts in the PTX");
        println!(
            "{:<34} {:>5} {:>6} {:>5} {:>6} {:>8} {:>8} {:>9} {:>5}",
            "compiler", "regs", "spill", "mma", "wgmma", "ldmatrix", "cp.async", "ld.shared", "bar"
        );
        let target = tile_codegen::Target::Nvptx(sm);
        for stages in [1, 2, 3] {
            let lowering = LowerOptions::warps(8)
                .with_tensor_cores(target.tensor_cores())
                .with_stages(stages);
            let program = tile_codegen::driver::lower_for(&func, "tutorial", &lowering)
                .unwrap_or_else(|e| panic!("{e}"));
            let options = tile_codegen::CodegenOptions::default();
            let ours = tile_codegen::gpu::emit(&program, target, &options)
                .unwrap_or_else(|e| panic!("{e}"));
            let name = match stages {
                1 => "tile (no pipelining)".to_string(),
                n => format!("tile ({n} stages)"),
            };
            tensor_core_row(&name, sm, &ours.assembly);
        }
        let triton = format!(
            "{}/../shared/tritonref/ptx/{reference}",
            env!("CARGO_MANIFEST_DIR")
        );
        match std::fs::read_to_string(&triton) {
            Ok(ptx) => tensor_core_row("Triton (3 stages)", sm, &ptx),
            Err(e) => println!("Triton's PTX: {triton}: {e}"),
        }
    }
}

/// The f16, bf16 and E4M3 matmuls at Triton's tutorial configuration for
/// CDNA's MFMA (gfx950: CDNA 4's own forms; E4M3 natively there, widened
/// to f16 on gfx942, whose FP8 is FNUZ): each code object's registers and
/// scratch from its metadata, its `v_mfma` instructions, and how long
/// lowering, LLVM and the link took.
fn mfma_statistics() {
    use tile::ir::DType;
    use tile_codegen::{Gfx, Target};
    println!("\nmatmul 128x128x64, 8 warps (4 waves), CDNA: registers (vgpr: the unified file's total, agpr among them) and scratch bytes from the code object's metadata; instruction counts in its disassembly");
    println!(
        "{:<8} {:<7} {:>5} {:>5} {:>8} {:>7} {:>8} {:>9}",
        "dtype", "target", "vgpr", "agpr", "scratch", "v_mfma", "ds_read", "compile"
    );
    let cases = [
        (DType::F16, &[Gfx::Gfx90a, Gfx::Gfx942, Gfx::Gfx950][..]),
        (DType::BF16, &[Gfx::Gfx90a, Gfx::Gfx942, Gfx::Gfx950][..]),
        (DType::F8E4M3, &[Gfx::Gfx942, Gfx::Gfx950][..]),
    ];
    for (dtype, targets) in cases {
        let func = tile::ir::samples::matmul(128, 128, 64, dtype).expect("the sample");
        for &gfx in targets {
            let target = Target::Amdgpu(gfx);
            let start = Instant::now();
            let lowering = LowerOptions::warps(8).with_tensor_cores(target.tensor_cores());
            let program = tile_codegen::driver::lower_for(&func, "tutorial", &lowering)
                .unwrap_or_else(|e| panic!("{e}"));
            let out =
                tile_codegen::gpu::emit(&program, target, &tile_codegen::CodegenOptions::default())
                    .unwrap_or_else(|e| panic!("{e}"));
            let elapsed = start.elapsed();
            // A key may open its YAML list item (`- .agpr_count: 189`).
            let metadata = |key: &str| {
                out.assembly
                    .lines()
                    .find_map(|l| l.trim().trim_start_matches("- ").strip_prefix(key))
                    .map_or("?".to_string(), |v| v.trim().to_string())
            };
            let code = out.code_object.as_ref().expect("a code object");
            let listing = tools::disassemble(code).unwrap_or_else(|e| panic!("{e}"));
            println!(
                "{:<8} {:<7} {:>5} {:>5} {:>8} {:>7} {:>8} {:>7.0}ms",
                dtype.to_string(),
                gfx.to_string(),
                metadata(".vgpr_count:"),
                metadata(".agpr_count:"),
                metadata(".private_segment_fixed_size:"),
                listing.matches("v_mfma").count(),
                listing.matches("ds_read").count(),
                elapsed.as_secs_f64() * 1e3,
            );
        }
    }
}

fn main() {
    // `cargo test --all-targets` runs bench binaries too, without `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("benchmarks run with `cargo bench --bench codegen`");
        return;
    }
    // `cargo bench --bench codegen -- mfma` runs only the sections named.
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let sections: [(&str, fn()); 4] = [
        ("latency", compile_latency),
        ("ptx", ptx_statistics),
        ("triton", tensor_cores_against_triton),
        ("mfma", mfma_statistics),
    ];
    for (name, section) in sections {
        if named.is_empty() || named.iter().any(|n| n == name) {
            section();
        }
    }
}
