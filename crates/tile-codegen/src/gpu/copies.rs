//! `cp.async` as LLVM's NVPTX intrinsics (`IntrinsicsNVVM.td`; the PTX
//! ISA's `cp.async`, `cp.async.commit_group` and `cp.async.wait_group`):
//! `llvm.nvvm.cp.async.cg.shared.global.16.s(dst,
//! src, src_size)` copies 16 bytes, reading `src_size` of them and
//! zero-filling the rest; `cp.async.commit.group` and `cp.async.wait.group
//! N` (an immediate) close and await groups. A copy that reads nothing is
//! pointed at the tensor's element zero: its computed address may lie
//! outside the tensor.

use super::kernel::{tensor, Kernel};
use super::{GpuEmitter, GpuTarget};
use crate::EmitError;
use inkwell::values::{BasicMetadataValueEnum, IntValue};
use inkwell::IntPredicate;
use tile_thread::program::SharedId;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// The `cp.async` of `count` elements from element `addr` of tensor
    /// `param` to element `index` of `alloc`, where `mask`.
    pub(super) fn copy_async(
        &self,
        k: &Kernel<'_, 'ctx>,
        (param, alloc): (usize, SharedId),
        [addr, index, count, mask]: [IntValue<'ctx>; 4],
    ) -> Result<(), EmitError> {
        self.require_nvptx("cp.async")?;
        let dtype = k.program.shared[alloc].dtype;
        let dst = self.shared_at(k, alloc.index(), dtype, index)?;
        let i32t = self.ctx.i32_type();
        let nothing =
            self.b
                .build_int_compare(IntPredicate::EQ, count, i32t.const_zero(), "empty")?;
        let src = self.global_at(k, param, dtype, addr)?;
        let src = self
            .b
            .build_select(nothing, tensor(k, param)?.base, src, "src")?
            .into_pointer_value();
        let size = i32t.const_int(dtype.size_bytes() as u64, false);
        let bytes = self.b.build_int_mul(count, size, "bytes")?;
        let f = self.intrinsic("llvm.nvvm.cp.async.cg.shared.global.16.s", &[])?;
        self.when(k, mask, |s| {
            s.b.build_call(f, &[dst.into(), src.into(), bytes.into()], "")?;
            Ok(())
        })
    }

    /// `cp.async.commit_group`.
    pub(super) fn commit_async(&self) -> Result<(), EmitError> {
        self.require_nvptx("cp.async.commit")?;
        let f = self.intrinsic("llvm.nvvm.cp.async.commit.group", &[])?;
        self.b.build_call(f, &[], "")?;
        Ok(())
    }

    /// `cp.async.wait_group pending`.
    pub(super) fn wait_async(&self, pending: u8) -> Result<(), EmitError> {
        self.require_nvptx("cp.async.wait")?;
        let f = self.intrinsic("llvm.nvvm.cp.async.wait.group", &[])?;
        let n: BasicMetadataValueEnum = self
            .ctx
            .i32_type()
            .const_int(u64::from(pending), false)
            .into();
        self.b.build_call(f, &[n], "")?;
        Ok(())
    }

    /// An error unless the target is NVIDIA's.
    pub(super) fn require_nvptx(&self, what: &str) -> Result<(), EmitError> {
        match self.gpu {
            GpuTarget::Nvptx(_) => Ok(()),
            GpuTarget::Amdgpu(_) => Err(EmitError::Unsupported {
                what: format!("`{what}` on AMDGPU"),
            }),
        }
    }
}
