//! What differs between the GPU targets: thread and block ids, the grid's
//! extent, barriers, warp shuffles and how a function becomes a kernel.
//!
//! NVPTX maps them to the `llvm.nvvm.*` intrinsics (`%tid`, `%ctaid`,
//! `%nctaid`, `bar.sync 0`, `shfl.sync`) and marks kernels in
//! `!nvvm.annotations`. AMDGPU maps them to `llvm.amdgcn.*`: work-item and
//! work-group ids, the grid from the HSA dispatch packet, `s_barrier`
//! between workgroup fences, and shuffles through `ds_bpermute`, which reads
//! any lane of the wave: the program's 32-lane warps are the halves of a
//! wave64 (gfx90a, gfx942) or whole wave32s (gfx1100), and the source lane of
//! a shuffle is computed with `shfl.sync`'s rules inside the 32-lane warp.

use super::{EmitError, Emitter};
use crate::target::{Gfx, Sm, Target};
use inkwell::values::{FunctionValue, IntValue};
use inkwell::{AtomicOrdering, IntPredicate};
use tile_thread::program::ShuffleMode;

/// A GPU target of the emitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuTarget {
    /// NVIDIA, through PTX.
    Nvptx(Sm),
    /// AMD, through an HSA code object.
    Amdgpu(Gfx),
}

/// LLVM's `amdgpu_kernel` calling convention.
const AMDGPU_KERNEL_CC: u32 = 91;

impl GpuTarget {
    /// The GPU target of `target`, or `None` for the host.
    pub fn of(target: Target) -> Option<GpuTarget> {
        match target {
            Target::Nvptx(sm) => Some(GpuTarget::Nvptx(sm)),
            Target::Amdgpu(gfx) => Some(GpuTarget::Amdgpu(gfx)),
            Target::Host => None,
        }
    }

    /// The address space of global memory.
    pub(crate) fn global_space(self) -> u16 {
        1
    }

    /// The address space of shared memory (LDS on AMDGPU).
    pub(crate) fn shared_space(self) -> u16 {
        3
    }
}

