//! The corpus of kernels ported from public Triton code
//! (`examples/corpus/`): each passes its check against plain Rust on the
//! CPU device, and on the CUDA and HIP driver stand-ins (`tile-standin`),
//! which run its sm_80 PTX and gfx942 code object through the emulation
//! target, so the GPU code every kernel compiles to is checked too.
//!
//! Driver libraries are opened once per process, so the stand-in runs
//! happen in a child process (this test binary again, running the ignored
//! test [`corpus_on_the_stand_ins`]) with the environment set.

#[allow(dead_code)] // the examples' `main` helpers are not used here
#[path = "../examples/common/mod.rs"]
mod common;
#[path = "support/compile.rs"]
mod compile;
#[path = "../examples/corpus/mod.rs"]
mod corpus;
#[path = "../examples/common/emulation_images.rs"]
mod emulation_images;
#[path = "support/standin_child.rs"]
mod standin_child;

use common::Inputs;
use tile::{Device, KernelCode};
use tile_codegen::{Gfx, Sm, Target};

/// The name of the child test.
const CHILD: &str = "corpus_on_the_stand_ins";

/// Runs every kernel of the corpus on `dev`; each must pass its check and
/// run as `code`.
fn corpus_on(dev: &Device, code: KernelCode) {
    let mut rows = Vec::new();
    for run in corpus::RUNS {
        rows.extend(run(dev, &mut Inputs::default()).expect("the kernel runs"));
    }
    assert!(common::print_table(dev, &rows), "a check failed on {dev}");
    for row in &rows {
        assert_eq!(row.code, code, "{} on {dev}", row.kernel);
    }
}

#[test]
fn the_corpus_passes_its_checks_on_the_cpu() {
    let best =
        tile::runtime::cpu::HostIsa::best_here().map_or(KernelCode::Interpreter, KernelCode::Host);
    corpus_on(&Device::cpu(), best);
}

#[test]
fn the_corpus_runs_through_the_driver_stand_ins() {
    use tile::runtime::driver::GpuApi;
    let dir = standin_child::standin_dir("corpus", &[GpuApi::Cuda, GpuApi::Hip]);
    let targets = [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)];
    let written = emulation_images::write_images(&dir.0, &corpus::kernels(), &targets);
    assert_eq!(
        written, 54,
        "twenty-seven specializations have sm_80 PTX and gfx942 code objects"
    );
    standin_child::run_child(&dir.0, CHILD, &[]);
}

#[test]
#[ignore = "run by the_corpus_runs_through_the_driver_stand_ins, with the stand-ins as the drivers"]
fn corpus_on_the_stand_ins() {
    let cuda = Device::best().expect("a device");
    assert_eq!(
        cuda.to_string(),
        "cuda:0",
        "the CUDA stand-in is the best device"
    );
    corpus_on(&cuda, KernelCode::Gpu("sm_80"));
    corpus_on(
        &Device::hip(0).expect("the HIP stand-in"),
        KernelCode::Gpu("gfx942"),
    );
}

/// Liger's JSD at its own block (a loop of masked loads and stores of
/// 32768-column blocks on 4 warps) builds for gfx942 without spilling a
/// VGPR, as Triton's build does: the registers of each access share one
/// position and add their constants as immediate offsets (docs/lowering.md,
/// "Loads and stores"). It spilled 41 VGPRs while each register kept its
/// own 64-bit position through the loop.
#[test]
fn jsd_fits_gfx942_registers() {
    let kernels = corpus::kernels();
    let info = kernels.iter().find(|k| k.name == "jsd").expect("the JSD");
    let usage = compile::registers(info, "BLOCK=32768", Target::Amdgpu(Gfx::Gfx942)).unwrap();
    assert!(!usage.spills(), "{usage:?}");
}
