//! The demo: every example kernel on the best device, checked against plain
//! Rust on random inputs whose shapes leave partial edge tiles, with a table
//! of kernel, device, shape, check and time.
//!
//! The kernels (in `examples/kernels/`) are written with `#[tile_kernel]`:
//! `cargo build` compiles them, and their launchers run them on the device.
//! Each also runs alone: `cargo run --release --example attention`.
//!
//! `demo --check [--json FILE]` is the GPU bundle's correctness check
//! (`scripts/gpu-bundle.sh`): every example on the best GPU and on the CPU
//! device of the same process, pass or fail per item.

#[path = "kernels/atomics.rs"]
mod atomics;
#[path = "kernels/attention.rs"]
mod attention;
#[path = "common/check.rs"]
mod check;
#[path = "kernels/checked.rs"]
mod checked;
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
#[allow(dead_code)] // its list of kernels is for the stand-ins' images
#[path = "common/runtime_checks.rs"]
mod runtime_checks;
#[path = "kernels/scaled_matmul.rs"]
mod scaled_matmul;
#[path = "kernels/softmax.rs"]
mod softmax;
#[path = "kernels/transpose.rs"]
mod transpose;
#[path = "kernels/vector_add.rs"]
mod vector_add;

use common::Example;
use std::process::ExitCode;

/// The examples by name, in the table's order.
const EXAMPLES: [(&str, Example); 13] = [
    ("vector_add", vector_add::run),
    ("softmax", softmax::run),
    ("layernorm", layernorm::run),
    ("layernorm_backward", layernorm_backward::run),
    ("matmul", matmul::run),
    ("scaled_matmul", scaled_matmul::run),
    ("persistent", persistent::run),
    ("grouped", grouped::run),
    ("transpose", transpose::run),
    ("packed", packed::run),
    ("attention", attention::run),
    ("atomics", atomics::run),
    ("checked", checked::run),
];

fn main() -> Result<ExitCode, tile::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {
            let runs: Vec<Example> = EXAMPLES.iter().map(|&(_, run)| run).collect();
            common::run_examples(&runs).map(|()| ExitCode::SUCCESS)
        }
        ["--check"] => Ok(check::check(&EXAMPLES, None)),
        ["--check", "--json", file] => Ok(check::check(&EXAMPLES, Some(file))),
        _ => {
            eprintln!("usage: demo [--check [--json FILE]]");
            Ok(ExitCode::from(2))
        }
    }
}
