//! Emulation images of the examples' GPU images for the driver stand-ins
//! (`tile-standin`), which run a launch through the emulation image stored
//! under the key of the image the runtime loaded: each rebuilt from its
//! specialization's embedded tile IR, checked to equal the embedded image,
//! and written into a directory. `tests/standin.rs` and the GPU bundle's
//! smoke run (`examples/standin_images.rs`) use it; it needs LLVM, so it
//! runs where `tile` builds.

use std::path::Path;
use tile::meta::KernelInfo;
use tile_codegen::pipeline::{self, Options};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};

/// The targets the stand-in devices report (their defaults).
pub const TARGETS: [Target; 2] = [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)];

/// The targets a Hopper stand-in (`TILE_STANDIN_SM=90`) runs: sm_90's PTX,
/// and sm_90a's (`wgmma`) for the kernels built for it.
pub const HOPPER: [Target; 2] = [Target::Nvptx(Sm::Sm90), Target::Nvptx(Sm::Sm90a)];

/// The example kernels the stand-ins run at their default targets (the
/// FP8 and TMA matmuls need Hopper: [`matmuls`]).
pub fn example_kernels() -> Vec<&'static KernelInfo> {
    vec![
        &crate::atomics::histogram::<256>::INFO,
        &crate::atomics::matmul_split_k::<32, 32, 16, 4>::INFO,
        &crate::atomics::embedding::<32>::INFO,
        &crate::atomics::embedding_backward::<32>::INFO,
        &crate::checked::normalize_rows::<4, 128>::INFO,
        &crate::checked::embedding_checked::<32>::INFO,
        &crate::vector_add::vector_add::<1024>::INFO,
        &crate::softmax::softmax::<4, 256>::INFO,
        &crate::layernorm::layernorm::<8, 384>::INFO,
        &crate::layernorm_backward::layernorm_backward::<256, 4>::INFO,
        &crate::layernorm_backward::layernorm_backward_dwdb::<4, 256>::INFO,
        &crate::matmul::matmul::<32, 32, 16>::INFO,
        &crate::matmul::matmul_f16::<32, 32, 16>::INFO,
        &crate::matmul::matmul_f16_large::<128, 128, 64>::INFO,
        &crate::matmul::matmul_bf16_large::<128, 128, 64>::INFO,
        &crate::persistent::matmul_persistent::<64, 64, 32, 4>::INFO,
        &crate::transpose::transpose::<32, 32>::INFO,
        &crate::transpose::transpose_lview::<224, 160, 32, 32>::INFO,
        &crate::attention::attention::<16, 16, 64>::INFO,
        &crate::attention::attention_f16::<64, 32, 64>::INFO,
    ]
}

/// The matmuls of the examples, which a Hopper stand-in runs.
pub fn matmuls() -> [&'static KernelInfo; 7] {
    [
        &crate::matmul::matmul::<32, 32, 16>::INFO,
        &crate::matmul::matmul_f16::<32, 32, 16>::INFO,
        &crate::matmul::matmul_f8::<64, 64, 64>::INFO,
        &crate::matmul::matmul_f16_tma::<128, 128, 64>::INFO,
        &crate::matmul::matmul_f16_large::<128, 128, 64>::INFO,
        &crate::matmul::matmul_bf16_large::<128, 128, 64>::INFO,
        &crate::persistent::matmul_persistent::<64, 64, 32, 4>::INFO,
    ]
}

/// Writes the emulation image of every specialization's device image for
/// each of `targets` into `dir`, under the key the stand-ins look it up
/// by; returns how many.
pub fn write_images(dir: &Path, kernels: &[&KernelInfo], targets: &[Target]) -> usize {
    let mut written = 0;
    for info in kernels {
        for spec in info.specializations {
            for &target in targets {
                let name = target.to_string();
                let Some(embedded) = spec.images.iter().find(|i| i.target == name) else {
                    continue;
                };
                let func = tile::ir::text::parse_function(spec.ir).expect("the embedded tile IR");
                // A kernel compiled with `tma` says so in its images: the
                // tensor maps they take.
                let ptx = std::str::from_utf8(embedded.bytes).unwrap_or_default();
                let tma = !tile_abi::tma::maps_of_ptx(ptx)
                    .unwrap_or_default()
                    .is_empty();
                let options = Options {
                    targets: vec![target],
                    num_warps: info.num_warps,
                    codegen: CodegenOptions {
                        tma,
                        ..CodegenOptions::default()
                    },
                    dump_dir: None,
                    cache: None,
                    max_threads: None,
                    num_stages: info.num_stages,
                };
                let built = pipeline::emulate(&func, spec.label, target, &options)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    built.device.bytes == embedded.bytes,
                    "{} ({}): the {name} image rebuilt from the embedded tile IR differs from the embedded one",
                    info.name,
                    spec.label
                );
                let key = tile_standin::image_key(embedded.bytes);
                std::fs::write(
                    dir.join(format!("{key}.so")),
                    &built.emulation.shared_object,
                )
                .expect("writing an image");
                written += 1;
            }
        }
    }
    written
}
