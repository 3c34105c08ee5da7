//! The IR emulation target: the exact LLVM module a GPU target receives,
//! run on the CPU.
//!
//! [`compile`] takes a GPU kernel's module as [`crate::gpu::emit_module`]
//! makes it (the module after LLVM's optimization pipeline, from which
//! [`crate::gpu::emit`] generates the PTX or the code object) and moves it to the host: the host's triple and data
//! layout, the target's intrinsics replaced by calls of a small CPU runtime
//! (`intrinsics.rs`, the contract in `tile_abi::emulation`; inline PTX in
//! `asm.rs`), every access of
//! global or shared memory checked first (`instrument.rs`), the shared
//! allocations exported so the runtime can reset them per block, and an
//! entry that reads the parameters from what a driver hands the kernel
//! (`entry.rs`). Everything else (the kernel's arithmetic, its control
//! flow, the GPU math library) runs as the GPU target received it. The
//! module is compiled for this CPU without further optimization and linked
//! into a shared object, which `tile-emu` loads and runs, one coroutine per
//! GPU thread.
//!
//! What this does not execute: instruction selection and register
//! allocation of the GPU backends, `ptxas`, the driver's JIT, and the GPU
//! memory model beyond what barriers order (threads run one at a time).

mod asm;
mod conversions;
mod entry;
mod instrument;
mod intrinsics;
mod mma_intrinsics;
mod tcgen05;

use crate::diagnostics::Diagnostics;
use crate::gpu::GpuModule;
use crate::target::{Machine, SharedPointers, Target};
use crate::tools;
use crate::EmitError;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::BasicTypeEnum;
use inkwell::GlobalVisibility;
use inkwell::{AddressSpace, OptimizationLevel};
use tile_abi::emulation::{ArgsAbi, Manifest, SharedSlot};
use tile_abi::HostIsa;

/// A GPU kernel compiled to run on this CPU.
#[derive(Clone, Debug)]
pub struct EmulationImage {
    /// What the image says about itself (also embedded in it).
    pub manifest: Manifest,
    /// The LLVM IR as compiled for the host, after the replacements.
    pub llvm_ir: String,
    /// The shared object.
    pub shared_object: Vec<u8>,
}

/// Moves `source` (a kernel of a GPU target) to the host and compiles it
/// into an [`EmulationImage`].
pub fn compile(source: &GpuModule) -> Result<EmulationImage, EmitError> {
    let isa = HostIsa::best_here().ok_or_else(|| EmitError::Unsupported {
        what: format!("the emulation target on {}", std::env::consts::ARCH),
    })?;
    let host = Machine::new(Target::Host(isa), OptimizationLevel::None)?;
    let gpu = Machine::new(source.target, OptimizationLevel::None)?;
    let text = retarget(
        &intrinsics::replace(&host_ready_ir(source)?, source.target)?,
        &host,
    );
    let text = define_dynamic_shared(&text, source.dynamic_shared_bytes);
    let ctx = Context::create();
    let diagnostics = Diagnostics::install(&ctx);
    let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), &source.kernel);
    let module = ctx
        .create_module_from_ir(buffer)
        .map_err(|e| EmitError::Internal(format!("the retargeted module does not parse: {e}")))?;
    let host_data = host.llvm().get_target_data();
    let shared = export_shared(&module, &host_data);
    let kernel = module
        .get_function(&source.kernel)
        .ok_or_else(|| EmitError::Internal(format!("no kernel `{}`", source.kernel)))?;
    kernel.set_call_conventions(0);
    // Only the entry is exported: a kernel named like a C library function
    // (`exp`) would otherwise be interposed by it.
    kernel.set_linkage(Linkage::Internal);
    let (abi, wave) = match source.target {
        Target::Amdgpu(gfx) => (ArgsAbi::Kernarg, gfx.wave_lanes()),
        _ => (ArgsAbi::Pointers, 32),
    };
    let params = entry::param_slots(kernel, abi, &gpu.llvm().get_target_data());
    instrument::instrument(&ctx, &module, &host_data)?;
    crate::scalar::define_bf16_rounding(&ctx, &module, Target::Host(isa))?;
    entry::define_launch(&ctx, &module, kernel, abi, &params)?;
    let manifest = Manifest {
        kernel: source.kernel.clone(),
        target: source.target.to_string(),
        wave,
        abi,
        params,
        shared,
    };
    entry::define_manifest(&ctx, &module, &manifest.to_string());
    module.verify().map_err(|m| EmitError::Verify {
        kernel: source.kernel.clone(),
        target: host.target(),
        message: m.to_string(),
    })?;
    let llvm_ir = module.print_to_string().to_string();
    let object = host.emit_object(&module)?;
    if let Some(message) = diagnostics.take_errors() {
        return Err(EmitError::Backend {
            kernel: source.kernel.clone(),
            target: host.target(),
            message,
        });
    }
    Ok(EmulationImage {
        manifest,
        llvm_ir,
        shared_object: tools::link_shared_object(&object)?,
    })
}

