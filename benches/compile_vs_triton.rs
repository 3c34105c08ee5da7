//! Compile time against Triton's, side by side from one run of
//! `scripts/compile-vs-triton.sh`: the kernels of Triton's tutorials (01
//! vector add, 02 softmax, 03 matmul, 05 layer norm;
//! <https://github.com/triton-lang/triton/tree/main/python/tutorials>) at the
//! fixed configurations of the script's kernel file (`$TRITONREF/kernels.py`,
//! beside the checkout), each written as a `#[tile_kernel]` at
//! the same tile shapes and warps, compiled by the whole `#[tile_kernel]`
//! expansion (Rust → tile IR → passes → thread-level program → LLVM → PTX)
//! for sm_80, and for gfx942, gfx1100 and one host level, with the kernel
//! cache off: the median of several runs in this process, beside Triton's
//! times for cuda:80 that the script measured just before (a file of
//! `scripts/triton_compile_times.py`), and each of ours divided by Triton's
//! time to PTX and by Triton's whole compile (which ends in ptxas; the sm_80
//! expansion also runs `ptxas -v` once, for the build's register warnings).
//!
//! `cargo bench --bench compile_vs_triton -- --triton-times FILE [--runs N]
//! [--kernels a,b] [--targets t,u]`: the last two keep only the kernels and
//! targets named (for profiling one of them).

use proc_macro2::TokenStream;
use quote::quote;
use std::time::{Duration, Instant};
use tile_frontend::attr::EnvTargets;
use tile_frontend::expand::{tile_kernel, ExpandOptions};

/// A kernel of kernels.py as a tile kernel: its name there, its warps, the
/// attribute's `configs(...)` and `aligned(...)`, whether it is compiled
/// with `fast_math`, and the function.
#[derive(Clone)]
struct Kernel {
    name: &'static str,
    warps: u32,
    configs: TokenStream,
    /// The tensors promised aligned: those whose pointer, strides and row
    /// length kernels.py's SPECS declare divisible by 16 for Triton.
    aligned: TokenStream,
    fast_math: bool,
    item: TokenStream,
}

