//! Finishing an LLVM module, the same way for every target: verify it, keep
//! its text, run LLVM's optimization pipeline (NVPTX's followed by
//! [`crate::sink`]), keep the text again.

use crate::options::llvm_pipeline;
use crate::target::Machine;
use crate::EmitError;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::OptimizationLevel;

/// The LLVM IR of a finished module, before and after optimization.
pub(crate) struct ModuleText {
    /// As emitted.
    pub(crate) llvm_ir: String,
    /// After LLVM's pipeline.
    pub(crate) llvm_ir_opt: String,
}

/// Verifies `module` (kernel `kernel` for `machine`'s target), then
/// optimizes it with the pipeline of `level`.
pub(crate) fn finish(
    module: &Module<'_>,
    machine: &Machine,
    kernel: &str,
    level: OptimizationLevel,
) -> Result<ModuleText, EmitError> {
    module.verify().map_err(|m| EmitError::Verify {
        kernel: kernel.to_string(),
        target: machine.target(),
        message: m.to_string(),
    })?;
    let llvm_ir = module.print_to_string().to_string();
    module
        .run_passes(
            llvm_pipeline(level),
            machine.llvm(),
            PassBuilderOptions::create(),
        )
        .map_err(|m| EmitError::Optimize {
            target: machine.target(),
            message: m.to_string(),
        })?;
    if matches!(machine.target(), crate::Target::Nvptx(_)) {
        crate::loop_sink::sink_past_inner_loops(module);
        crate::sink::sink_to_uses(module);
    }
    Ok(ModuleText {
        llvm_ir,
        llvm_ir_opt: module.print_to_string().to_string(),
    })
}
