//! Compiling a kernel for the host: the module, LLVM's `O3` pipeline for an
//! instruction-set level, an object file and a shared object linked by
//! lld, in this process.

use super::error::HostError;
use super::kernel::HostKernel;
use super::math;
use crate::diagnostics::Diagnostics;
use crate::module;
use crate::target::{Machine, Target};
use crate::tools;
use crate::{CodegenOptions, EmitError};
use inkwell::context::Context;
use std::borrow::Cow;
use tile_abi::host::FRAME_BYTES_SYMBOL;
use tile_abi::{HostCheck, HostIsa};
use tile_ir::Function;

/// A kernel compiled for the host: a shared object of one instruction-set
/// level, with what the runtime needs to run it.
#[derive(Clone, Debug)]
pub struct HostImage {
    isa: HostIsa,
    shared_object: Vec<u8>,
    checks: Vec<HostCheck>,
    llvm_ir: String,
    llvm_ir_opt: String,
}

/// Compiles `func` (which must pass the verifier) to a shared object for
/// `isa`. The options are those of the GPU targets: the optimization level
/// picks LLVM's pipeline and code generation level (`default<O3>` by
/// default), and [`CodegenOptions::fast_math`] switches f32 and narrower
/// transcendentals to the fast library, the same code the GPUs run, so
/// results are no longer bit for bit the interpreter's but within the
/// library's bounds (docs/backends.md).
pub fn compile(
    func: &Function,
    isa: HostIsa,
    options: &CodegenOptions,
) -> Result<HostImage, HostError> {
    tile_ir::verify::verify(func)?;
    // The host has no block-scaled product or FP4 pair instruction:
    // `dot_scaled`, `unpack_fp4` and `pack_fp4` run as the ops that define
    // them.
    let expanded = tile_ir::passes::expanded_for_lowering(func);
    let func = expanded.as_ref().unwrap_or(func);
    let ctx = Context::create();
    let diagnostics = Diagnostics::install(&ctx);
    let machine = Machine::new(Target::Host(isa), options.opt_level).map_err(EmitError::from)?;
    let module = ctx.create_module(&func.name);
    machine.configure(&module);
    math::declare(&ctx, &module);
    let (frame_bytes, sites) = HostKernel::kernel(&ctx, &module, func, isa, options.fast_math)?;
    math::define(&ctx, &module)?;
    let i64t = ctx.i64_type();
    let frame = module.add_global(i64t, None, FRAME_BYTES_SYMBOL);
    frame.set_initializer(&i64t.const_int(frame_bytes, false));
    frame.set_constant(true);
    let text = module::finish(&module, &machine, &func.name, options.opt_level)?;
    let object = machine.emit_object(&module).map_err(EmitError::from)?;
    if let Some(message) = diagnostics.take_errors() {
        return Err(EmitError::Backend {
            kernel: func.name.clone(),
            target: machine.target(),
            message,
        }
        .into());
    }
    let shared_object = tools::link_shared_object(&object)?;
    let checks = sites
        .into_iter()
        .map(|site| HostCheck {
            op: Cow::Owned(site.describe),
            values: site.values.min(4) as u8,
        })
        .collect();
    Ok(HostImage {
        isa,
        shared_object,
        checks,
        llvm_ir: text.llvm_ir,
        llvm_ir_opt: text.llvm_ir_opt,
    })
}

impl HostImage {
    /// The instruction-set level.
    pub fn isa(&self) -> HostIsa {
        self.isa
    }

    /// The shared object (ELF), as `#[tile_kernel]` embeds it.
    pub fn shared_object(&self) -> &[u8] {
        &self.shared_object
    }

    /// The ops with run-time checks, in the order status records name them.
    pub fn checks(&self) -> &[HostCheck] {
        &self.checks
    }

    /// The module's LLVM IR as emitted.
    pub fn llvm_ir(&self) -> &str {
        &self.llvm_ir
    }

    /// The module's LLVM IR after optimization.
    pub fn llvm_ir_opt(&self) -> &str {
        &self.llvm_ir_opt
    }
}
