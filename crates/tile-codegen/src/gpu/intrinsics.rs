//! What differs between the GPU targets: thread and block ids, the grid's
//! extent, barriers and how a function becomes a kernel (warp shuffles are
//! in `shuffle.rs`).
//!
//! NVPTX maps them to the `llvm.nvvm.*` intrinsics (`%tid`, `%ctaid`,
//! `%nctaid`, `bar.sync 0`, `shfl.sync`) and marks kernels with the
//! `ptx_kernel` calling convention and an `nvvm.reqntid` attribute. AMDGPU maps them to `llvm.amdgcn.*`: work-item and
//! work-group ids, the grid from the HSA dispatch packet, `s_barrier`
//! between workgroup fences, and shuffles through `ds_bpermute`, which reads
//! any lane of the wave: the program's 32-lane warps are the halves of a
//! wave64 (gfx90a, gfx942) or whole wave32s (gfx1100), and the source lane of
//! a shuffle is computed with `shfl.sync`'s rules inside the 32-lane warp.

use super::{Asm, GpuEmitter};
use crate::target::{Gfx, Sm, Target};
use crate::EmitError;
use inkwell::attributes::AttributeLoc;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Linkage;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue};
use tile_ir::{MemOrder, MemScope};

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

/// LLVM's `ptx_kernel` calling convention: an NVPTX `.entry`.
const PTX_KERNEL_CC: u32 = 71;

/// The name of AMDGPU's workgroup barrier function in a module.
const WORKGROUP_BARRIER: &str = "tile.workgroup.barrier";

