//! Hopper's `wgmma` (sm_90a) as inline PTX ([`super::asm`]): the thread
//! program's operand indices become 64-bit matrix descriptors
//! ([`tile_hw::wgmma::operand_descriptor`]: the shared address's bits
//! 4–17 over a constant for the swizzle, A's as the op says and B's by
//! [`tile_hw::wgmma::b_swizzle`], and the group stride of 8 rows), or A's elements packed two to a
//! register, the accumulators go in and come out as tied registers, always
//! accumulating (the program initializes them).

use super::asm::Asm;
use super::kernel::{int, Kernel, Operands};
use super::GpuEmitter;
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue};
use tile_hw::wgmma::{b_swizzle, operand_descriptor, Descriptor, REGISTER_A_ELEMENTS};
use tile_thread::program::{DescriptorSwizzle, SharedId, ThreadOpKind, WgmmaKind};

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// The `wgmma` op `kind` (the instruction, its fence, commit or wait)
    /// on the registers `x`.
    pub(super) fn wgmma_op(
        &self,
        k: &Kernel<'_, 'ctx>,
        kind: &ThreadOpKind,
        x: &Operands<'_, 'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        match kind {
            ThreadOpKind::Wgmma {
                kind,
                a,
                a_swizzle,
                b,
            } => self.wgmma(k, (*kind, (*a, *a_swizzle), *b), x),
            ThreadOpKind::WgmmaRegisterA { kind, b } => self.wgmma_register_a(k, (*kind, *b), x),
            ThreadOpKind::WgmmaFence => self.inline_asm(Asm::WgmmaFence, &[]),
            ThreadOpKind::WgmmaCommit => self.inline_asm(Asm::WgmmaCommit, &[]),
            ThreadOpKind::WgmmaWait { pending } => {
                let accumulators = x.list("accumulators");
                let wait = Asm::WgmmaWait {
                    pending: *pending,
                    values: accumulators.len(),
                };
                self.inline_asm(wait, accumulators)
            }
            _ => Err(EmitError::internal("not a wgmma op")),
        }
    }

    /// One warpgroup's `wgmma` of `kind` on A at element `ia` of `a` (laid
    /// out with `a_swizzle`) and B at element `ib` of `b`, accumulating
    /// into its `accumulators`; D.
    pub(super) fn wgmma(
        &self,
        k: &Kernel<'_, 'ctx>,
        (kind, (a, a_swizzle), b): (WgmmaKind, (SharedId, DescriptorSwizzle), SharedId),
        x: &Operands<'_, 'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let acc = x.list("accumulators");
        if acc.len() != kind.accumulators() {
            return Err(EmitError::internal("wgmma's accumulators"));
        }
        let desc_a = self.descriptor(k, (a, a_swizzle), int(x, "ia")?, Descriptor::encode)?;
        let b_layout = (b, b_swizzle(a_swizzle, kind.b_major));
        let desc_b = self.descriptor(k, b_layout, int(x, "ib")?, Descriptor::encode)?;
        let scale = self.ctx.i32_type().const_int(1, false);
        let mut args = acc.to_vec();
        args.extend::<[BasicValueEnum; 3]>([desc_a.into(), desc_b.into(), scale.into()]);
        self.inline_asm(Asm::Wgmma(kind), &args)
    }

    /// One warpgroup's `wgmma` of `kind` with A from registers: the
    /// thread's 8 16-bit elements of A (packed two to a `.b32`, the first
    /// low), B at element `ib` of `b`, accumulating into its
    /// `accumulators`; D.
    pub(super) fn wgmma_register_a(
        &self,
        k: &Kernel<'_, 'ctx>,
        (kind, b): (WgmmaKind, SharedId),
        x: &Operands<'_, 'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let (a, acc) = (x.list("a"), x.list("accumulators"));
        if a.len() != REGISTER_A_ELEMENTS || acc.len() != kind.accumulators() {
            return Err(EmitError::internal("wgmma's accumulators"));
        }
        let mut args = acc.to_vec();
        for pair in a.chunks(2) {
            let word = self.pack(pair[0].into_int_value(), pair[1].into_int_value())?;
            args.push(word.into());
        }
        // B is staged under the 128-byte swizzle: a product takes A from
        // registers only then (`chained_wgmma_fragments`).
        let b128 = (b, DescriptorSwizzle::B128);
        let desc_b = self.descriptor(k, b128, int(x, "ib")?, Descriptor::encode)?;
        let scale = self.ctx.i32_type().const_int(1, false);
        args.extend::<[BasicValueEnum; 2]>([desc_b.into(), scale.into()]);
        self.inline_asm(Asm::WgmmaRegisterA(kind), &args)
    }

    /// The descriptor of the operand at element `index` of `alloc`, laid
    /// out with `swizzle`, in the encoding `encode` writes (Hopper's, or
    /// sm_100's: `tile_hw::tcgen05::smem_descriptor`).
    pub(super) fn descriptor(
        &self,
        k: &Kernel<'_, 'ctx>,
        (alloc, swizzle): (SharedId, DescriptorSwizzle),
        index: IntValue<'ctx>,
        encode: fn(Descriptor) -> u64,
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
        let constant = i64t.const_int(encode(operand_descriptor(0, swizzle)), false);
        Ok(self.b.build_or(field, constant, "desc")?)
    }
}