impl Kernel {
    fn attr(&self) -> TokenStream {
        let (warps, configs, aligned) = (self.warps, &self.configs, &self.aligned);
        let fast_math = self.fast_math.then(|| quote!(fast_math,));
        quote!(num_warps = #warps, #fast_math aligned(#aligned), #configs)
    }

    /// The row's name: kernels.py's, with `+fast_math` for the twin.
    fn label(&self) -> String {
        match self.fast_math {
            true => format!("{}+fast_math", self.name),
            false => self.name.to_string(),
        }
    }
}

/// The kernels of kernels.py's SPECS, and twins with `fast_math` of those
/// that call exp or rsqrt: Triton compiles both to approximate instructions
/// (`ex2.approx`, `rsqrt.approx`), tile's default to the exact functions of
/// its interpreter, and `fast_math` to a library within a few ulps (docs/
/// guide.md), the like for like.
fn kernels() -> Vec<Kernel> {
    let exact = specs();
    let twins: Vec<Kernel> = exact
        .iter()
        .filter(|k| k.name.starts_with("softmax") || k.name.starts_with("layernorm"))
        .map(|k| Kernel {
            fast_math: true,
            ..k.clone()
        })
        .collect();
    exact.into_iter().chain(twins).collect()
}

/// The kernels of kernels.py's SPECS, at the same shapes and warps.
fn specs() -> Vec<Kernel> {
    let matmul = |warps: u32| Kernel {
        name: if warps == 8 { "matmul" } else { "matmul_w4" },
        warps,
        // Tutorial 03: f16 in, f32 accumulation, f16 out; 128×128×64.
        configs: quote!(configs(BM = 128, BN = 128, BK = 64)),
        aligned: quote!(a, b, c),
        fast_math: false,
        item: quote! {
            fn matmul<const BM: usize, const BN: usize, const BK: usize>(
                a: &Tensor<f16, 2>,
                b: &Tensor<f16, 2>,
                c: &mut Tensor<f16, 2>,
            ) {
                let (pid_m, pid_n) = (program_id(0), program_id(1));
                let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
                let mut acc = zeros::<f32>([BM, BN]);
                for kk in 0..cdiv(a.dim(1), BK) {
                    acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
                }
                partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
            }
        },
    };
    // Both layernorms: the parameters of tutorial 05's, and the row, its
    // columns and their number as f32.
    let layernorm_params = quote! {
        x: &Tensor<f32, 2>,
        y: &mut Tensor<f32, 2>,
        w: &Tensor<f32>,
        b: &Tensor<f32>,
        mean_out: &mut Tensor<f32>,
        rstd_out: &mut Tensor<f32>,
        eps: f32,
    };
    let layernorm_start = quote! {
        let row = program_id(0);
        let cols = x.dim(1);
        let n = cols.cast::<f32>();
    };
    vec![
        Kernel {
            name: "vector_add",
            warps: 4,
            configs: quote!(configs(BLOCK = 1024)),
            aligned: quote!(x, y, out),
            fast_math: false,
            item: quote! {
                fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
                    let pid = program_id(0);
                    let (px, py) = (partition_view(x, [BLOCK]), partition_view(y, [BLOCK]));
                    partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
                }
            },
        },
        Kernel {
            // Tutorial 02, one row of up to 1024 columns per program.
            name: "softmax",
            warps: 4,
            configs: quote!(configs(BC = 1024)),
            aligned: quote!(x, out),
            fast_math: false,
            item: quote! {
                fn softmax<const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
                    let row = program_id(0);
                    let t = partition_view(x, [1, BC]).load_masked_with(Padding::NegInf, row, 0);
                    let e = (t - t.max_along_keepdim(1)).exp();
                    partition_view(out, [1, BC]).store_masked(e / e.sum_keepdim(1), row, 0);
                }
            },
        },
        matmul(8),
        Kernel {
            // Tutorial 05's forward pass: three loops over the row in
            // 1024-column blocks; the mean and 1/std of each row stored.
            name: "layernorm",
            warps: 4,
            configs: quote!(configs(BC = 1024)),
            // Not `mean_out` and `rstd_out`: kernels.py declares no row
            // count divisible by 16.
            aligned: quote!(x, y, w, b),
            fast_math: false,
            item: quote! {
                fn layernorm<const BC: usize>(#layernorm_params) {
                    #layernorm_start
                    let blocks = cdiv(cols, BC);
                    let vx = partition_view(x, [1, BC]);
                    let mut sum = zeros::<f32>([1, BC]);
                    for c in 0..blocks {
                        sum = sum + vx.load_masked(row, c);
                    }
                    let mean = sum.sum_keepdim(1) / n;
                    let mut squares = zeros::<f32>([1, BC]);
                    for c in 0..blocks {
                        let inside = iota::<i32>([1, BC]) + c * BC < cols;
                        let d = select(inside, vx.load_masked(row, c) - mean, zeros::<f32>([1, BC]));
                        squares = squares + d * d;
                    }
                    let rstd = (squares.sum_keepdim(1) / n + eps).rsqrt();
                    partition_view(mean_out, [1]).store(mean.reshape([1]), row);
                    partition_view(rstd_out, [1]).store(rstd.reshape([1]), row);
                    let (vw, vb, vy) = (partition_view(w, [BC]), partition_view(b, [BC]), partition_view(y, [1, BC]));
                    for c in 0..blocks {
                        let t = vx.load_masked(row, c);
                        vy.store_masked(fma((t - mean) * rstd, vw.load_masked(c), vb.load_masked(c)), row, c);
                    }
                }
            },
        },
        Kernel {
            // The same with the whole row (up to 1024 columns) in one tile.
            name: "layernorm_1block",
            warps: 4,
            configs: quote!(configs(BC = 1024)),
            // Not `mean_out` and `rstd_out`: kernels.py declares no row
            // count divisible by 16.
            aligned: quote!(x, y, w, b),
            fast_math: false,
            item: quote! {
                fn layernorm_1block<const BC: usize>(#layernorm_params) {
                    #layernorm_start
                    let t = partition_view(x, [1, BC]).load_masked(row, 0);
                    let mean = t.sum_keepdim(1) / n;
                    let inside = iota::<i32>([1, BC]) < cols;
                    let centered = select(inside, t - mean, zeros::<f32>([1, BC]));
                    let rstd = ((centered * centered).sum_keepdim(1) / n + eps).rsqrt();
                    partition_view(mean_out, [1]).store(mean.reshape([1]), row);
                    partition_view(rstd_out, [1]).store(rstd.reshape([1]), row);
                    let wt = partition_view(w, [BC]).load_masked(0);
                    let bt = partition_view(b, [BC]).load_masked(0);
                    partition_view(y, [1, BC]).store_masked(fma(centered * rstd, wt, bt), row, 0);
                }
            },
        },
        matmul(4),
    ]
}

/// The targets ours are compiled for: NVPTX as Triton's, both AMDGPU
/// families (CDNA 3's MFMA and RDNA 3's WMMA run the f16 matmuls' dots), and
/// one host level.
const TARGETS: [&str; 4] = ["sm_80", "gfx942", "gfx1100", "x86_64-v3"];

