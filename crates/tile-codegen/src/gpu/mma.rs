//! Tensor-core steps: `mma` of the thread-level program as LLVM 19's NVPTX
//! intrinsics (`../shared/reference/tensor-cores.md`, A1):
//!
//! * f16: `llvm.nvvm.mma.m16n8k16.row.col.f32.f32` on `<2 x half>` pairs
//!   (the `.f32.f16` intrinsic is another instruction: C in f16);
//! * bf16: `llvm.nvvm.mma.m16n8k16.row.col.bf16` on `i32` pairs.
//!
//! Two 16-bit elements pack into one 32-bit register, the lower-numbered in
//! the low half. `ldmatrix` is `llvm.nvvm.ldmatrix.sync.aligned.m8n8.x<n>
//! {.trans}.b16`, overloaded on the shared pointer (`.p3`), returning `n`
//! such registers. The intrinsics are not `convergent`: the program keeps
//! every `mma` and `ldmatrix` in block-uniform control flow, so all 32 lanes
//! issue it.

use super::GpuEmitter;
use crate::EmitError;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};
use tile_thread::program::{LdMatrix, MmaKind};

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// `D = A·B + C` for one warp: `x` holds this lane's A, B and C fragment
    /// elements in order (16-bit bits, then `f32`), the result its D.
    pub(super) fn mma(
        &self,
        kind: MmaKind,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        self.require_nvptx(&format!("mma.{}", kind.name()))?;
        let (a, rest) = x.split_at(8.min(x.len()));
        let (b, c) = rest.split_at(4.min(rest.len()));
        if a.len() != 8 || b.len() != 4 || c.len() != 4 {
            return Err(EmitError::internal("mma takes 8 + 4 + 4 operands"));
        }
        let f32t = self.ctx.f32_type();
        let (name, pair_type): (&str, BasicTypeEnum) = match kind {
            MmaKind::F16M16N8K16 => (
                "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
                self.ctx.f16_type().vec_type(2).into(),
            ),
            MmaKind::Bf16M16N8K16 => (
                "llvm.nvvm.mma.m16n8k16.row.col.bf16",
                self.ctx.i32_type().into(),
            ),
        };
        let mut values: Vec<BasicValueEnum> = Vec::with_capacity(10);
        for pair in a.chunks(2).chain(b.chunks(2)) {
            let packed = self.pack(pair[0].into_int_value(), pair[1].into_int_value())?;
            values.push(self.b.build_bit_cast(packed, pair_type, "pair")?);
        }
        values.extend(c);
        let f = self.module.get_function(name).unwrap_or_else(|| {
            let params: Vec<_> = values.iter().map(|v| v.get_type().into()).collect();
            let ret = self.ctx.struct_type(&[f32t.into(); 4], false);
            self.module
                .add_function(name, ret.fn_type(&params, false), None)
        });
        let args: Vec<BasicMetadataValueEnum> = values.iter().map(|&v| v.into()).collect();
        let d = self
            .b
            .build_call(f, &args, "mma")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("mma returned nothing"))?
            .into_struct_value();
        (0..4)
            .map(|i| Ok(self.b.build_extract_value(d, i, "d")?))
            .collect()
    }

    /// The lane's `2·count` elements of `ldmatrix` of `shape`, its row at
    /// `at` in shared memory.
    pub(super) fn ldmatrix(
        &self,
        shape: LdMatrix,
        at: PointerValue<'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        self.require_nvptx("ldmatrix")?;
        let name = format!(
            "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{}{}.b16",
            shape.count,
            if shape.trans { ".trans" } else { "" }
        );
        let f = self.intrinsic(&name, &[at.get_type().into()])?;
        let call = self
            .b
            .build_call(f, &[at.into()], "ldmatrix")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("ldmatrix returned nothing"))?;
        let words: Vec<IntValue> = if shape.count == 1 {
            vec![call.into_int_value()]
        } else {
            (0..u32::from(shape.count))
                .map(|j| {
                    Ok(self
                        .b
                        .build_extract_value(call.into_struct_value(), j, "reg")?
                        .into_int_value())
                })
                .collect::<Result<_, EmitError>>()?
        };
        let i16t = self.ctx.i16_type();
        let mut out = Vec::with_capacity(2 * words.len());
        for word in words {
            let high = self.b.build_right_shift(
                word,
                word.get_type().const_int(16, false),
                false,
                "hi",
            )?;
            out.push(self.b.build_int_truncate(word, i16t, "lo")?.into());
            out.push(self.b.build_int_truncate(high, i16t, "hi")?.into());
        }
        Ok(out)
    }

    /// `lo | hi << 16` of two 16-bit registers, as an `i32`.
    fn pack(&self, lo: IntValue<'ctx>, hi: IntValue<'ctx>) -> Result<IntValue<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        let lo = self.b.build_int_z_extend(lo, i32t, "lo")?;
        let hi = self.b.build_int_z_extend(hi, i32t, "hi")?;
        let hi = self
            .b
            .build_left_shift(hi, i32t.const_int(16, false), "hi")?;
        Ok(self.b.build_or(lo, hi, "pair")?)
    }
}
