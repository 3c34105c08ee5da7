//! Tiles in the frame, and the loops over their elements.
//!
//! Every tile value has a fixed place in the frame, a per-worker scratch
//! buffer the runner passes to each program instance: its elements in
//! row-major order (bool as one byte 0 or 1), at an offset aligned to 64
//! bytes. Places are taken like a stack: those of the values of a `for` or
//! `if` region are freed once its code is emitted (its values are not visible
//! after it), so sibling regions share them; a loop body's places are
//! overwritten on each iteration.

use super::alias::Memory;
use super::error::HostError;
use super::kernel::HostKernel;
use crate::unroll;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, InstructionValue, IntValue, PointerValue};
use inkwell::IntPredicate;
use tile_ir::{DType, Scalar, Type, Value};

/// The alignment of each tile's place, in bytes.
const ALIGN: u64 = 64;

/// A tile's place in the frame: byte offset, shape and dtype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TileRef {
    pub(super) at: u64,
    pub(super) shape: Vec<usize>,
    pub(super) dtype: DType,
}

impl TileRef {
    /// The number of elements.
    pub(super) fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The row-major strides of the shape, in elements.
    pub(super) fn strides(&self) -> Vec<i64> {
        row_major(&self.shape)
    }
}

/// The row-major strides of `shape`, in elements.
pub(super) fn row_major(shape: &[usize]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1] as i64;
    }
    strides
}

