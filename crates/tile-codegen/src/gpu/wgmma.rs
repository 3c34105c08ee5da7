//! Hopper's `wgmma` (sm_90a) as inline PTX ([`super::asm`]): the thread
//! program's operand indices become 64-bit matrix descriptors
//! ([`tile_hw::wgmma::operand_descriptor`]: the shared address's bits
//! 4–17 over a constant for the 128-byte swizzle and 1024-byte group
//! stride), the accumulators go in and come out as tied registers, always
//! accumulating (the program initializes them).

use super::asm::Asm;
use super::kernel::Kernel;
use super::GpuEmitter;
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue};
use tile_hw::wgmma::operand_descriptor;
use tile_thread::program::{SharedId, WgmmaKind};

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// One warpgroup's `wgmma` of `kind` on A at element `x[0]` of `a` and
    /// B at element `x[1]` of `b`, accumulating into `x[2..]`; D.
    pub(super) fn wgmma(
        &self,
        k: &Kernel<'_, 'ctx>,
        (kind, a, b): (WgmmaKind, SharedId, SharedId),
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let [ia, ib, acc @ ..] = x else {
            return Err(EmitError::internal(
                "wgmma takes two indices and accumulators",
            ));
        };
        if acc.len() != kind.accumulators() {
            return Err(EmitError::internal("wgmma's accumulators"));
        }
        let desc_a = self.descriptor(k, a, ia.into_int_value())?;
        let desc_b = self.descriptor(k, b, ib.into_int_value())?;
        let scale = self.ctx.i32_type().const_int(1, false);
        let mut args = acc.to_vec();
        args.extend::<[BasicValueEnum; 3]>([desc_a.into(), desc_b.into(), scale.into()]);
        self.inline_asm(Asm::Wgmma(kind), &args)
    }

    /// The descriptor of the operand at element `index` of `alloc`.
    fn descriptor(
        &self,
        k: &Kernel<'_, 'ctx>,
        alloc: SharedId,
        index: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let i64t = self.ctx.i64_type();
        let dtype = k.program.shared[alloc].dtype;
        let at = self.shared_at(k, alloc.index(), dtype, index)?;
        let address = self.b.build_ptr_to_int(at, i64t, "saddr")?;
        let low = self
            .b
            .build_and(address, i64t.const_int(0x3ffff, false), "low")?;
        let field = self
            .b
            .build_right_shift(low, i64t.const_int(4, false), false, "start")?;
        let constant = i64t.const_int(operand_descriptor(0).encode(), false);
        Ok(self.b.build_or(field, constant, "desc")?)
    }
}