/// The optimized IR of `source` to move to the host: the device's, but for
/// an NVPTX module that turns shared pointers into integers (the addresses
/// of TMA copies and mbarriers), which is optimized again from its
/// unoptimized IR with 64-bit shared pointers. Optimized with the device's
/// 32-bit ones (`SharedPointers::Short`), those integers are 32 bits wide
/// and would cut the host's shared addresses, which lie above 4 GiB.
fn host_ready_ir(source: &GpuModule) -> Result<String, EmitError> {
    let narrowed = matches!(source.target, Target::Nvptx(_))
        && source.llvm_ir_opt.contains("ptrtoint ptr addrspace(3)");
    if !narrowed {
        return Ok(source.llvm_ir_opt.clone());
    }
    let wide = SharedPointers::Wide;
    let machine = Machine::with_shared_pointers(source.target, source.opt_level, wide)?;
    let ctx = Context::create();
    let text = retarget(&source.llvm_ir, &machine);
    let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), &source.kernel);
    let module = ctx
        .create_module_from_ir(buffer)
        .map_err(|e| EmitError::Internal(format!("the device's module does not parse: {e}")))?;
    let optimized = crate::module::finish(&module, &machine, &source.kernel, source.opt_level)?;
    Ok(optimized.llvm_ir_opt)
}

/// `text` with the kernel's dynamic shared memory (`tile_abi::image`), an
/// external array of no size, defined with the `bytes` a launch gives it
/// and the alignment it declares, so that it is exported and reset like
/// the static allocations. The declaration is found by its name, whatever
/// attributes LLVM's optimizations gave it (`local_unnamed_addr`, say).
fn define_dynamic_shared(text: &str, bytes: usize) -> String {
    let name = format!("@{} = ", tile_abi::image::DYNAMIC_SHARED_SYMBOL);
    text.lines()
        .map(|line| match line.strip_prefix(&name) {
            Some(rest) if rest.starts_with("external ") => {
                let align = rest.split_once(", align ").map_or("", |(_, align)| align);
                let align = if align.is_empty() {
                    String::new()
                } else {
                    format!(", align {align}")
                };
                format!("{name}addrspace(3) global [{bytes} x i8] zeroinitializer{align}")
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with the triple and data layout of `host`.
fn retarget(text: &str, host: &Machine) -> String {
    let data = host.llvm().get_target_data();
    let layout = data.get_data_layout();
    let layout = layout.as_str().to_string_lossy();
    let triple = host.llvm().get_triple();
    let triple = triple.as_str().to_string_lossy();
    text.lines()
        .map(|line| {
            if line.starts_with("target datalayout = ") {
                format!("target datalayout = \"{layout}\"")
            } else if line.starts_with("target triple = ") {
                format!("target triple = \"{triple}\"")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Exports every shared-memory global (address space 3) of `module` under
/// its name, zero-initialized, so the runtime can find and reset it; returns
/// their symbols and sizes.
fn export_shared(module: &Module<'_>, data: &TargetData) -> Vec<SharedSlot> {
    let mut shared = Vec::new();
    let mut global = module.get_first_global();
    while let Some(g) = global {
        global = g.get_next_global();
        if g.as_pointer_value().get_type().get_address_space() != AddressSpace::from(3u16) {
            continue;
        }
        let ty = g.get_value_type();
        let Ok(basic) = BasicTypeEnum::try_from(ty) else {
            continue;
        };
        g.set_linkage(Linkage::External);
        // Exported, but bound inside the image: never interposed.
        g.set_visibility(GlobalVisibility::Protected);
        g.set_initializer(&basic.const_zero());
        shared.push(SharedSlot {
            symbol: g.get_name().to_string_lossy().into_owned(),
            bytes: data.get_abi_size(&basic) as usize,
        });
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::define_dynamic_shared;

    /// The declaration becomes a definition of the launch's bytes with its
    /// alignment, with or without the attributes optimizations add; other
    /// lines stay as they are.
    #[test]
    fn dynamic_shared_memory_is_defined_whatever_its_attributes() {
        let symbol = tile_abi::image::DYNAMIC_SHARED_SYMBOL;
        for attributes in ["", "local_unnamed_addr "] {
            let text = format!(
                "@a = addrspace(3) global [4 x i8] undef\n@{symbol} = external {attributes}addrspace(3) global [0 x i8], align 16\ndefine void @k() {{\n  ret void\n}}"
            );
            let defined = define_dynamic_shared(&text, 65536);
            let want = format!(
                "@a = addrspace(3) global [4 x i8] undef\n@{symbol} = addrspace(3) global [65536 x i8] zeroinitializer, align 16\ndefine void @k() {{\n  ret void\n}}"
            );
            assert_eq!(defined, want, "{attributes}");
        }
    }
}
