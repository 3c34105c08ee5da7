//! The TMA and its mbarriers (sm_90a; the PTX ISA's `cp.async.bulk.tensor`
//! and `mbarrier` sections): the barriers through LLVM's intrinsics
//! (`mbarrier.init`, `arrive.expect_tx`, `try_wait.parity` in a loop until
//! it succeeds), the copy `cp.async.bulk.tensor.2d` as inline PTX
//! ([`super::asm`]): LLVM 22's intrinsic takes its destination in the
//! cluster's shared window, and converting the block's shared address to
//! it costs two `cvta`s a copy. The copy reads the tensor map the kernel
//! takes by value (a `__grid_constant__` parameter, see `kernel.rs`) at its
//! generic address; its barrier and destination are shared addresses in
//! 64-bit registers (as the emulation target's host addresses need).

use super::asm::Asm;
use super::kernel::Kernel;
use super::GpuEmitter;
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue};
use tile_thread::program::SharedId;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// The shared address of element `index` of `alloc`, as an `i64`.
    pub(super) fn shared_address(
        &self,
        k: &Kernel<'_, 'ctx>,
        alloc: SharedId,
        index: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let dtype = k.program.shared[alloc].dtype;
        let at = self.shared_at(k, alloc.index(), dtype, index)?;
        Ok(self.b.build_ptr_to_int(at, self.ctx.i64_type(), "saddr")?)
    }

    /// `mbarrier.init` of the barrier at `index` of `alloc` with `count`
    /// arrivals, where `mask`.
    pub(super) fn mbarrier_init(
        &self,
        k: &Kernel<'_, 'ctx>,
        alloc: SharedId,
        [index, count, mask]: [IntValue<'ctx>; 3],
    ) -> Result<(), EmitError> {
        self.require_nvptx("mbarrier.init")?;
        let at = self.shared_at(k, alloc.index(), k.program.shared[alloc].dtype, index)?;
        let f = self.intrinsic("llvm.nvvm.mbarrier.init.shared", &[])?;
        self.when(k, mask, |s| {
            s.b.build_call(f, &[at.into(), count.into()], "")?;
            Ok(())
        })
    }

    /// `mbarrier.arrive.expect_tx` of `bytes` on the barrier at `index` of
    /// `alloc`, where `mask`.
    pub(super) fn mbarrier_expect_tx(
        &self,
        k: &Kernel<'_, 'ctx>,
        alloc: SharedId,
        [index, bytes, mask]: [IntValue<'ctx>; 3],
    ) -> Result<(), EmitError> {
        let at = self.shared_at(k, alloc.index(), k.program.shared[alloc].dtype, index)?;
        let f = self.intrinsic(
            "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta",
            &[],
        )?;
        self.when(k, mask, |s| {
            s.b.build_call(f, &[at.into(), bytes.into()], "")?;
            Ok(())
        })
    }

    /// Waits until the phase of parity `parity` of the barrier at `index`
    /// of `alloc` is over: `try_wait.parity` until it says so.
    pub(super) fn mbarrier_wait(
        &self,
        k: &Kernel<'_, 'ctx>,
        alloc: SharedId,
        [index, parity]: [IntValue<'ctx>; 2],
    ) -> Result<(), EmitError> {
        let at = self.shared_at(k, alloc.index(), k.program.shared[alloc].dtype, index)?;
        let f = self.intrinsic(
            "llvm.nvvm.mbarrier.try.wait.parity.scope.cta.space.cta",
            &[],
        )?;
        let spin = self.ctx.append_basic_block(k.function, "mbar.wait");
        let done = self.ctx.append_basic_block(k.function, "mbar.done");
        self.b.build_unconditional_branch(spin)?;
        self.b.position_at_end(spin);
        let over = self
            .b
            .build_call(f, &[at.into(), parity.into()], "over")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("try_wait's result"))?
            .into_int_value();
        self.b.build_conditional_branch(over, done, spin)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// The bulk copy of the box at `(c0, c1)` through tensor map `map` into
    /// element `index` of `alloc`, completing on the barrier at `b` of
    /// `bar`, where `mask`.
    pub(super) fn tma_load(
        &self,
        k: &Kernel<'_, 'ctx>,
        (map, alloc, bar): (usize, SharedId, SharedId),
        [index, c0, c1, b, mask]: [IntValue<'ctx>; 5],
    ) -> Result<(), EmitError> {
        let dst = self.shared_address(k, alloc, index)?;
        let barrier = self.shared_address(k, bar, b)?;
        let map = k
            .maps
            .get(map)
            .ok_or_else(|| EmitError::internal("a tensor map the kernel does not take"))?;
        let map = self.b.build_ptr_to_int(*map, self.ctx.i64_type(), "tmap")?;
        let args: [BasicValueEnum; 5] =
            [dst.into(), map.into(), c0.into(), c1.into(), barrier.into()];
        self.when(k, mask, |s| s.inline_asm(Asm::TmaLoad2d, &args).map(drop))
    }
}