impl<'ctx> Emitter<'_, 'ctx> {
    /// Calls a target intrinsic of no operands returning `i32`.
    fn sreg(&self, name: &str) -> Result<IntValue<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        let f = self.module.get_function(name).unwrap_or_else(|| {
            self.module
                .add_function(name, i32t.fn_type(&[], false), None)
        });
        let call = self.b.build_call(f, &[], "sreg")?;
        call.try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .ok_or_else(|| EmitError::Internal(format!("{name} returned nothing")))
    }

    /// The thread's index in its (one-dimensional) block.
    pub(crate) fn thread_id(&self) -> Result<IntValue<'ctx>, EmitError> {
        match self.gpu()? {
            GpuTarget::Nvptx(_) => self.sreg("llvm.nvvm.read.ptx.sreg.tid.x"),
            GpuTarget::Amdgpu(_) => self.sreg("llvm.amdgcn.workitem.id.x"),
        }
    }

    /// The block's index along `axis`.
    pub(crate) fn block_id(&self, axis: u8) -> Result<IntValue<'ctx>, EmitError> {
        let xyz = axis_name(axis)?;
        match self.gpu()? {
            GpuTarget::Nvptx(_) => self.sreg(&format!("llvm.nvvm.read.ptx.sreg.ctaid.{xyz}")),
            GpuTarget::Amdgpu(_) => self.sreg(&format!("llvm.amdgcn.workgroup.id.{xyz}")),
        }
    }

    /// The grid's extent in blocks along `axis`, for blocks of
    /// `block_threads` threads.
    pub(crate) fn grid_dim(
        &self,
        axis: u8,
        block_threads: u32,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let xyz = axis_name(axis)?;
        match self.gpu()? {
            GpuTarget::Nvptx(_) => self.sreg(&format!("llvm.nvvm.read.ptx.sreg.nctaid.{xyz}")),
            GpuTarget::Amdgpu(_) => {
                // hsa_kernel_dispatch_packet_t: grid_size_{x,y,z} (work-items)
                // at bytes 12, 16, 20; blocks are `block_threads` x 1 x 1.
                let i8t = self.ctx.i8_type();
                let i32t = self.ctx.i32_type();
                let f = self.intrinsic("llvm.amdgcn.dispatch.ptr", &[])?;
                let packet = self
                    .b
                    .build_call(f, &[], "packet")?
                    .try_as_basic_value()
                    .basic()
                    .ok_or_else(|| EmitError::internal("dispatch.ptr returned nothing"))?
                    .into_pointer_value();
                let offset = i32t.const_int(12 + 4 * u64::from(axis), false);
                // SAFETY (of the generated code): the dispatch packet is 64
                // bytes; the offset stays inside it.
                let at = unsafe {
                    self.b
                        .build_in_bounds_gep(i8t, packet, &[offset], "grid_size")?
                };
                let size = self.b.build_load(i32t, at, "size")?.into_int_value();
                if axis == 0 {
                    Ok(self.b.build_int_unsigned_div(
                        size,
                        i32t.const_int(u64::from(block_threads), false),
                        "blocks",
                    )?)
                } else {
                    Ok(size)
                }
            }
        }
    }

    /// A block-wide barrier that also orders shared-memory accesses.
    pub(crate) fn barrier(&self) -> Result<(), EmitError> {
        match self.gpu()? {
            GpuTarget::Nvptx(_) => {
                let f = self.void_fn("llvm.nvvm.barrier0")?;
                self.b.build_call(f, &[], "")?;
            }
            GpuTarget::Amdgpu(_) => {
                self.b.build_fence(AtomicOrdering::Release, false, "")?;
                let f = self.intrinsic("llvm.amdgcn.s.barrier", &[])?;
                self.b.build_call(f, &[], "")?;
                self.b.build_fence(AtomicOrdering::Acquire, false, "")?;
            }
        }
        Ok(())
    }

    fn void_fn(&self, name: &str) -> Result<FunctionValue<'ctx>, EmitError> {
        Ok(self.module.get_function(name).unwrap_or_else(|| {
            self.module
                .add_function(name, self.ctx.void_type().fn_type(&[], false), None)
        }))
    }

    /// A warp shuffle of the 32-bit `value` with operand `b` over segments
    /// of `width` lanes (PTX `shfl.sync` semantics, all lanes active);
    /// `thread` is the thread's id in its block.
    pub(crate) fn shuffle32(
        &self,
        mode: ShuffleMode,
        width: u8,
        value: IntValue<'ctx>,
        b: IntValue<'ctx>,
        thread: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        let c = |v: u64| i32t.const_int(v, false);
        let seg_mask = (32 - u64::from(width)) & 0x1f;
        match self.gpu()? {
            GpuTarget::Nvptx(_) => {
                let clamp = if mode == ShuffleMode::Up { 0 } else { 0x1f };
                let name = format!("llvm.nvvm.shfl.sync.{}.i32", mode.name());
                let f = self.module.get_function(&name).unwrap_or_else(|| {
                    self.module.add_function(
                        &name,
                        i32t.fn_type(&[i32t.into(), i32t.into(), i32t.into(), i32t.into()], false),
                        None,
                    )
                });
                let args = [
                    c(0xffff_ffff).into(),
                    value.into(),
                    b.into(),
                    c((seg_mask << 8) | clamp).into(),
                ];
                self.b
                    .build_call(f, &args, "shfl")?
                    .try_as_basic_value()
                    .basic()
                    .map(|v| v.into_int_value())
                    .ok_or_else(|| EmitError::internal("shfl returned nothing"))
            }
            GpuTarget::Amdgpu(_) => {
                let bb = &self.b;
                let lane = bb.build_and(thread, c(31), "lane")?;
                let min_lane = bb.build_and(lane, c(seg_mask), "minlane")?;
                let clamp = if mode == ShuffleMode::Up {
                    0
                } else {
                    u64::from(width) - 1
                };
                let max_lane = bb.build_or(min_lane, c(clamp), "maxlane")?;
                let bv = bb.build_and(b, c(0x1f), "b")?;
                let (j, valid) = match mode {
                    ShuffleMode::Up => {
                        let j = bb.build_int_sub(lane, bv, "j")?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SGE, j, max_lane, "ok")?,
                        )
                    }
                    ShuffleMode::Down => {
                        let j = bb.build_int_add(lane, bv, "j")?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SLE, j, max_lane, "ok")?,
                        )
                    }
                    ShuffleMode::Bfly => {
                        let j = bb.build_xor(lane, bv, "j")?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SLE, j, max_lane, "ok")?,
                        )
                    }
                    ShuffleMode::Idx => {
                        let j = bb.build_or(
                            min_lane,
                            bb.build_and(bv, c(!seg_mask & 0x1f), "bi")?,
                            "j",
                        )?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SLE, j, max_lane, "ok")?,
                        )
                    }
                };
                let src = bb.build_select(valid, j, lane, "src")?.into_int_value();
                // The source's lane in the wave: this thread's wave lane
                // minus its warp lane plus the source's warp lane.
                let wave = match self.gpu()? {
                    GpuTarget::Amdgpu(Gfx::Gfx1100) => 32,
                    _ => 64,
                };
                let wave_lane = bb.build_and(thread, c(wave - 1), "wavelane")?;
                let hw = bb.build_int_add(bb.build_int_sub(wave_lane, lane, "base")?, src, "hw")?;
                let addr = bb.build_left_shift(hw, c(2), "addr")?;
                let f = self.intrinsic("llvm.amdgcn.ds.bpermute", &[])?;
                bb.build_call(f, &[addr.into(), value.into()], "bpermute")?
                    .try_as_basic_value()
                    .basic()
                    .map(|v| v.into_int_value())
                    .ok_or_else(|| EmitError::internal("ds.bpermute returned nothing"))
            }
        }
    }

    /// Makes `function` a kernel entry point.
    pub(crate) fn mark_kernel(&self, function: FunctionValue<'ctx>) -> Result<(), EmitError> {
        match self.gpu()? {
            GpuTarget::Nvptx(_) => {
                let annotation = self.ctx.metadata_node(&[
                    function.as_global_value().as_pointer_value().into(),
                    self.ctx.metadata_string("kernel").into(),
                    self.ctx.i32_type().const_int(1, false).into(),
                ]);
                self.module
                    .add_global_metadata("nvvm.annotations", &annotation)
                    .map_err(|e| EmitError::Internal(e.to_string()))
            }
            GpuTarget::Amdgpu(_) => {
                function.set_call_conventions(AMDGPU_KERNEL_CC);
                Ok(())
            }
        }
    }
}

fn axis_name(axis: u8) -> Result<&'static str, EmitError> {
    match axis {
        0 => Ok("x"),
        1 => Ok("y"),
        2 => Ok("z"),
        _ => Err(EmitError::Internal(format!("grid axis {axis}"))),
    }
}
