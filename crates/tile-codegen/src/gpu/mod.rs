//! The GPU emitter: a thread-level program (`tile_thread::Program`) to an
//! LLVM 19 module for NVPTX or AMDGPU, then to PTX, AMDGPU assembly and a
//! linked code object (HSACO).
//!
//! What the targets share is written once: the kernel function and its
//! parameters (`kernel`), global and shared memory and bounds checks
//! (`memory`), structured control flow (`control`), and scalar code from the
//! scalar emitter ([`crate::scalar`]). What differs is mapped in one place
//! per concern: thread and block ids, barriers and the kernel calling
//! convention (`intrinsics`), and warp shuffles (`shuffle`).
//!
//! The kernel ABI is `tile_abi::params`: the tile-IR parameters in order (a
//! tensor of rank r as its base pointer, r `i32` extents and r `i64` strides
//! in elements; a scalar as its value), then a pointer to the status record
//! (`tile_abi::status`), where the first failed bounds check stores
//! `FaultCode::OutsideTensor`, its position among the kernel's checks and
//! its partition indices.

mod control;
mod intrinsics;
mod kernel;
mod memory;
mod shuffle;

pub use intrinsics::GpuTarget;

use crate::diagnostics::Diagnostics;
use crate::module;
use crate::scalar::ScalarEmitter;
use crate::target::{Machine, Target};
use crate::tools;
use crate::{CodegenOptions, EmitError};
use inkwell::context::Context;
use std::ops::Deref;
use tile_thread::program::Program;

/// The output of [`emit`] for one target.
#[derive(Clone, Debug)]
pub struct Emitted {
    /// The target.
    pub target: Target,
    /// The LLVM IR as emitted, before optimization.
    pub llvm_ir: String,
    /// The LLVM IR after LLVM's optimization pipeline.
    pub llvm_ir_opt: String,
    /// PTX (NVPTX) or AMDGPU assembly.
    pub assembly: String,
    /// The linked AMDGPU code object (HSACO); `None` for NVPTX, whose PTX
    /// the CUDA driver compiles.
    pub code_object: Option<Vec<u8>>,
    /// The tile-IR ops of the program's bounds checks, in the order of the
    /// status record's `check` field.
    pub bounds_checks: Vec<String>,
}

/// Emits `program` for the GPU `target`: verified LLVM IR, optimized, then
/// PTX or AMDGPU assembly, and for AMDGPU the code object linked by `ld.lld`.
pub fn emit(
    program: &Program,
    target: Target,
    options: &CodegenOptions,
) -> Result<Emitted, EmitError> {
    let gpu = GpuTarget::of(target).ok_or(EmitError::NotGpu { target })?;
    let machine = Machine::new(target, options.opt_level)?;
    let ctx = Context::create();
    let diagnostics = Diagnostics::install(&ctx);
    let module = ctx.create_module(&program.name);
    machine.configure(&module);
    let emitter = GpuEmitter {
        s: ScalarEmitter::new(&ctx, &module, options.fast_math),
        gpu,
    };
    let bounds_checks = emitter.kernel(program)?;
    let text = module::finish(&module, &machine, &program.name, options.opt_level)?;
    // Code generation rewrites the module (AMDGPU's control-flow
    // annotation, for one), so each output starts from its own copy.
    let assembly = machine.emit_assembly(&module.clone())?;
    let object = match target {
        Target::Amdgpu(_) => Some(machine.emit_object(&module)?),
        _ => None,
    };
    if let Some(message) = diagnostics.take_errors() {
        return Err(EmitError::Backend {
            kernel: program.name.clone(),
            target,
            message,
        });
    }
    let code_object = object
        .map(|object| tools::link_shared_object(&object))
        .transpose()?;
    Ok(Emitted {
        target,
        llvm_ir: text.llvm_ir,
        llvm_ir_opt: text.llvm_ir_opt,
        assembly,
        code_object,
        bounds_checks,
    })
}

/// The scalar emitter with the GPU target it emits for.
pub(crate) struct GpuEmitter<'a, 'ctx> {
    s: ScalarEmitter<'a, 'ctx>,
    gpu: GpuTarget,
}

impl<'a, 'ctx> Deref for GpuEmitter<'a, 'ctx> {
    type Target = ScalarEmitter<'a, 'ctx>;

    fn deref(&self) -> &Self::Target {
        &self.s
    }
}
