//! The shared memory of a kernel: where its allocations sit (one after
//! another, an alias where the allocation it reuses starts) and the LLVM
//! globals that hold them, static or, for an NVIDIA kernel needing more
//! than it may declare statically, one dynamic array.

use super::GpuEmitter;
use crate::EmitError;
use inkwell::types::BasicType;
use inkwell::values::PointerValue;
use inkwell::AddressSpace;
use tile_abi::ImageKind;
use tile_thread::program::Program;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// The start of each of `program`'s shared allocations: one internal
    /// global each, aligned as the allocation asks; or, for an NVIDIA
    /// kernel needing more than it may declare statically, aligned places
    /// in its one dynamic array (`tile_abi::image`), itself aligned to the
    /// largest alignment asked for.
    pub(super) fn shared_allocations(
        &self,
        program: &Program,
    ) -> Result<Vec<PointerValue<'ctx>>, EmitError> {
        let space = AddressSpace::from(self.gpu.shared_space());
        let layout = SharedLayout::of(program);
        if self.dynamic_shared(layout.bytes) > 0 {
            let i8t = self.ctx.i8_type();
            let array = self.module.add_global(
                i8t.array_type(0),
                Some(space),
                tile_abi::image::DYNAMIC_SHARED_SYMBOL,
            );
            array.set_linkage(inkwell::module::Linkage::External);
            array.set_alignment(layout.align as u32);
            let starts = layout
                .offsets
                .iter()
                .map(|&offset| {
                    let at = self.ctx.i64_type().const_int(offset as u64, false);
                    // SAFETY (of the generated code): the offsets stay
                    // inside the `bytes` the launch passes as dynamic
                    // shared memory.
                    unsafe { array.as_pointer_value().const_gep(i8t, &[at]) }
                })
                .collect();
            return Ok(starts);
        }
        let mut starts: Vec<PointerValue<'ctx>> = Vec::new();
        for (i, alloc) in program.shared.iter() {
            if let Some(root) = alloc.aliases {
                starts.push(starts[root.index()]);
                continue;
            }
            // Bytes when others alias it, else its own elements.
            let (bytes, align) = layout.extents[i.index()];
            let aliased = program.shared.iter().any(|(_, a)| a.aliases == Some(i));
            let ty = if aliased {
                self.ctx.i8_type().array_type(bytes as u32)
            } else {
                self.mem_type(alloc.dtype).array_type(alloc.len as u32)
            };
            let g = self
                .module
                .add_global(ty, Some(space), &format!("shared{}", i.index()));
            g.set_initializer(&ty.get_undef());
            g.set_linkage(inkwell::module::Linkage::Internal);
            g.set_alignment(if aliased { align } else { alloc.align } as u32);
            starts.push(g.as_pointer_value());
        }
        Ok(starts)
    }

    /// The dynamic shared memory of a kernel needing `bytes` on this
    /// target (0: it declares them).
    pub(super) fn dynamic_shared(&self, bytes: usize) -> usize {
        match self.gpu {
            super::GpuTarget::Nvptx(_) => ImageKind::Ptx.dynamic_shared_bytes(bytes),
            super::GpuTarget::Amdgpu(_) => 0,
        }
    }
}

/// The bytes of `program`'s shared allocations, each at its alignment and
/// padded to 16 bytes: what a block needs.
pub fn shared_bytes(program: &Program) -> usize {
    SharedLayout::of(program).bytes
}

/// Where a program's shared allocations sit: one after another, but for
/// those that alias an earlier one (`SharedAlloc::aliases`), which start
/// where it does.
struct SharedLayout {
    /// Each allocation's byte offset.
    offsets: Vec<usize>,
    /// Each allocation's extent: for one that others alias, the bytes and
    /// alignment of the largest of them all; for an alias, its own.
    extents: Vec<(usize, usize)>,
    /// The bytes of all, 16-byte padded.
    bytes: usize,
    /// The largest alignment of any.
    align: usize,
}

impl SharedLayout {
    fn of(program: &Program) -> SharedLayout {
        let mut extents: Vec<(usize, usize)> = program
            .shared
            .iter()
            .map(|(_, a)| (a.len * a.dtype.size_bytes(), a.align.max(16)))
            .collect();
        for (_, a) in program.shared.iter() {
            if let Some(root) = a.aliases {
                let (bytes, align) = &mut extents[root.index()];
                *bytes = (*bytes).max(a.len * a.dtype.size_bytes());
                *align = (*align).max(a.align);
            }
        }
        let mut layout = SharedLayout {
            offsets: Vec::new(),
            extents,
            bytes: 0,
            align: 16,
        };
        for (_, a) in program.shared.iter() {
            if let Some(root) = a.aliases {
                layout.offsets.push(layout.offsets[root.index()]);
                continue;
            }
            let (bytes, align) = layout.extents[layout.offsets.len()];
            let at = layout.bytes.next_multiple_of(align);
            layout.offsets.push(at);
            layout.bytes = (at + bytes).next_multiple_of(16);
            layout.align = layout.align.max(align);
        }
        layout
    }
}