/// The body of a loop nest: called with the loop counters (`i64`).
pub(super) type Body<'b, 'a, 'ctx> =
    dyn FnMut(&mut HostKernel<'a, 'ctx>, &[IntValue<'ctx>]) -> Result<(), HostError> + 'b;

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// A new place for a tile of `shape` and `dtype`.
    pub(super) fn place(&mut self, shape: &[usize], dtype: DType) -> TileRef {
        let at = self.frame_top.div_ceil(ALIGN) * ALIGN;
        let numel: usize = shape.iter().product();
        self.frame_top = at + (numel * dtype.size_bytes()) as u64;
        self.frame_bytes = self.frame_bytes.max(self.frame_top);
        TileRef {
            at,
            shape: shape.to_vec(),
            dtype,
        }
    }

    /// Runs `body` (the code of a region and the copies of what it yields)
    /// and then frees the places it took: values defined in a region are not
    /// visible after it, and the homes its results go to were placed before.
    pub(super) fn scoped(
        &mut self,
        body: &mut dyn FnMut(&mut Self) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        let mark = self.frame_top;
        body(self)?;
        self.frame_top = mark;
        Ok(())
    }

    /// A new place for the tile value `v`.
    pub(super) fn place_of(&mut self, v: Value) -> Result<TileRef, HostError> {
        match self.func.ty(v) {
            Type::Tile(t) => Ok(self.place(t.shape.dims(), t.dtype)),
            other => Err(HostError::internal(format!("a place for a {other}"))),
        }
    }

    /// `ptr + index` elements of `ty`.
    pub(super) fn gep(
        &self,
        ty: BasicTypeEnum<'ctx>,
        ptr: PointerValue<'ctx>,
        index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, HostError> {
        // SAFETY (of the generated code): every address is formed inside its
        // object — a frame place within the frame's size, a packet slot of
        // a parameter, an element the bounds checks before it proved inside
        // the tensor — and only such addresses are dereferenced.
        Ok(unsafe { self.e.b.build_gep(ty, ptr, &[index], "at")? })
    }

    /// The address of element `index` of `tile`.
    pub(super) fn element(
        &self,
        tile: &TileRef,
        index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, HostError> {
        let i64t = self.e.ctx.i64_type();
        let place = self.gep(
            self.e.ctx.i8_type().into(),
            self.frame,
            i64t.const_int(tile.at, false),
        )?;
        self.gep(self.e.mem_type(tile.dtype), place, index)
    }

    /// Element `index` (`i64`) of `tile`, in its register type.
    pub(super) fn get(
        &self,
        tile: &TileRef,
        index: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let at = self.element(tile, index)?;
        let v = self.e.b.build_load(self.e.mem_type(tile.dtype), at, "el")?;
        self.mark(v.as_instruction_value(), Memory::Frame)?;
        Ok(self.e.register_value(v, tile.dtype)?)
    }

    /// Writes `v` (in its register type) to element `index` of `tile`.
    pub(super) fn set(
        &self,
        tile: &TileRef,
        index: IntValue<'ctx>,
        v: BasicValueEnum<'ctx>,
    ) -> Result<(), HostError> {
        let at = self.element(tile, index)?;
        let v = self.e.memory_value(v, tile.dtype)?;
        let store = self.e.b.build_store(at, v)?;
        self.mark(Some(store), Memory::Frame)
    }

    /// Marks `access` (a load or store, `None` if it is not an
    /// instruction) as touching `memory` only (`alias.rs`).
    pub(super) fn mark(
        &self,
        access: Option<InstructionValue<'ctx>>,
        memory: Memory,
    ) -> Result<(), HostError> {
        let access = access
            .ok_or_else(|| HostError::internal("a memory access that is not an instruction"))?;
        self.scopes.mark(access, memory)
    }

    /// The `i64` constant `v`.
    pub(super) fn i64(&self, v: i64) -> IntValue<'ctx> {
        self.e.ctx.i64_type().const_int(v as u64, true)
    }

    /// `start + Σ coords[k] · strides[k]` in `i64`.
    pub(super) fn linear(
        &self,
        coords: &[IntValue<'ctx>],
        strides: &[i64],
        start: i64,
    ) -> Result<IntValue<'ctx>, HostError> {
        let mut at = self.i64(start);
        for (&c, &s) in coords.iter().zip(strides) {
            if s == 0 {
                continue;
            }
            let term = self.e.b.build_int_nsw_mul(c, self.i64(s), "term")?;
            at = self.e.b.build_int_nsw_add(at, term, "lin")?;
        }
        Ok(at)
    }

    /// Runs `body` with `i = 0, 1, …, n − 1` (`n` an `i64`).
    pub(super) fn counted(
        &mut self,
        n: IntValue<'ctx>,
        body: &mut dyn FnMut(&mut Self, IntValue<'ctx>) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        let ctx = self.e.ctx;
        let i64t = ctx.i64_type();
        let pre = self.current_block()?;
        let header = ctx.append_basic_block(self.f, "loop");
        let inside = ctx.append_basic_block(self.f, "body");
        let exit = ctx.append_basic_block(self.f, "exit");
        self.e.b.build_unconditional_branch(header)?;
        self.e.b.position_at_end(header);
        let phi = self.e.b.build_phi(i64t, "i")?;
        phi.add_incoming(&[(&i64t.const_zero(), pre)]);
        let i = phi.as_basic_value().into_int_value();
        let go = self.e.b.build_int_compare(IntPredicate::SLT, i, n, "go")?;
        self.e.b.build_conditional_branch(go, inside, exit)?;
        self.e.b.position_at_end(inside);
        let inner_before = self.loops;
        self.loops += 1;
        body(self, i)?;
        let next = self
            .e
            .b
            .build_int_nsw_add(i, i64t.const_int(1, false), "next")?;
        let latch = self.current_block()?;
        let back = self.e.b.build_unconditional_branch(header)?;
        let short = n
            .get_zero_extended_constant()
            .is_some_and(|trips| trips <= unroll::SHORT_TRIPS);
        if self.loops > inner_before + 1 && !short {
            unroll::disable_unrolling(ctx, back);
        }
        phi.add_incoming(&[(&next, latch)]);
        self.e.b.position_at_end(exit);
        Ok(())
    }

    /// Runs `body` for every coordinate below `bounds` (`i64` values), the
    /// last axis innermost.
    pub(super) fn nest(
        &mut self,
        bounds: &[IntValue<'ctx>],
        body: &mut Body<'_, 'a, 'ctx>,
    ) -> Result<(), HostError> {
        let mut coords = Vec::with_capacity(bounds.len());
        self.nest_from(bounds, &mut coords, body)
    }

    fn nest_from(
        &mut self,
        bounds: &[IntValue<'ctx>],
        coords: &mut Vec<IntValue<'ctx>>,
        body: &mut Body<'_, 'a, 'ctx>,
    ) -> Result<(), HostError> {
        match bounds.split_first() {
            None => body(self, coords),
            Some((&n, rest)) => self.counted(n, &mut |l, i| {
                coords.push(i);
                l.nest_from(rest, coords, body)?;
                coords.pop();
                Ok(())
            }),
        }
    }

    /// [`Self::nest`] over a static shape.
    pub(super) fn nest_static(
        &mut self,
        shape: &[usize],
        body: &mut Body<'_, 'a, 'ctx>,
    ) -> Result<(), HostError> {
        let bounds: Vec<IntValue<'ctx>> = shape.iter().map(|&e| self.i64(e as i64)).collect();
        self.nest(&bounds, body)
    }

    /// Every element of `tile` set to `value`.
    pub(super) fn fill(&mut self, tile: &TileRef, value: Scalar) -> Result<(), HostError> {
        let v = self.e.constant(value)?;
        let n = self.i64(tile.numel() as i64);
        self.counted(n, &mut |l, i| l.set(tile, i, v))
    }

    /// `dst` receives a copy of `src` (same dtype and size).
    pub(super) fn copy(&mut self, dst: &TileRef, src: &TileRef) -> Result<(), HostError> {
        if dst.at == src.at {
            return Ok(());
        }
        let i8t = self.e.ctx.i8_type();
        let to = self.gep(i8t.into(), self.frame, self.i64(dst.at as i64))?;
        let from = self.gep(i8t.into(), self.frame, self.i64(src.at as i64))?;
        let bytes = self.i64((src.numel() * src.dtype.size_bytes()) as i64);
        self.e.b.build_memcpy(to, 8, from, 8, bytes)?;
        Ok(())
    }

    /// Copies the elements of `shape` from `src` at `src_start + Σ c·src_strides`
    /// to `dst` at `dst_start + Σ c·dst_strides` (element offsets).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn copy_affine(
        &mut self,
        shape: &[usize],
        dst: &TileRef,
        dst_start: i64,
        dst_strides: &[i64],
        src: &TileRef,
        src_start: i64,
        src_strides: &[i64],
    ) -> Result<(), HostError> {
        self.nest_static(shape, &mut |l, c| {
            let from = l.linear(c, src_strides, src_start)?;
            let to = l.linear(c, dst_strides, dst_start)?;
            let v = l.get(src, from)?;
            l.set(dst, to, v)
        })
    }

    /// Runs `then` where `cond` (an `i1`) holds and `otherwise` elsewhere.
    pub(super) fn either(
        &mut self,
        cond: IntValue<'ctx>,
        then: &mut dyn FnMut(&mut Self) -> Result<(), HostError>,
        otherwise: &mut dyn FnMut(&mut Self) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        self.branches(cond, &mut |l, holds| {
            if holds {
                then(l)
            } else {
                otherwise(l)
            }
        })
    }

    /// Runs `body(true)` where `cond` (an `i1`) holds and `body(false)`
    /// elsewhere.
    pub(super) fn branches(
        &mut self,
        cond: IntValue<'ctx>,
        body: &mut dyn FnMut(&mut Self, bool) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        let ctx = self.e.ctx;
        let (yes, no, merge) = (
            ctx.append_basic_block(self.f, "then"),
            ctx.append_basic_block(self.f, "else"),
            ctx.append_basic_block(self.f, "merge"),
        );
        self.e.b.build_conditional_branch(cond, yes, no)?;
        self.e.b.position_at_end(yes);
        body(self, true)?;
        self.e.b.build_unconditional_branch(merge)?;
        self.e.b.position_at_end(no);
        body(self, false)?;
        self.e.b.build_unconditional_branch(merge)?;
        self.e.b.position_at_end(merge);
        Ok(())
    }

    /// The block the builder is in.
    pub(super) fn current_block(
        &self,
    ) -> Result<inkwell::basic_block::BasicBlock<'ctx>, HostError> {
        self.e
            .b
            .get_insert_block()
            .ok_or_else(|| HostError::internal("the builder is not in a block"))
    }

    /// A new stack slot of `ty` in the entry block.
    pub(super) fn local(&self, ty: BasicTypeEnum<'ctx>) -> Result<PointerValue<'ctx>, HostError> {
        Ok(self.allocas.build_alloca(ty, "local")?)
    }
}

#[cfg(test)]
mod tests {
    use super::row_major;

    #[test]
    fn row_major_strides() {
        assert_eq!(row_major(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(row_major(&[]), Vec::<i64>::new());
    }
}
