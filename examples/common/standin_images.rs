//! The examples' kernels the driver stand-ins (`tile-standin`) run, with
//! the targets of the stand-in devices; their emulation images are
//! written by `emulation_images.rs`. `tests/standin.rs` and the GPU
//! bundle's smoke run (`examples/standin_images.rs`) use it; it needs
//! LLVM, so it runs where `tile` builds.

#[path = "emulation_images.rs"]
mod emulation_images;

pub use emulation_images::write_images;
use tile::meta::KernelInfo;
use tile_codegen::{Gfx, Sm, Target};

/// The targets the stand-in devices report (their defaults).
pub const TARGETS: [Target; 2] = [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)];

/// The targets a Hopper stand-in (`TILE_STANDIN_SM=90`) runs: sm_90's PTX,
/// and sm_90a's (`wgmma`) for the kernels built for it.
pub const HOPPER: [Target; 2] = [Target::Nvptx(Sm::Sm90), Target::Nvptx(Sm::Sm90a)];

/// The targets a Blackwell stand-in (`TILE_STANDIN_SM=100`) runs: for a
/// kernel built for the default targets sm_90's PTX, the newest plain PTX
/// a default build embeds (the driver compiles it for the device), and
/// sm_100a's (`tcgen05.mma`) for the kernels built for it.
pub const BLACKWELL: [Target; 2] = [Target::Nvptx(Sm::Sm90), Target::Nvptx(Sm::Sm100a)];

/// The targets the newest stand-ins run for the kernels built for them
/// ([`tutorial_matmuls`]): sm_120a (RTX 50, `TILE_STANDIN_SM=120`; every
/// other kernel on sm_90's PTX as on Blackwell), gfx950 (CDNA 4,
/// `TILE_STANDIN_GFX=gfx950`) and gfx1200 (RDNA 4, `gfx1200`).
pub const NEWEST: [Target; 3] = [
    Target::Nvptx(Sm::Sm120a),
    Target::Amdgpu(Gfx::Gfx950),
    Target::Amdgpu(Gfx::Gfx1200),
];

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
        &crate::matmul::linear_tf32::<128, 128, 32>::INFO,
        &crate::scaled_matmul::matmul_mxfp8::<64, 64, 64>::INFO,
        &crate::scaled_matmul::matmul_mxfp4::<64, 64, 64>::INFO,
        &crate::scaled_matmul::matmul_nvfp4::<64, 64, 64>::INFO,
        &crate::scaled_matmul::matmul_bf16_mxfp4::<64, 64, 64>::INFO,
        &crate::persistent::matmul_persistent::<64, 64, 32, 4>::INFO,
        &crate::grouped::grouped_matmul::<64, 64, 32>::INFO,
        &crate::transpose::transpose::<32, 32>::INFO,
        &crate::transpose::transpose_lview::<224, 160, 32, 32>::INFO,
        &crate::packed::mean_pool::<16, 64>::INFO,
        &crate::attention::attention::<16, 16, 64>::INFO,
        &crate::attention::attention_f16::<64, 32, 64>::INFO,
    ]
}

/// The tutorial-sized matmuls (f16 and bf16), built for every target with
/// tensor cores.
pub fn tutorial_matmuls() -> [&'static KernelInfo; 2] {
    [
        &crate::matmul::matmul_f16_large::<128, 128, 64>::INFO,
        &crate::matmul::matmul_bf16_large::<128, 128, 64>::INFO,
    ]
}

/// The matmuls of the examples, which a Hopper stand-in runs.
pub fn matmuls() -> [&'static KernelInfo; 9] {
    [
        &crate::matmul::matmul::<32, 32, 16>::INFO,
        &crate::matmul::matmul_f16::<32, 32, 16>::INFO,
        &crate::matmul::matmul_f8::<64, 64, 64>::INFO,
        &crate::matmul::linear_f8::<128, 128, 128>::INFO,
        &crate::matmul::linear_tf32::<128, 128, 32>::INFO,
        &crate::matmul::matmul_f16_tma::<128, 128, 64>::INFO,
        &crate::matmul::matmul_f16_large::<128, 128, 64>::INFO,
        &crate::matmul::matmul_bf16_large::<128, 128, 64>::INFO,
        &crate::persistent::matmul_persistent::<64, 64, 32, 4>::INFO,
    ]
}
