//! The host's cost of a launch through `tile`'s runtime against a raw
//! `cuLaunchKernel` of the same kernel, in one run, on the CUDA driver
//! stand-in with launches checked but not run (`TILE_STANDIN_LAUNCH=check`:
//! emulating the kernel would dwarf what is measured); the measurement is
//! `examples/common/launch_overhead.rs`, which the GPU bundle also runs on
//! a GPU. This sets up the stand-in and the kernel's emulation image, then
//! measures in a child process (this binary again) with the stand-in as
//! the driver.
//!
//! `cargo bench --bench launch_overhead` (the figures depend on the host;
//! docs/benchmarks.md has a run's).

#[allow(dead_code)] // the examples' helpers this one does not use
#[path = "../examples/common/mod.rs"]
mod common;
#[path = "../examples/common/emulation_images.rs"]
mod emulation_images;
#[path = "../examples/common/launch_overhead.rs"]
mod launch_overhead;
#[allow(dead_code)] // only its kernel is used here
#[path = "../examples/kernels/vector_add.rs"]
mod vector_add;

use std::path::PathBuf;
use std::process::Command;
use tile::runtime::driver::GpuApi;
use tile_codegen::{Sm, Target};

/// Set in the child process, which measures.
const CHILD_ENV: &str = "TILE_LAUNCH_OVERHEAD_CHILD";

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        match launch_overhead::measure() {
            Ok(table) => print!("{table}"),
            Err(why) => panic!("launch overhead: {why}"),
        }
        return;
    }
    let exe = std::env::current_exe().expect("this bench's path");
    let standin = exe
        .parent()
        .expect("the deps directory")
        .join("libtile_standin.so");
    let dir = std::env::temp_dir().join(format!("tile-launch-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    for name in GpuApi::Cuda.libraries() {
        std::fs::copy(&standin, dir.join(name)).expect("copying the stand-in");
    }
    let kernels = [&vector_add::vector_add::<1024>::INFO];
    let written = emulation_images::write_images(&dir, &kernels, &[Target::Nvptx(Sm::Sm80)]);
    assert_eq!(written, 1, "vector add has sm_80 PTX");
    let rest = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(PathBuf::from(&dir)).chain(std::env::split_paths(&rest)),
    )
    .expect("a library path");
    let status = Command::new(&exe)
        .env(CHILD_ENV, "1")
        .env("LD_LIBRARY_PATH", path)
        .env(tile_standin::IMAGES_ENV, &dir)
        .env(tile_standin::LAUNCH_ENV, "check")
        .status()
        .expect("running the measurement");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success(), "the measurement failed");
}
