//! The LLVM emitter: a thread-level program ([`tile_thread::program::Program`]) to
//! an LLVM 19 module for NVPTX or AMDGPU, then to PTX, AMDGPU assembly and a
//! linked code object (HSACO).
//!
//! One emitter covers what the targets share — scalar semantics
//! (`scalar`, `float`), registers, structured control flow, address
//! arithmetic, masked and vectorized global accesses, shared memory and the
//! bounds-check status record (`program`) — and one small module per
//! target maps what differs: thread and block ids, barriers, shuffles and the
//! kernel calling convention (`gpu`). The math functions come from
//! `math` and `pow` (and from `fast_math` under [`EmitOptions::fast_math`]); [`probe`] compiles single scalar ops for the host, so tests
//! can check the shared code against `tile_ir::eval` bit for bit.
//!
//! The kernel ABI (shared with the runtime): the tile-IR parameters in
//! order — a tensor of rank r as its base pointer, r `i32` extents and r
//! `i64` strides in elements; a scalar as its value (bool as `i8`, f16/bf16
//! as `i16` bits, FP8 as `i8` bits) — then a pointer to the status record
//! `{ u32 code, u32 check, i64 index[4] }`, where a failed bounds check
//! stores code 1 (first failure wins), its position among the kernel's
//! checks and its partition indices.

mod fast_math;
mod float;
mod fmod;
mod gpu;
mod math;
mod pow;
pub mod probe;
mod program;
mod scalar;

pub use gpu::GpuTarget;

use crate::target::{Machine, Target, TargetError};
use crate::tools::{self, ToolError};
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::types::{BasicTypeEnum, IntType};
use inkwell::values::{BasicMetadataValueEnum, FloatValue, FunctionValue, IntValue};
use inkwell::OptimizationLevel;
use std::cell::Cell;
use tile_thread::program::Program;

/// Options of the emitter.
#[derive(Clone, Debug)]
pub struct EmitOptions {
    /// LLVM's optimization level for the module and code generation.
    pub opt_level: OptimizationLevel,
    /// Whether exp, exp2, log, log2, sin, cos, tanh, rsqrt and pow of f32 and
    /// narrower floats use the fast f32 library (within a few ulps, see
    /// docs/backends.md) instead of the exact one (f64, rounded once).
    pub fast_math: bool,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions {
            opt_level: OptimizationLevel::Aggressive,
            fast_math: false,
        }
    }
}

/// LLVM's module pipeline for an optimization level (`default<O3>` for
/// [`OptimizationLevel::Aggressive`]).
pub(crate) fn pipeline(level: OptimizationLevel) -> &'static str {
    match level {
        OptimizationLevel::None => "default<O0>",
        OptimizationLevel::Less => "default<O1>",
        OptimizationLevel::Default => "default<O2>",
        OptimizationLevel::Aggressive => "default<O3>",
    }
}

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

/// Why a program could not be emitted.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The program uses something this emitter does not generate.
    #[error("the LLVM emitter does not support {what}")]
    Unsupported {
        /// What is missing.
        what: String,
    },
    /// A target the emitter has no GPU mapping for (the host runs tile IR
    /// through its own back end).
    #[error("`{target}` is not a GPU target; thread-level programs are emitted for sm_* and gfx* targets")]
    NotGpu {
        /// The target asked for.
        target: Target,
    },
    /// LLVM's IR builder refused an instruction (an emitter bug).
    #[error("LLVM's IR builder failed: {0}")]
    Builder(String),
    /// The LLVM verifier rejected the module (an emitter bug).
    #[error("the LLVM verifier rejected kernel `{kernel}` for {target}: {message}")]
    Verify {
        /// The kernel.
        kernel: String,
        /// The target.
        target: Target,
        /// LLVM's message.
        message: String,
    },
    /// LLVM's optimization pipeline failed.
    #[error("LLVM's optimization pipeline failed for {target}: {message}")]
    Optimize {
        /// The target.
        target: Target,
        /// LLVM's message.
        message: String,
    },
    /// Setting up the target or generating code failed.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// `ld.lld` failed to link the AMDGPU code object.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A malformed program or an emitter bug.
    #[error("internal error in the LLVM emitter: {0}")]
    Internal(String),
}

impl EmitError {
    pub(crate) fn internal(message: &str) -> EmitError {
        EmitError::Internal(message.to_string())
    }
}

impl From<BuilderError> for EmitError {
    fn from(e: BuilderError) -> Self {
        EmitError::Builder(e.to_string())
    }
}

