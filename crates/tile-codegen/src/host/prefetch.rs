//! Prefetches of the tile the next program instance loads.
//!
//! The CPU device runs consecutive program ids on the same worker (x
//! fastest, `tile_runtime::cpu` hands out runs of them). A load whose
//! partition index along the tensor's last axis is `program_id(0)` is then
//! followed, on the same core, by the load of the next tile along the same
//! rows: for a transpose's `[32, 32]` tiles of a `[4096, 4096]` tensor, 32
//! rows of 128 bytes, 16 KiB apart. Hardware prefetchers follow sequential
//! streams within a page, not a few lines from each of 32 pages, so each of
//! the next tile's lines is prefetched while this tile is read: the example
//! transpose went from 32% to 36% of copy (medians of six alternated runs of
//! `cpu --bench transpose`, docs/benchmarks.md). Tiles whose rows are contiguous (the index along
//! the leading axis is the program id, as in layernorm or a vector add) are
//! left to the hardware. A prefetch never faults, so the next tile may lie
//! past the tensor's end.

use super::error::HostError;
use super::kernel::HostKernel;
use super::memory::Partition;
use inkwell::intrinsics::Intrinsic;
use inkwell::values::{IntValue, PointerValue};
use tile_ir::{DType, OpKind, Value};

/// The cache line, the unit of a prefetch.
const LINE: usize = 64;

/// Whether a load at partition `indices` of a tensor of rank `indices.len()`
/// is followed by the next program's load of the next tile along the rows.
pub(super) fn next_tile_along_rows(func: &tile_ir::Function, indices: &[Value]) -> bool {
    let Some(&last) = indices.last() else {
        return false;
    };
    indices.len() >= 2
        && func
            .defining_op(last)
            .is_some_and(|id| matches!(func.op(id).kind, OpKind::ProgramId { axis: 0 }))
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Prefetches, for every row of the `shape` tile of `part` at `base`,
    /// the lines of the next tile along the last axis.
    pub(super) fn prefetch_next_tile(
        &mut self,
        part: &Partition<'ctx>,
        base: PointerValue<'ctx>,
        shape: &[usize],
        dtype: DType,
    ) -> Result<(), HostError> {
        let Some((&cols, rows)) = shape.split_last() else {
            return Ok(());
        };
        let lines = (cols * dtype.size_bytes()).div_ceil(LINE);
        let prefetch = Intrinsic::find("llvm.prefetch")
            .ok_or_else(|| HostError::internal("no llvm.prefetch"))?;
        let ptr = self.e.ctx.ptr_type(inkwell::AddressSpace::default());
        let declaration = prefetch
            .get_declaration(self.e.module, &[ptr.into()])
            .ok_or_else(|| HostError::internal("declaring llvm.prefetch"))?;
        let i32t = self.e.ctx.i32_type();
        // Read, keep in all levels, data cache.
        let flags = [0, 3, 1].map(|v| i32t.const_int(v, false).into());
        let bounds: Vec<IntValue<'ctx>> = rows.iter().map(|&r| self.i64(r as i64)).collect();
        let element = self.e.mem_type(dtype);
        let i8t = self.e.ctx.i8_type();
        self.nest(&bounds, &mut |l, j| {
            let mut j = j.to_vec();
            j.push(l.i64(cols as i64));
            let at = l.tensor_offset(part, &j)?;
            let row = l.gep(element, base, at)?;
            for line in 0..lines {
                let address = l.gep(i8t.into(), row, l.i64((line * LINE) as i64))?;
                let args = [address.into(), flags[0], flags[1], flags[2]];
                l.e.b.build_call(declaration, &args, "")?;
            }
            Ok(())
        })
    }
}
