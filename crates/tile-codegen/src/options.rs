//! The options of code generation.

use inkwell::OptimizationLevel;

/// Options of code generation, for every target: what changes the code
/// LLVM produces.
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    /// LLVM's optimization level for the module and code generation.
    pub opt_level: OptimizationLevel,
    /// Whether exp, exp2, log, log2, sin, cos, tanh, rsqrt and pow of f32 and
    /// narrower floats use the fast f32 library (within a few ulps, see
    /// docs/backends.md) instead of the exact one (f64, rounded once).
    pub fast_math: bool,
    /// Whether exp, exp2, log, log2, rsqrt and division of f32 and narrower
    /// floats use the GPU's own one-instruction approximations in GPU images
    /// (`ex2.approx.f32`, `v_exp_f32`, ...; docs/backends.md, "Approximate
    /// math"), and tanh is built on them; host images and the other
    /// functions keep what [`fast_math`](Self::fast_math) chooses.
    pub approx_math: bool,
    /// Whether the images for targets with the TMA (sm_90 and later) copy
    /// the operands of pipelined tensor-core loops with it
    /// (`tile_thread::lower::LowerOptions::tma`): the
    /// kernel then takes a tensor map of each such operand's tensor, which
    /// the runtime builds at launch, and those tensors must meet the TMA's
    /// requirements (`tile_abi::tma`).
    pub tma: bool,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            opt_level: OptimizationLevel::Aggressive,
            fast_math: false,
            approx_math: false,
            tma: false,
        }
    }
}

/// LLVM's module pipeline for an optimization level (`default<O3>` for
/// [`OptimizationLevel::Aggressive`]).
pub(crate) fn llvm_pipeline(level: OptimizationLevel) -> &'static str {
    match level {
        OptimizationLevel::None => "default<O0>",
        OptimizationLevel::Less => "default<O1>",
        OptimizationLevel::Default => "default<O2>",
        OptimizationLevel::Aggressive => "default<O3>",
    }
}
