//! The GPU emitter: a thread-level program (`tile_thread::Program`) to an
//! LLVM module for NVPTX or AMDGPU, then to PTX, AMDGPU assembly and a
//! linked code object (HSACO).
//!
//! What the targets share is written once: the kernel function and its
//! parameters (`kernel`), global and shared memory and bounds checks
//! (`memory`), structured control flow (`control`), and scalar code from the
//! scalar emitter ([`crate::scalar`]). What differs is mapped in one place
//! per concern: thread and block ids, barriers and the kernel calling
//! convention (`intrinsics`), and warp shuffles (`shuffle`). Tensor cores
//! are `mma` (mma.sync, WMMA, MFMA), `copies` (cp.async) and `wgmma`
//! (Hopper), the last through inline PTX (`asm`).
//!
//! The kernel ABI is `tile_abi::params`: the tile-IR parameters in order (a
//! tensor of rank r as its base pointer, r `i32` extents and r `i64` strides
//! in elements; a scalar as its value), then a pointer to the status record
//! (`tile_abi::status`), where the first failed bounds check stores
//! `FaultCode::OutsideTensor`, its position among the kernel's checks and
//! its partition indices.

mod arrays;
mod asm;
mod asm_call;
mod atomic_add;
mod control;
mod copies;
mod intrinsics;
mod kernel;
mod memory;
mod mma;
mod nan;
mod predicated;
mod shared_access;
mod shared_layout;
mod shuffle;
mod tcgen05;
mod tma;
mod wgmma;

pub(crate) use asm::Asm;
pub use intrinsics::GpuTarget;
pub use shared_layout::shared_bytes;
pub(crate) use tcgen05::Tcgen05Asm;

use crate::diagnostics::Diagnostics;
use crate::module;
use crate::scalar::ScalarEmitter;
use crate::target::{Machine, Target};
use crate::tools;
use crate::{CodegenOptions, EmitError};
use inkwell::context::Context;
use inkwell::OptimizationLevel;
use std::collections::HashMap;
use std::ops::Deref;
use tile_thread::program::{Program, ThreadOpKind};

/// The PTX ISA version (times ten) that introduced `mma.sync`'s FP8 form.
const FP8_MMA_PTX: u32 = 84;

/// The PTX ISA version (times ten) of the TMA's bulk tensor copies and the
/// mbarriers' transaction counts: 8.0, which sm_90's own version (7.8)
/// predates.
const TMA_PTX: u32 = 80;

/// A kernel's LLVM module for a GPU target, before and after LLVM's
/// optimization pipeline: what the PTX or the code object is generated
/// from, and what the emulation target ([`crate::emulation`]) runs.
#[derive(Clone, Debug)]
pub struct GpuModule {
    /// The kernel's name.
    pub kernel: String,
    /// The target.
    pub target: Target,
    /// The LLVM IR as emitted, before optimization.
    pub llvm_ir: String,
    /// The LLVM IR after LLVM's optimization pipeline.
    pub llvm_ir_opt: String,
    /// The tile-IR ops of the program's bounds checks, in the order of the
    /// status record's `check` field.
    pub bounds_checks: Vec<String>,
    /// The bytes of dynamic shared memory the kernel expects (0: its shared
    /// memory is declared statically; `tile_abi::image`).
    pub dynamic_shared_bytes: usize,
    /// The level LLVM optimized it at.
    pub opt_level: OptimizationLevel,
}

/// The output of [`emit`] for one target.
#[derive(Clone, Debug)]
pub struct Emitted {
    /// The module the code was generated from.
    pub module: GpuModule,
    /// PTX (NVPTX) or AMDGPU assembly.
    pub assembly: String,
    /// The linked AMDGPU code object (HSACO); `None` for NVPTX, whose PTX
    /// the CUDA driver compiles.
    pub code_object: Option<Vec<u8>>,
}

/// Emits `program` for the GPU `target`: verified LLVM IR, optimized, then
/// PTX or AMDGPU assembly, and for AMDGPU the code object linked by lld.
pub fn emit(
    program: &Program,
    target: Target,
    options: &CodegenOptions,
) -> Result<Emitted, EmitError> {
    let built = build(program, target, options, Code::Generate)?;
    let code_object = built
        .object
        .map(|object| tools::link_shared_object(&object))
        .transpose()?;
    Ok(Emitted {
        module: built.module,
        assembly: built.assembly.unwrap_or_default(),
        code_object,
    })
}

/// Emits `program` for the GPU `target` up to the optimized module: what the
/// emulation target needs. No code is generated, assembled or linked.
pub fn emit_module(
    program: &Program,
    target: Target,
    options: &CodegenOptions,
) -> Result<GpuModule, EmitError> {
    build(program, target, options, Code::Skip).map(|built| built.module)
}

/// Whether [`build`] generates code from the optimized module.
#[derive(Clone, Copy, PartialEq)]
enum Code {
    Generate,
    Skip,
}

/// The optimized module and the code generated from it.
struct Built {
    module: GpuModule,
    /// PTX or AMDGPU assembly.
    assembly: Option<String>,
    /// The AMDGPU object file, before linking.
    object: Option<Vec<u8>>,
}

