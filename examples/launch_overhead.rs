//! The host's cost of a `tile` launch against a raw `cuLaunchKernel` of
//! the same kernel, on CUDA device 0 (`examples/common/launch_overhead.rs`
//! says how it is measured). On a machine with a CUDA driver:
//! `cargo run --release --example launch_overhead`; the GPU bundle runs it
//! as `bin/launch_overhead`, and `cargo bench --bench launch_overhead`
//! runs the same measurement on the driver stand-in.

#[allow(dead_code)] // the examples' helpers this one does not use
mod common;
#[path = "common/launch_overhead.rs"]
mod launch_overhead;
#[allow(dead_code)] // only its kernel is used here
#[path = "kernels/vector_add.rs"]
mod vector_add;

use std::process::ExitCode;

fn main() -> ExitCode {
    match launch_overhead::measure() {
        Ok(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("launch overhead: {why}");
            ExitCode::FAILURE
        }
    }
}
