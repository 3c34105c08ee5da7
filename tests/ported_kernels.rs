//! Ported kernels: Triton kernels from public sources (Liger-Kernel,
//! FlagGems, vLLM, SGLang), ported one for one from their semantics at their
//! published block sizes and warp counts, each checked against plain Rust in
//! f64 on the CPU device and, as tests/corpus.rs does, through the CUDA
//! (sm_80) and HIP (gfx942) driver stand-ins. A module per source, under
//! `tests/ported_kernels/`:
//!
//! - `liger_group_norm`: Liger-Kernel's GroupNorm forward, and its backward
//!   in f32 and in bf16;
//! - `liger_mrope`: Liger-Kernel's Qwen2-VL M-RoPE;
//! - `flaggems`: FlagGems' `argmax`, `cumsum`, `var_mean` and `topk`;
//! - `flaggems_blas`: FlagGems' `bmm`, `mv` and `addmm`;
//! - `flaggems_select`: FlagGems' `index_select` and `masked_fill`;
//! - `vllm`: vLLM's per-token-group FP8 quantization and block-scaled FP8
//!   matmul, with SGLang's block-scaled INT8 matmul beside it;
//! - `sglang`: SGLang's `moe_align_block_size` and per-token INT8
//!   quantization;
//! - `sglang_attention`: SGLang's `merge_state` and grouped decode attention;
//! - `repro`: reductions of the compiler problems the ports found.
//!
//! Each kernel's header comment names the file and function it ports.
//!
//! A port is a function `<name>_run(&Device)` that launches the kernels and
//! checks their results; [`probe!`] gives it a module `<name>_probe` with
//! three tests. `cpu` runs it on the CPU device. `stand_ins` writes the sm_80
//! and gfx942 emulation images of the kernels into a scratch directory that
//! holds the stand-in under the driver libraries' names
//! (tests/support/standin_child.rs), then runs this test binary again in a
//! child process, that directory first on `LD_LIBRARY_PATH` (a driver
//! library is opened once per process), asking only for the module's
//! ignored `child` test by its exact name: the probe module's
//! `module_path!()` without the crate, so `flaggems::topk_probe::child`.
//! `child` runs the port on the CUDA stand-in and on the HIP one; it is
//! ignored because it only means something in that process.
//!
//! A test that fails because of a compiler or runtime problem is marked
//! `#[ignore = "..."]` naming it: the ignored `repro_*` tests of `repro`
//! name the problems still open, and pass once they are fixed.

#[path = "support/compile.rs"]
mod compile;
#[path = "../examples/common/emulation_images.rs"]
mod emulation_images;
#[path = "support/standin_child.rs"]
mod standin_child;

use tile::meta::KernelInfo;
use tile::{bf16, f16, Device, KernelCode, KernelSpec};
use tile_codegen::{Gfx, Sm, Target};

// ---------------------------------------------------------------------------
// What every probe shares.
// ---------------------------------------------------------------------------

/// Deterministic inputs (xorshift64), values in [-2, 2).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn take(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0)
            .collect()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn bf16s(x: &[f32]) -> Vec<bf16> {
    x.iter().map(|&v| bf16::from_f32(v)).collect()
}

fn f16s(x: &[f32]) -> Vec<f16> {
    x.iter().map(|&v| f16::from_f32(v)).collect()
}

fn wide<T: Copy + Into<f64>>(x: &[T]) -> Vec<f64> {
    x.iter().map(|&v| v.into()).collect()
}

fn wide_bf16(x: &[bf16]) -> Vec<f64> {
    x.iter().map(|v| f64::from(v.to_f32())).collect()
}

fn wide_f16(x: &[f16]) -> Vec<f64> {
    x.iter().map(|v| f64::from(v.to_f32())).collect()
}

/// Panics unless every `got` is within `tol · (1 + |want|)` of `want`,
/// naming the first element that is not.
fn check(what: &str, dev: &Device, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what} on {dev}: lengths differ");
    let mut worst = (0.0f64, 0usize);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = if g == w {
            0.0
        } else {
            (g - w).abs() / (1.0 + w.abs())
        };
        let err = if err.is_nan() { f64::INFINITY } else { err };
        if err > worst.0 {
            worst = (err, i);
        }
    }
    let (err, i) = worst;
    assert!(
        err <= tol,
        "{what} on {dev}: error {err:.3e} > {tol:.1e} at element {i}: got {}, want {}",
        got[i],
        want[i]
    );
}

