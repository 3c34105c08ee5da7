//! The scalar emitter: every scalar op of the tile IR in LLVM IR, with
//! exactly the semantics of `tile_ir::eval` (docs/semantics.md), shared by
//! the GPU emitter ([`crate::gpu`]) and the host back end ([`crate::host`]).
//!
//! * `values`: register and memory types, constants, widening and the NaN
//!   policy of computed results (`Nans`);
//! * `arith`, `unary`, `cast`: the ops;
//! * `float`: narrow float formats (f16, bf16, FP8), rounded once;
//!   `half_arith`: f16 and bf16 sums and products in their own types;
//! * `math` (with `trig`, `inverse_trig`, `hyperbolic`, `erf`, `roots`,
//!   `pow`) and `fmod`: the exact math library (f64, rounded once),
//!   `fast_math` the fast f32 one ([`crate::CodegenOptions::fast_math`]),
//!   and `approx_math` the GPUs' own instructions
//!   ([`crate::CodegenOptions::approx_math`]);
//! * [`probe`]: single ops compiled for the host, so tests can run the exact
//!   LLVM IR every target receives against `tile_ir::eval`.
//!
//! The emitter holds no per-client modes: what differs between uses (the
//! NaN policy of a result) is an argument of the op.

mod approx_math;
mod arith;
mod atomic;
mod cast;
mod device_print;
mod erf;
mod fast_math;
mod float;
mod fmod;
mod format;
mod fp8;
mod half_arith;
mod hyperbolic;
mod inverse_trig;
mod math;
mod math_arith;
mod pow;
pub mod probe;
mod roots;
mod scale;
mod trig;
mod unary;
mod values;

pub(crate) use approx_math::Hardware;
pub(crate) use device_print::Record;
pub(crate) use half_arith::define_bf16_rounding;

use crate::{EmitError, Target};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::types::{BasicTypeEnum, IntType};
use inkwell::values::{BasicMetadataValueEnum, FloatValue, FunctionValue, IntValue};

/// What a computed float result (f32, f64; f16 and bf16 where a target's
/// instruction rounds them) does with a NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nans {
    /// Every NaN becomes the canonical one, as the interpreter computes.
    Canonical,
    /// The NaN stays as the hardware makes it: for results whose NaN
    /// payloads no use observes (the host back end's `nan.rs`).
    AsComputed,
}

/// The module being built, its builder, and the choice of math library.
pub(crate) struct ScalarEmitter<'a, 'ctx> {
    pub(crate) ctx: &'ctx Context,
    pub(crate) module: &'a Module<'ctx>,
    pub(crate) b: Builder<'ctx>,
    /// Whether math functions of f32 and narrower use the fast library
    /// ([`crate::CodegenOptions::fast_math`]).
    pub(crate) fast_math: bool,
    /// The GPU whose one-instruction approximations exp, exp2, log, log2,
    /// rsqrt and division of f32 and narrower take
    /// ([`crate::CodegenOptions::approx_math`]); `None`: the libraries.
    pub(crate) hardware_math: Option<Hardware>,
    /// Whether f32 → f16 rounds with the target's instruction
    /// ([`crate::Target::converts_f16`]) rather than integer arithmetic.
    pub(crate) converts_f16: bool,
    /// Whether f32 → bf16 rounds with the target's instruction
    /// ([`crate::Target::converts_bf16`]) rather than integer arithmetic.
    pub(crate) converts_bf16: bool,
    /// Whether E4M3 widens to f16 with the target's instruction
    /// ([`crate::Target::converts_e4m3`]) rather than integer arithmetic.
    pub(crate) converts_e4m3: bool,
    /// Whether f32 `min`/`max` are LLVM's `llvm.minimum`/`llvm.maximum`
    /// ([`crate::Target::uses_min_max_intrinsics`]) rather than compares and
    /// selects.
    pub(crate) ieee_min_max: bool,
    /// Whether the exact library's functions stay calls
    /// ([`crate::Target::outlines_exact_math`]) rather than being inlined.
    pub(crate) outline_exact_math: bool,
    /// Whether f16 and bf16 are added, subtracted and multiplied in their
    /// own type ([`crate::Target::adds_16_bit_floats`]) rather than in f32
    /// and rounded.
    pub(crate) native_16_bit: [bool; 2],
    /// Whether an ordered `atomicrmw` is a relaxed one between fences
    /// ([`crate::Target::fences_atomic_orders`]).
    pub(crate) fenced_atomics: bool,
}

impl<'a, 'ctx> ScalarEmitter<'a, 'ctx> {
    /// An emitter into `module`, compiled for `target`, with a builder of
    /// its own.
    pub(crate) fn new(
        ctx: &'ctx Context,
        module: &'a Module<'ctx>,
        target: Target,
        fast_math: bool,
    ) -> Self {
        ScalarEmitter {
            ctx,
            module,
            b: ctx.create_builder(),
            fast_math,
            hardware_math: None,
            converts_f16: target.converts_f16(),
            converts_bf16: target.converts_bf16(),
            converts_e4m3: target.converts_e4m3(),
            ieee_min_max: target.uses_min_max_intrinsics(),
            outline_exact_math: target.outlines_exact_math(),
            native_16_bit: [tile_ir::DType::F16, tile_ir::DType::BF16]
                .map(|d| target.adds_16_bit_floats(d)),
            fenced_atomics: target.fences_atomic_orders(),
        }
    }

    /// This emitter with `target`'s own approximations when `approx_math`
    /// and `target` is a GPU ([`Hardware::of`]).
    pub(crate) fn with_approx_math(self, target: Target, approx_math: bool) -> Self {
        ScalarEmitter {
            hardware_math: Hardware::of(target).filter(|_| approx_math),
            ..self
        }
    }

    /// An emitter for the same module with a builder of its own, for
    /// defining helper functions in the middle of another one.
    pub(crate) fn nested(&self) -> Self {
        ScalarEmitter {
            b: self.ctx.create_builder(),
            ..*self
        }
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