/// Emits, verifies and optimizes `program`'s module for `target`, then
/// generates its code if asked; a backend error reported meanwhile fails
/// the whole.
fn build(
    program: &Program,
    target: Target,
    options: &CodegenOptions,
    code: Code,
) -> Result<Built, EmitError> {
    let gpu = GpuTarget::of(target).ok_or(EmitError::NotGpu { target })?;
    // `mma.sync`'s FP8 form came with PTX 8.4; other programs keep the
    // target's oldest version.
    let fp8_mma = program
        .ops
        .iter()
        .any(|(_, op)| matches!(op.kind, ThreadOpKind::Mma { kind } if kind.is_fp8()));
    let vector_adds = program.ops.iter().any(|(_, op)| match op.kind {
        ThreadOpKind::AddGlobal { param, width, .. } => program
            .params
            .get(param)
            .and_then(|p| p.kind.tensor())
            .is_some_and(|t| {
                atomic_add::adds_vectors(gpu, options.approx_math, t.dtype, width.into())
            }),
        _ => false,
    });
    let tma = program.ops.iter().any(|(_, op)| {
        matches!(
            op.kind,
            ThreadOpKind::TmaLoad { .. } | ThreadOpKind::MbarrierExpectTx { .. }
        )
    });
    if tma && !target.has_tma() {
        let what = format!("the TMA's copies on {target}, which has no TMA (sm_90 and later do)");
        return Err(EmitError::Unsupported { what });
    }
    let min_ptx = [
        (fp8_mma, FP8_MMA_PTX),
        (vector_adds, atomic_add::VECTOR_ADD_PTX),
        (tma, TMA_PTX),
    ]
    .into_iter()
    .filter_map(|(needed, ptx)| needed.then_some(ptx))
    .max()
    .unwrap_or(0);
    let machine = Machine::with_min_ptx(target, options.opt_level, min_ptx)?;
    let ctx = Context::create();
    let diagnostics = Diagnostics::install(&ctx);
    let module = ctx.create_module(&program.name);
    machine.configure(&module);
    let emitter = GpuEmitter {
        s: ScalarEmitter::new(&ctx, &module, target, options.fast_math)
            .with_approx_math(target, options.approx_math),
        gpu,
    };
    let bounds_checks = emitter.kernel(program)?;
    let dynamic_shared_bytes = emitter.dynamic_shared(shared_bytes(program));
    let text = module::finish(&module, &machine, &program.name, options.opt_level)?;
    let (assembly, object) = match (gpu, code) {
        (GpuTarget::Nvptx(_), Code::Generate) => {
            // The tensor maps the kernel takes, for the runtime to build.
            let note = tile_abi::tma::maps_note(&program.tma_maps());
            let ptx = renumber_call_sequences(&machine.emit_assembly(&module)?);
            (Some(ptx + &note), None)
        }
        // One code generation: the object is assembled from the assembly
        // text (which holds the kernel descriptors and metadata), not
        // generated a second time.
        (GpuTarget::Amdgpu(gfx), Code::Generate) => {
            let assembly = machine.emit_assembly(&module)?;
            let object = tools::assemble_amdgpu(&assembly, gfx)?;
            (Some(assembly), Some(object))
        }
        (_, Code::Skip) => (None, None),
    };
    if let Some(message) = diagnostics.take_errors() {
        return Err(EmitError::Backend {
            kernel: program.name.clone(),
            target,
            message,
        });
    }
    let module = GpuModule {
        kernel: program.name.clone(),
        target,
        llvm_ir: text.llvm_ir,
        llvm_ir_opt: text.llvm_ir_opt,
        bounds_checks,
        dynamic_shared_bytes,
        opt_level: options.opt_level,
    };
    Ok(Built {
        module,
        assembly,
        object,
    })
}

/// `ptx` with the numbers of its call sequences (the comments `{ //
/// callseq N, 0` and `} // callseq N` around each call) counted from 0 in
/// order. LLVM's NVPTX back end numbers them with one counter for the whole
/// process, so the same kernel would print differently after other calls
/// were compiled, and an image would depend on what the process built
/// before it.
fn renumber_call_sequences(ptx: &str) -> String {
    const MARK: &str = "// callseq ";
    let mut numbers: HashMap<&str, usize> = HashMap::new();
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while let Some(at) = rest.find(MARK) {
        let start = at + MARK.len();
        out.push_str(&rest[..start]);
        let digits = rest[start..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - start);
        let old = &rest[start..start + digits];
        let next = numbers.len();
        out.push_str(&numbers.entry(old).or_insert(next).to_string());
        rest = &rest[start + digits..];
    }
    out.push_str(rest);
    out
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

#[cfg(test)]
mod tests {
    use super::renumber_call_sequences;

    #[test]
    fn call_sequences_are_numbered_from_zero_in_order() {
        let ptx = "\t{ // callseq 88, 0\n\tcall.uni f;\n\t} // callseq 88\n\t{ // callseq 89, 0\n\t} // callseq 89\n\tret;\n";
        assert_eq!(
            renumber_call_sequences(ptx),
            "\t{ // callseq 0, 0\n\tcall.uni f;\n\t} // callseq 0\n\t{ // callseq 1, 0\n\t} // callseq 1\n\tret;\n"
        );
        assert_eq!(
            renumber_call_sequences("ret; // callseq"),
            "ret; // callseq"
        );
    }
}