/// Panics unless `dev` runs `spec` as it should: its host code (or the
/// interpreter) on the CPU, the sm_80 PTX on the CUDA stand-in, the gfx942
/// code object on the HIP one.
fn expect_code(dev: &Device, spec: &KernelSpec) {
    let want = match dev.kind() {
        tile::DeviceKind::Cpu => tile::runtime::cpu::HostIsa::best_here()
            .map_or(KernelCode::Interpreter, KernelCode::Host),
        tile::DeviceKind::Cuda => KernelCode::Gpu("sm_80"),
        tile::DeviceKind::Hip => KernelCode::Gpu("gfx942"),
    };
    assert_eq!(
        dev.kernel_code(spec).expect("a kernel code"),
        want,
        "on {dev}"
    );
}

fn on_cpu(run: fn(&Device)) {
    run(&Device::cpu());
}

/// Writes the sm_80 and gfx942 emulation images of `kernels` and runs the
/// ignored test `child` of the probe module `module` (its `module_path!()`)
/// with the stand-ins as the drivers.
fn on_stand_ins(module: &str, kernels: &[&KernelInfo]) {
    use tile::runtime::driver::GpuApi;
    // The module's path as the test harness names it: without the crate.
    let path = module.split_once("::").map_or(module, |(_, path)| path);
    let name = path.rsplit("::").next().unwrap_or(path);
    let dir = standin_child::standin_dir(&format!("probe-{name}"), &[GpuApi::Cuda, GpuApi::Hip]);
    let targets = [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)];
    let written = emulation_images::write_images(&dir.0, kernels, &targets);
    let specs: usize = kernels.iter().map(|k| k.specializations.len()).sum();
    assert_eq!(
        written,
        2 * specs,
        "every specialization has sm_80 and gfx942 images"
    );
    standin_child::run_child(&dir.0, &format!("{path}::child"), &[]);
}

/// In the child: the probe on the CUDA stand-in and on the HIP one, both
/// run even when the first fails.
fn in_child(run: fn(&Device)) {
    let mut failed = Vec::new();
    for dev in [Device::cuda(0), Device::hip(0)] {
        let dev = dev.expect("a stand-in device");
        let name = dev.to_string();
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&dev))).is_err() {
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "the probe failed on {failed:?}");
}

/// A module per kernel: `cpu`, `stand_ins` and the ignored `child`, each
/// with the attributes given (an `#[ignore = ".."]` naming a problem). Used
/// in the source modules, which are declared after it.
macro_rules! probe {
    (
        $module:ident, $run:ident, [$($kernel:ty),+ $(,)?]
        $(, cpu: [$(#[$cpu:meta])*])?
        $(, stand_ins: [$(#[$gpu:meta])*])?
    ) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            $($(#[$cpu])*)?
            fn cpu() {
                crate::on_cpu(super::$run);
            }

            #[test]
            $($(#[$gpu])*)?
            fn stand_ins() {
                crate::on_stand_ins(module_path!(), &[$(&<$kernel>::INFO),+]);
            }

            #[test]
            #[ignore = "run by stand_ins, with the stand-ins as the drivers"]
            fn child() {
                crate::in_child(super::$run);
            }
        }
    };
}

// The crate root of a test target resolves `mod` paths beside it, in tests/.
#[path = "ported_kernels/flaggems.rs"]
mod flaggems;
#[path = "ported_kernels/flaggems_blas.rs"]
mod flaggems_blas;
#[path = "ported_kernels/flaggems_select.rs"]
mod flaggems_select;
#[path = "ported_kernels/liger_group_norm.rs"]
mod liger_group_norm;
#[path = "ported_kernels/liger_mrope.rs"]
mod liger_mrope;
#[path = "ported_kernels/repro.rs"]
mod repro;
#[path = "ported_kernels/sglang.rs"]
mod sglang;
#[path = "ported_kernels/sglang_attention.rs"]
mod sglang_attention;
#[path = "ported_kernels/vllm.rs"]
mod vllm;
