//! Finishing an LLVM module, the same way for every target: verify it, keep
//! its text, run LLVM's optimization pipeline (a GPU's followed by
//! [`crate::sink`], NVPTX's also by [`crate::loop_sink`]), keep the text
//! again.

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
    // NVPTX has no rematerialization before ptxas; AMDGPU's scheduler has
    // it, and tracks pressure, but from the thread program's order (a tile
    // op for all of a thread's elements at once) it leaves values live far
    // longer than the order of first uses does (docs/backends.md, "Pure
    // instructions at their first use").
    match machine.target() {
        crate::Target::Nvptx(_) => {
            crate::loop_sink::sink_past_inner_loops(module);
            crate::dominator_sink::sink_to_dominating_block(module);
            crate::sink::sink_to_uses(module);
        }
        crate::Target::Amdgpu(_) => {
            crate::dominator_sink::sink_to_dominating_block(module);
            crate::sink::sink_to_uses(module);
        }
        crate::Target::Host(_) => {}
    }
    Ok(ModuleText {
        llvm_ir,
        llvm_ir_opt: module.print_to_string().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gfx, Sm, Target};
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;
    use tile_abi::HostIsa;

    /// Two values computed op by op, as the thread program orders them,
    /// then stored: the optimized text for `target`.
    fn finished(target: Target) -> String {
        let ir = "define void @f(ptr noalias %p, ptr noalias %q, ptr noalias %r) {
  %a = load float, ptr %p
  %b = load i32, ptr %q
  %x = fmul float %a, 3.0
  %y = xor i32 %b, 5
  store float %x, ptr %r
  %yr = getelementptr i32, ptr %r, i64 1
  store i32 %y, ptr %yr
  ret void
}
";
        let ctx = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "m");
        let module = ctx.create_module_from_ir(buffer).unwrap();
        let machine = Machine::new(target, OptimizationLevel::Default).unwrap();
        let text = finish(&module, &machine, "f", OptimizationLevel::Default).unwrap();
        text.llvm_ir_opt
    }

    /// Whether the second value is computed after the first store.
    fn second_value_after_first_store(text: &str) -> bool {
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{needle}:\n{text}"))
        };
        at("xor i32 %b") > at("store float %x")
    }

    /// Both GPU back ends start from the order of first uses; the host's
    /// code keeps LLVM's.
    #[test]
    fn gpu_modules_compute_each_value_at_its_first_use() {
        assert!(second_value_after_first_store(&finished(Target::Nvptx(
            Sm::Sm80
        ))));
        assert!(second_value_after_first_store(&finished(Target::Amdgpu(
            Gfx::Gfx942
        ))));
        assert!(!second_value_after_first_store(&finished(Target::Host(
            HostIsa::X86_64
        ))));
    }
}
