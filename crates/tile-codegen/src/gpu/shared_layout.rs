//! The shared memory of a kernel: where its allocations sit (one after
//! another, the most aligned first, an alias where the allocation it
//! reuses starts) and the LLVM
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
        // One global per allocation that aliases none, declared in the
        // layout's order; an alias starts where its allocation does.
        let mut starts: Vec<Option<PointerValue<'ctx>>> = vec![None; program.shared.len()];
        for &i in &layout.order {
            let id = tile_thread::program::SharedId::from_index(i);
            let alloc = &program.shared[id];
            // Bytes when others alias it, else its own elements.
            let (bytes, align) = layout.extents[i];
            let aliased = program.shared.iter().any(|(_, a)| a.aliases == Some(id));
            let ty = if aliased {
                self.ctx.i8_type().array_type(bytes as u32)
            } else {
                self.mem_type(alloc.dtype).array_type(alloc.len as u32)
            };
            let g = self
                .module
                .add_global(ty, Some(space), &format!("shared{i}"));
            g.set_initializer(&ty.get_undef());
            g.set_linkage(inkwell::module::Linkage::Internal);
            g.set_alignment(if aliased { align } else { alloc.align } as u32);
            starts[i] = Some(g.as_pointer_value());
        }
        let starts = program
            .shared
            .iter()
            .map(|(id, _)| starts[program.shared_root(id).index()])
            .collect::<Option<Vec<_>>>();
        starts.ok_or_else(|| EmitError::Unsupported {
            what: "a shared allocation aliasing another alias".into(),
        })
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

/// Where a program's shared allocations sit: one after another, the most
/// aligned first, but for those that alias an earlier one
/// (`SharedAlloc::aliases`), which start where it does.
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
    /// The allocations that alias none, in the order they are placed.
    order: Vec<usize>,
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
        let roots: Vec<usize> = program
            .shared
            .iter()
            .filter(|(_, a)| a.aliases.is_none())
            .map(|(id, _)| id.index())
            .collect();
        let mut offsets = vec![0; extents.len()];
        let (mut bytes, mut align) = (0usize, 16usize);
        // The most aligned first (in program order among equals), so that a
        // small allocation (an mbarrier, tensor memory's address) does not
        // pad the block's bytes up to a 1024-byte swizzle's alignment.
        let mut order = roots;
        order.sort_by_key(|&i| std::cmp::Reverse(extents[i].1));
        for &i in &order {
            let (size, at_align) = extents[i];
            let at = bytes.next_multiple_of(at_align);
            offsets[i] = at;
            bytes = (at + size).next_multiple_of(16);
            align = align.max(at_align);
        }
        for (id, a) in program.shared.iter() {
            if let Some(root) = a.aliases {
                offsets[id.index()] = offsets[root.index()];
            }
        }
        SharedLayout {
            offsets,
            extents,
            bytes,
            align,
            order,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::DType;

    /// A 1024-byte aligned operand staging comes first: the tensor-memory
    /// address slot and the mbarrier allocated before it do not pad the
    /// block to a second KiB.
    #[test]
    fn the_most_aligned_allocations_come_first() {
        let mut program = Program::new("k", 4);
        let slot = program.alloc_shared(DType::I32, 1);
        let bar = program.alloc_shared(DType::U64, 1);
        let staged = program.alloc_shared(DType::F16, 8192);
        program.shared[staged].align = 1024;
        let alias = program.alloc_shared(DType::F32, 128);
        program.shared[alias].aliases = Some(staged);
        let layout = SharedLayout::of(&program);
        assert_eq!(layout.offsets, vec![16384, 16400, 0, 0]);
        assert_eq!(layout.bytes, 16384 + 32);
        assert_eq!(
            layout.order,
            vec![staged.index(), slot.index(), bar.index()]
        );
        assert_eq!(shared_bytes(&program), 16416);
    }
}
