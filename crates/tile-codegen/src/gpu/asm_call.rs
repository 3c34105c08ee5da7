//! Calling an inline-PTX snippet ([`Asm`]) from the GPU module: the
//! call's function type from the snippet's results, and the attributes of
//! one without side effects, which LLVM may then move, merge or drop as it
//! would a load.

use super::{Asm, GpuEmitter, GpuTarget};
use crate::EmitError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue};
use inkwell::InlineAsmDialect;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// Calls `asm` with `args`; its results, one per returned value (the
    /// `f32` accumulators).
    pub(super) fn inline_asm(
        &self,
        asm: Asm,
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let f32t = self.ctx.f32_type();
        let values = asm.values();
        let returns: Option<BasicTypeEnum> = match (asm, values) {
            (_, 0) => None,
            (_, n) => {
                let fields: Vec<BasicTypeEnum> = vec![f32t.into(); n];
                Some(self.ctx.struct_type(&fields, false).into())
            }
        };
        let result = self.call_asm(asm, returns, args)?;
        match (asm, values) {
            (_, 0) => Ok(Vec::new()),
            (_, n) => {
                let d = result
                    .ok_or_else(|| EmitError::internal("inline assembly returned nothing"))?
                    .into_struct_value();
                (0..n as u32)
                    .map(|i| Ok(self.b.build_extract_value(d, i, "d")?))
                    .collect()
            }
        }
    }

    /// Calls `asm` with `args`, returning a value of type `returns`, if
    /// any. A snippet without side effects reads memory only: LLVM may
    /// move, merge or drop it as it would a load.
    pub(super) fn call_asm(
        &self,
        asm: Asm,
        returns: Option<BasicTypeEnum<'ctx>>,
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<Option<BasicValueEnum<'ctx>>, EmitError> {
        if !matches!(asm, Asm::Opaque { .. }) {
            self.require_nvptx(&asm.template())?;
        }
        let params: Vec<BasicMetadataTypeEnum> = args.iter().map(|a| a.get_type().into()).collect();
        let fn_type = match returns {
            Some(t) => t.fn_type(&params, false),
            None => self.ctx.void_type().fn_type(&params, false),
        };
        let callee = self.ctx.create_inline_asm(
            fn_type,
            asm.template(),
            asm.constraints(),
            asm.has_side_effects(),
            false,
            Some(InlineAsmDialect::ATT),
            false,
        );
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        let call = self.b.build_indirect_call(fn_type, callee, &args, "asm")?;
        if !asm.has_side_effects() {
            let memory = match asm {
                Asm::Opaque { .. } | Asm::CvtBf16 => 0,
                _ => READ_ONLY,
            };
            for (name, value) in [("nounwind", 0), ("willreturn", 0), ("memory", memory)] {
                let kind = Attribute::get_named_enum_kind_id(name);
                call.add_attribute(
                    AttributeLoc::Function,
                    self.ctx.create_enum_attribute(kind, value),
                );
            }
        }
        Ok(call.try_as_basic_value().basic())
    }
}

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// `x` through [`Asm::Opaque`]: the same value, which LLVM cannot see
    /// through.
    pub(super) fn opaque(&self, x: IntValue<'ctx>) -> Result<IntValue<'ctx>, EmitError> {
        let asm = Asm::Opaque {
            bits: x.get_type().get_bit_width() as u8,
            amd: matches!(self.gpu, GpuTarget::Amdgpu(_)),
        };
        Ok(self
            .call_asm(asm, Some(x.get_type().into()), &[x.into()])?
            .ok_or_else(|| EmitError::internal("opaque returned nothing"))?
            .into_int_value())
    }
}

/// LLVM's encoding of `memory(read)`: reading, not writing, each kind of
/// location (two bits each: argument memory, inaccessible memory, other).
const READ_ONLY: u64 = 0b01_01_01;
