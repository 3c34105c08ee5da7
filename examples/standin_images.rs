//! Writes the emulation images the driver stand-ins need to run every
//! example kernel (`examples/common/standin_images.rs`) and every benchmark
//! kernel of `gpu_bench` (`examples/bench/`) into a directory:
//! what the GPU bundle's smoke run (`scripts/gpu-bundle.sh`) carries. It
//! links LLVM, so it runs where `tile` builds, not on the GPU machine.
//!
//! `cargo run --example standin_images -- DIR`

// Only the kernels' metadata is used here, not the examples' runners.
#![allow(dead_code)]

#[path = "kernels/atomics.rs"]
mod atomics;
#[path = "kernels/attention.rs"]
mod attention;
#[path = "bench/mod.rs"]
mod bench;
#[path = "kernels/checked.rs"]
mod checked;
#[allow(dead_code)] // the examples' `main` helpers are not used here
mod common;
#[path = "kernels/grouped.rs"]
mod grouped;
#[path = "kernels/layernorm.rs"]
mod layernorm;
#[path = "kernels/layernorm_backward.rs"]
mod layernorm_backward;
#[path = "kernels/matmul.rs"]
mod matmul;
#[path = "kernels/packed.rs"]
mod packed;
#[path = "kernels/persistent.rs"]
mod persistent;
#[path = "common/runtime_checks.rs"]
mod runtime_checks;
#[path = "kernels/scaled_matmul.rs"]
mod scaled_matmul;
#[path = "kernels/softmax.rs"]
mod softmax;
#[path = "common/standin_images.rs"]
mod standin_images;
#[path = "kernels/transpose.rs"]
mod transpose;
#[path = "kernels/vector_add.rs"]
mod vector_add;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: standin_images DIR");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("creating {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let mut kernels = standin_images::example_kernels();
    kernels.extend(runtime_checks::kernels());
    kernels.extend(bench::kernels());
    let written = standin_images::write_images(&dir, &kernels, &standin_images::TARGETS)
        + standin_images::write_images(&dir, &standin_images::matmuls(), &standin_images::HOPPER)
        // The benchmarks run on the default CUDA stand-in only.
        + standin_images::write_images(&dir, &bench::kernels(), &standin_images::TARGETS[..1]);
    println!("{written} emulation images in {}", dir.display());
    ExitCode::SUCCESS
}
