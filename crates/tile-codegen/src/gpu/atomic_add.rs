//! `red.global.add`: relaxed atomic adds whose old values nobody reads, a
//! thread's consecutive elements at a time (an `atomic add` of a tile into
//! a tensor: attention's `dq`, a split product's partial sums).
//!
//! Where the group is one aligned vector (`ok`) and the target adds
//! vectors of `f32` in one instruction, it is one `red.global.add.v2.f32`
//! or `.v4.f32` (sm_90 and later, PTX 8.1), each element its own atomic
//! update as PTX defines it. That takes the hardware's float add, which
//! flushes subnormals, so only under `approx_math`, as the scalar
//! hardware add (`scalar/atomic.rs`). Otherwise each element is the
//! scalar emitter's atomic add where its mask holds.

use super::asm::Asm;
use super::kernel::Kernel;
use super::{GpuEmitter, GpuTarget};
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use tile_ir::{AtomicOp, DType, MemOrder, MemScope};
use tile_thread::program::GlobalOperands;

/// The PTX ISA version (times ten) of the vector `red.global.add`.
pub(super) const VECTOR_ADD_PTX: u32 = 81;

/// Whether `target` adds `width` elements of `dtype` in one vector
/// reduction under `approx_math`: `f32` pairs and quads from sm_90 on.
pub(super) fn adds_vectors(
    target: GpuTarget,
    approx_math: bool,
    dtype: DType,
    width: usize,
) -> bool {
    let capable = matches!(target, GpuTarget::Nvptx(sm) if sm.number() >= 90);
    capable && approx_math && dtype == DType::F32 && matches!(width, 2 | 4)
}

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// `red.global.add` of `width` elements of `dtype` into tensor `param`
    /// at `scope`, its operands `x` as `st.global`'s.
    pub(super) fn add_global(
        &self,
        k: &Kernel<'_, 'ctx>,
        (param, scope): (usize, MemScope),
        width: usize,
        dtype: DType,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<(), EmitError> {
        let o = GlobalOperands::store(x, width)
            .ok_or_else(|| EmitError::internal("red.global operands"))?;
        let lanes = || -> Result<(), EmitError> {
            for i in 0..width {
                let at = self.global_at(k, param, dtype, o.lanes[i].into_int_value())?;
                self.masked_add(k, at, (o.values[i], dtype), o.masks[i].into_int_value())?;
            }
            Ok(())
        };
        let approx = self.hardware_math.is_some();
        let vector = o
            .vector_ok
            .filter(|_| adds_vectors(self.gpu, approx, dtype, width));
        let Some(ok) = vector else {
            return lanes();
        };
        let whole = self.ctx.append_basic_block(k.function, "redv");
        let each = self.ctx.append_basic_block(k.function, "redl");
        let done = self.ctx.append_basic_block(k.function, "redv.done");
        self.b
            .build_conditional_branch(ok.into_int_value(), whole, each)?;
        self.b.position_at_end(whole);
        let at = self.global_at(k, param, dtype, o.addr.into_int_value())?;
        let mut args = vec![at.into()];
        args.extend_from_slice(o.values);
        let asm = Asm::AddVectorF32 {
            words: width as u8,
            gpu: scope == MemScope::Gpu,
        };
        self.call_asm(asm, None, &args)?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(each);
        lanes()?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// A relaxed atomic add of `value` to the element at `at` where `mask`
    /// holds.
    fn masked_add(
        &self,
        k: &Kernel<'_, 'ctx>,
        at: PointerValue<'ctx>,
        (value, dtype): (BasicValueEnum<'ctx>, DType),
        mask: IntValue<'ctx>,
    ) -> Result<(), EmitError> {
        self.when(k, mask, |s| {
            s.atomic(AtomicOp::Add, MemOrder::Relaxed, dtype, at, value, None)?;
            Ok(())
        })
    }
}