impl GpuTarget {
    /// The GPU target of `target`, or `None` for the host.
    pub fn of(target: Target) -> Option<GpuTarget> {
        match target {
            Target::Nvptx(sm) => Some(GpuTarget::Nvptx(sm)),
            Target::Amdgpu(gfx) => Some(GpuTarget::Amdgpu(gfx)),
            Target::Host(_) => None,
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

impl<'ctx> GpuEmitter<'_, 'ctx> {
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
        match self.gpu {
            GpuTarget::Nvptx(_) => self.sreg("llvm.nvvm.read.ptx.sreg.tid.x"),
            GpuTarget::Amdgpu(_) => self.sreg("llvm.amdgcn.workitem.id.x"),
        }
    }

    /// The block's index along `axis`.
    pub(crate) fn block_id(&self, axis: u8) -> Result<IntValue<'ctx>, EmitError> {
        let xyz = axis_name(axis)?;
        match self.gpu {
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
        match self.gpu {
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
        match self.gpu {
            GpuTarget::Nvptx(_) => {
                // `bar.sync 0`.
                let f = self.intrinsic("llvm.nvvm.barrier.cta.sync.aligned.all", &[])?;
                let id = self.ctx.i32_type().const_zero();
                self.b.build_call(f, &[id.into()], "")?;
            }
            GpuTarget::Amdgpu(_) => {
                let f = self.workgroup_barrier()?;
                self.b.build_call(f, &[], "")?;
            }
        }
        Ok(())
    }

    /// AMDGPU's barrier between workgroup-scope fences, which order LDS and
    /// global accesses among the workgroup's waves without the system-scope
    /// cache writeback and invalidation a plain fence costs.
    fn workgroup_barrier(&self) -> Result<FunctionValue<'ctx>, EmitError> {
        self.ir_helper(
            WORKGROUP_BARRIER,
            "declare void @llvm.amdgcn.s.barrier()\n",
            "fence syncscope(\"workgroup\") release\n\
             call void @llvm.amdgcn.s.barrier()\n\
             fence syncscope(\"workgroup\") acquire\n",
        )
    }

    /// A fence of this thread: LLVM's `fence` at the block's or the
    /// device's `syncscope` (NVPTX `block`/`device`, printed as
    /// `fence.acq_rel` or `fence.sc` at `.cta` or `.gpu`; AMDGPU
    /// `workgroup`/`agent`). PTX has no acquire-only or release-only fence,
    /// so NVPTX asks for `acq_rel` (what it prints for either), which the
    /// emulation target then models as such.
    pub(crate) fn fence(&self, order: MemOrder, scope: MemScope) -> Result<(), EmitError> {
        let ordering = match (self.gpu, order) {
            (_, MemOrder::SeqCst) => "seq_cst",
            (GpuTarget::Amdgpu(_), MemOrder::Acquire) => "acquire",
            (GpuTarget::Amdgpu(_), MemOrder::Release) => "release",
            _ => "acq_rel",
        };
        let syncscope = match (self.gpu, scope) {
            (GpuTarget::Nvptx(_), MemScope::Cta) => "block",
            (GpuTarget::Nvptx(_), MemScope::Gpu) => "device",
            (GpuTarget::Amdgpu(_), MemScope::Cta) => "workgroup",
            (GpuTarget::Amdgpu(_), MemScope::Gpu) => "agent",
        };
        let name = format!("tile.fence.{ordering}.{syncscope}");
        let body = format!("fence syncscope(\"{syncscope}\") {ordering}\n");
        let f = self.ir_helper(&name, "", &body)?;
        self.b.build_call(f, &[], "")?;
        Ok(())
    }

    /// `griddepcontrol.wait` (`wait`) or `.launch_dependents`: PTX on sm_90
    /// and later, where a launch may overlap the one before it; nothing
    /// elsewhere (earlier NVIDIA targets and AMDGPU start a launch only
    /// once the one before it has finished).
    pub(crate) fn grid_dep_control(
        &self,
        wait: bool,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        match self.gpu {
            GpuTarget::Nvptx(sm) if sm.number() >= 90 => {
                self.inline_asm(Asm::GridDepControl { wait }, &[])
            }
            GpuTarget::Nvptx(_) | GpuTarget::Amdgpu(_) => Ok(Vec::new()),
        }
    }

    /// The `void @name()` of `body` (after the `declarations`), parsed from
    /// IR text and linked into the module once: LLVM's C API cannot set a
    /// fence's scope.
    fn ir_helper(
        &self,
        name: &str,
        declarations: &str,
        body: &str,
    ) -> Result<FunctionValue<'ctx>, EmitError> {
        if let Some(f) = self.module.get_function(name) {
            return Ok(f);
        }
        let text = format!(
            "target datalayout = \"{}\"\ntarget triple = \"{}\"\n{declarations}\
             define void @{name}() alwaysinline {{\n{body}ret void\n}}\n",
            self.module.get_data_layout().as_str().to_string_lossy(),
            self.module.get_triple().as_str().to_string_lossy(),
        );
        let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), name);
        let helper = self
            .ctx
            .create_module_from_ir(buffer)
            .map_err(|e| EmitError::Internal(format!("`{name}`: {e}")))?;
        self.module
            .link_in_module(helper)
            .map_err(|e| EmitError::Internal(format!("linking `{name}`: {e}")))?;
        let f = self
            .module
            .get_function(name)
            .ok_or_else(|| EmitError::Internal(format!("`{name}` is missing after linking")))?;
        // Linked with external linkage, so the linker keeps it unused.
        f.set_linkage(Linkage::Internal);
        Ok(f)
    }

    /// Marks parameter `n` (0-based) of the NVPTX kernel `function` a
    /// `__grid_constant__`: a by-value parameter whose address the kernel
    /// takes and never writes through (a tensor map).
    pub(crate) fn grid_constant(
        &self,
        function: FunctionValue<'ctx>,
        n: u32,
    ) -> Result<(), EmitError> {
        let attribute = self.ctx.create_string_attribute("nvvm.grid_constant", "");
        function.add_attribute(AttributeLoc::Param(n), attribute);
        Ok(())
    }

    /// Makes `function` a kernel entry point for blocks of exactly
    /// `block_threads` threads: on NVPTX `.entry` with `.reqntid`, on AMDGPU
    /// the kernel calling convention with a flat workgroup size of exactly
    /// that many work-items, so neither backend budgets registers for the
    /// 1,024-thread blocks it assumes otherwise.
    pub(crate) fn mark_kernel(
        &self,
        function: FunctionValue<'ctx>,
        block_threads: u32,
    ) -> Result<(), EmitError> {
        match self.gpu {
            GpuTarget::Nvptx(_) => {
                function.set_call_conventions(PTX_KERNEL_CC);
                let threads = format!("{block_threads},1,1");
                let attribute = self.ctx.create_string_attribute("nvvm.reqntid", &threads);
                function.add_attribute(AttributeLoc::Function, attribute);
                Ok(())
            }
            GpuTarget::Amdgpu(_) => {
                function.set_call_conventions(AMDGPU_KERNEL_CC);
                let size = format!("{block_threads},{block_threads}");
                let attribute = self
                    .ctx
                    .create_string_attribute("amdgpu-flat-work-group-size", &size);
                function.add_attribute(AttributeLoc::Function, attribute);
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