/// Triton's times of one kernel, in seconds.
struct TritonTimes {
    first: f64,
    median: f64,
    to_ptx: f64,
}

/// The header line and each kernel's times in a file of
/// `scripts/triton_compile_times.py`.
fn read_triton_times(path: &str) -> (String, Vec<(String, TritonTimes)>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let header = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("# ");
    let rows = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let number = |i: usize| -> f64 {
                fields
                    .get(i)
                    .and_then(|f| f.parse().ok())
                    .unwrap_or_else(|| panic!("{path}: a malformed line: {line}"))
            };
            let times = TritonTimes {
                first: number(2),
                median: number(3),
                to_ptx: number(4),
            };
            (fields[0].to_string(), times)
        })
        .collect();
    (header.to_string(), rows)
}

/// The median of `runs` expansions of `kernel` for `target`, the cache off.
fn expansion_time(kernel: &Kernel, target: &str, runs: usize) -> Duration {
    let options = ExpandOptions {
        env_targets: Some(EnvTargets::tile_targets(target)),
        ..ExpandOptions::default()
    };
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let out = tile_kernel(kernel.attr(), kernel.item.clone(), &options).to_string();
            let time = start.elapsed();
            assert!(
                !out.contains("compile_error"),
                "{} for {target}: {out}",
                kernel.label()
            );
            time
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --all-targets` runs bench binaries too, without `--bench`.
    if !args.iter().any(|a| a == "--bench") {
        println!("run with scripts/compile-vs-triton.sh");
        return;
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    let Some(path) = value("--triton-times") else {
        eprintln!("usage: cargo bench --bench compile_vs_triton -- --triton-times FILE [--runs N] (scripts/compile-vs-triton.sh makes the file)");
        std::process::exit(2);
    };
    let runs: usize = value("--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
        .max(1);
    let (header, triton) = read_triton_times(path);
    // `--kernels`/`--targets`: the names given, in the order of the lists above.
    let chosen =
        |flag: &str, name: &str| value(flag).is_none_or(|list| list.split(',').any(|n| n == name));
    let targets: Vec<&str> = TARGETS
        .into_iter()
        .filter(|t| chosen("--targets", t))
        .collect();
    let all_kernels = kernels();
    let kernels: Vec<&Kernel> = all_kernels
        .iter()
        .filter(|k| chosen("--kernels", &k.label()))
        .collect();
    if targets.is_empty() || kernels.is_empty() {
        let all: Vec<String> = all_kernels.iter().map(Kernel::label).collect();
        eprintln!(
            "no kernel or no target left: the kernels are {}; the targets {}",
            all.join(", "),
            TARGETS.join(", ")
        );
        std::process::exit(2);
    }
    let columns = |width: usize, suffix: &str| -> String {
        targets
            .iter()
            .map(|t| format!("{:>width$}", format!("{t}{suffix}")))
            .collect()
    };
    // LLVM's targets are initialized once per process, by the first kernel.
    expansion_time(kernels[0], &targets.join(","), 1);
    println!("compile time (ms), one kernel for one target, cold caches, medians of {runs} in a warm process");
    println!("Triton: {header}; \"to PTX\" leaves out its ptxas and its cache writes");
    println!("tile: the #[tile_kernel] expansion (Rust source to PTX / code object / shared object), its cache off; /PTX: over Triton's time to PTX; /Triton: over its whole compile");
    println!(
        "{:<26} {:>5} {:>10} {:>7} {:>7} {}  {} {}",
        "kernel",
        "warps",
        "Triton 1st",
        "Triton",
        "to PTX",
        columns(10, ""),
        columns(11, "/PTX"),
        columns(14, "/Triton"),
    );
    let ms = |seconds: f64| seconds * 1e3;
    for &kernel in &kernels {
        let Some((_, times)) = triton.iter().find(|(name, _)| name == kernel.name) else {
            println!("{:<26} (not in {path})", kernel.label());
            continue;
        };
        let ours: Vec<f64> = targets
            .iter()
            .map(|target| expansion_time(kernel, target, runs).as_secs_f64())
            .collect();
        let row = |f: &dyn Fn(f64) -> String| ours.iter().map(|&t| f(t)).collect::<String>();
        println!(
            "{:<26} {:>5} {:>10.1} {:>7.1} {:>7.1} {}  {} {}",
            kernel.label(),
            kernel.warps,
            ms(times.first),
            ms(times.median),
            ms(times.to_ptx),
            row(&|t| format!("{:>10.1}", ms(t))),
            row(&|t| format!("{:>11.2}", t / times.to_ptx)),
            row(&|t| format!("{:>14.2}", t / times.median)),
        );
    }
}