/// Emits `program` for the GPU `target`: verified LLVM IR, optimized, then
/// PTX or AMDGPU assembly, and for AMDGPU the code object linked by `ld.lld`.
pub fn emit(
    program: &Program,
    target: Target,
    options: &EmitOptions,
) -> Result<Emitted, EmitError> {
    let gpu = GpuTarget::of(target).ok_or(EmitError::NotGpu { target })?;
    let machine = Machine::new(target, options.opt_level)?;
    let ctx = Context::create();
    let module = ctx.create_module(&program.name);
    machine.configure(&module);
    let emitter = Emitter {
        ctx: &ctx,
        module: &module,
        b: ctx.create_builder(),
        gpu: Some(gpu),
        fast_math: options.fast_math,
        keep_nan: Cell::new(false),
    };
    let bounds_checks = emitter.kernel(program)?;
    module.verify().map_err(|m| EmitError::Verify {
        kernel: program.name.clone(),
        target,
        message: m.to_string(),
    })?;
    let llvm_ir = module.print_to_string().to_string();
    module
        .run_passes(
            pipeline(options.opt_level),
            machine.llvm(),
            PassBuilderOptions::create(),
        )
        .map_err(|m| EmitError::Optimize {
            target,
            message: m.to_string(),
        })?;
    let llvm_ir_opt = module.print_to_string().to_string();
    // Code generation rewrites the module (AMDGPU's control-flow
    // annotation, for one), so each output starts from its own copy.
    let assembly = machine.emit_assembly(&module.clone())?;
    let code_object = match target {
        Target::Amdgpu(_) => Some(tools::link_shared_object(&machine.emit_object(&module)?)?),
        _ => None,
    };
    Ok(Emitted {
        target,
        llvm_ir,
        llvm_ir_opt,
        assembly,
        code_object,
        bounds_checks,
    })
}

/// The state shared by the emitter's parts: the module being built and its
/// builder.
pub(crate) struct Emitter<'a, 'ctx> {
    pub(crate) ctx: &'ctx Context,
    pub(crate) module: &'a Module<'ctx>,
    pub(crate) b: Builder<'ctx>,
    /// The GPU target; `None` when only scalar code is emitted (the host
    /// probes of [`probe`]).
    pub(crate) gpu: Option<GpuTarget>,
    /// Whether math functions of f32 and narrower use the fast library
    /// ([`EmitOptions::fast_math`]).
    pub(crate) fast_math: bool,
    /// While set, computed f32/f64 results keep the NaN the hardware makes
    /// instead of the canonical one: the host lowering sets it around ops
    /// whose NaN payloads no use observes (`host/nan.rs`).
    pub(crate) keep_nan: Cell<bool>,
}

impl<'ctx> Emitter<'_, 'ctx> {
    /// An emitter for the same module and target with a builder of its own,
    /// for defining helper functions in the middle of another one.
    pub(crate) fn nested(&self) -> Self {
        Emitter {
            ctx: self.ctx,
            module: self.module,
            b: self.ctx.create_builder(),
            gpu: self.gpu,
            fast_math: self.fast_math,
            keep_nan: Cell::new(self.keep_nan.get()),
        }
    }

    /// The GPU target of GPU-specific code.
    pub(crate) fn gpu(&self) -> Result<GpuTarget, EmitError> {
        self.gpu
            .ok_or_else(|| EmitError::internal("GPU code requested in a host probe"))
    }

    /// The integer type of `bits` bits (1, 8, 16, 32, 64 or 128).
    pub(crate) fn int_type(&self, bits: u32) -> IntType<'ctx> {
        match bits {
            1 => self.ctx.bool_type(),
            8 => self.ctx.i8_type(),
            16 => self.ctx.i16_type(),
            32 => self.ctx.i32_type(),
            64 => self.ctx.i64_type(),
            _ => self.ctx.i128_type(),
        }
    }

    /// The declaration of the intrinsic `name` overloaded on `types`.
    pub(crate) fn intrinsic(
        &self,
        name: &str,
        types: &[BasicTypeEnum<'ctx>],
    ) -> Result<FunctionValue<'ctx>, EmitError> {
        Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, types))
            .ok_or_else(|| EmitError::Internal(format!("no LLVM intrinsic {name}")))
    }

    /// Calls the float intrinsic `name` overloaded on its operands' type.
    pub(crate) fn float_intrinsic(
        &self,
        name: &str,
        args: &[FloatValue<'ctx>],
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let ty = args
            .first()
            .ok_or_else(|| EmitError::internal("an intrinsic call without operands"))?
            .get_type();
        let f = self.intrinsic(name, &[ty.into()])?;
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        let call = self.b.build_call(f, &args, "call")?;
        call.try_as_basic_value()
            .basic()
            .map(|v| v.into_float_value())
            .ok_or_else(|| EmitError::Internal(format!("{name} returned nothing")))
    }

    /// Calls the integer intrinsic `name` overloaded on `ty`.
    pub(crate) fn intrinsic_int(
        &self,
        name: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
        ty: IntType<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let f = self.intrinsic(name, &[ty.into()])?;
        let call = self.b.build_call(f, args, "call")?;
        call.try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .ok_or_else(|| EmitError::Internal(format!("{name} returned nothing")))
    }
}
