//! The bounds checks of layout-view accesses: every offset of a tile inside the
//! tensor's element space, a masked view whole before an unmasked access, and
//! the per-element guard of a masked one.

use super::LViewRef;
use crate::host::check::Code;
use crate::host::error::HostError;
use crate::host::kernel::HostKernel;
use inkwell::values::IntValue;
use inkwell::IntPredicate;
use tile_ir::lview::derive::tile_shape;
use tile_ir::OpId;

impl<'ctx> HostKernel<'_, 'ctx> {
    /// Checks that every offset of `view`'s tile lies in `[0, space)`: its
    /// lowest and highest offsets, static relative to the base; under a
    /// swizzle, each offset in a pass of its own.
    pub(super) fn check_inside(
        &mut self,
        id: OpId,
        view: &LViewRef<'ctx>,
        space: IntValue<'ctx>,
    ) -> Result<(), HostError> {
        if view.swizzle.is_some() {
            return self.check_each_inside(id, view, space);
        }
        let (mut low, mut high) = (0i64, 0i64);
        for mode in view.layout.modes() {
            let offsets = (0..mode.size()).map(|j| mode.call(j));
            low += offsets.clone().min().unwrap_or(0);
            high += offsets.max().unwrap_or(0);
        }
        let i128t = self.e.ctx.i128_type();
        let b = &self.e.b;
        let low = b.build_int_add(view.base, i128t.const_int(low as u64, true), "low")?;
        let high = b.build_int_add(view.base, i128t.const_int(high as u64, true), "high")?;
        let from = b.build_int_compare(IntPredicate::SGE, low, i128t.const_zero(), "from")?;
        let to = b.build_int_compare(IntPredicate::SLT, high, space, "to")?;
        let ok = b.build_and(from, to, "inside")?;
        let base = b.build_int_truncate(view.base, self.e.ctx.i64_type(), "base")?;
        self.check(ok, id, Code::LViewOutside, &[base])
    }

    /// Checks each offset of `view`'s tile against `[0, space)`, before any
    /// access: the failures are counted in a loop over the tile.
    pub(super) fn check_each_inside(
        &mut self,
        id: OpId,
        view: &LViewRef<'ctx>,
        space: IntValue<'ctx>,
    ) -> Result<(), HostError> {
        let shape = tile_shape(&view.layout).map_err(HostError::internal)?.0;
        let i64t = self.e.ctx.i64_type();
        let outside = self.local(i64t.into())?;
        self.e.b.build_store(outside, self.i64(0))?;
        self.nest_static(&shape, &mut |l, j| {
            let at = l.view_offset(view, j)?;
            let inside = l.in_space(at, space)?;
            let b = &l.e.b;
            let miss = b.build_int_z_extend(b.build_not(inside, "miss")?, i64t, "miss")?;
            let count = b.build_load(i64t, outside, "count")?.into_int_value();
            b.build_store(outside, b.build_int_add(count, miss, "count")?)?;
            Ok(())
        })?;
        let b = &self.e.b;
        let count = b.build_load(i64t, outside, "count")?.into_int_value();
        let ok = b.build_int_compare(IntPredicate::EQ, count, self.i64(0), "inside")?;
        let base = b.build_int_truncate(view.base, i64t, "base")?;
        self.check(ok, id, Code::LViewOutside, &[base])
    }

    /// Whether the offset `at` (an `i128`) lies in `[0, space)`.
    pub(super) fn in_space(
        &self,
        at: IntValue<'ctx>,
        space: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, HostError> {
        let b = &self.e.b;
        let from =
            b.build_int_compare(IntPredicate::SGE, at, at.get_type().const_zero(), "from")?;
        let to = b.build_int_compare(IntPredicate::SLT, at, space, "to")?;
        Ok(b.build_and(from, to, "inside")?)
    }

    /// Checks that a masked `view` is whole: its extent along each mode,
    /// in order, is the mode's size (the values recorded are the mode and
    /// its extent).
    pub(super) fn check_whole(&mut self, id: OpId, view: &LViewRef<'ctx>) -> Result<(), HostError> {
        let Some(extents) = &view.extents else {
            return Ok(());
        };
        for (k, (&extent, mode)) in extents.iter().zip(view.layout.modes()).enumerate() {
            let whole = self.e.b.build_int_compare(
                IntPredicate::SGE,
                extent,
                self.i64(mode.size()),
                "whole",
            )?;
            let k = self.i64(k as i64);
            self.check(whole, id, Code::LViewPastEdge, &[k, extent])?;
        }
        Ok(())
    }

    /// Runs `body` with the offset as an `i64` where element `j` of `view`
    /// is within its extents and its offset `at` lies in `[0, space)` (only
    /// there when `masked`; unmasked accesses were checked whole).
    pub(super) fn when_inside(
        &mut self,
        masked: bool,
        view: &LViewRef<'ctx>,
        j: &[IntValue<'ctx>],
        at: IntValue<'ctx>,
        space: IntValue<'ctx>,
        body: &mut dyn FnMut(&mut Self, IntValue<'ctx>) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        let i64t = self.e.ctx.i64_type();
        let at64 = self.e.b.build_int_truncate(at, i64t, "at")?;
        if !masked {
            return body(self, at64);
        }
        let mut inside = self.in_space(at, space)?;
        let b = &self.e.b;
        for (&j, &extent) in j.iter().zip(view.extents.iter().flatten()) {
            let within = b.build_int_compare(IntPredicate::SLT, j, extent, "within")?;
            inside = b.build_and(inside, within, "inside")?;
        }
        let ctx = self.e.ctx;
        let (yes, done) = (
            ctx.append_basic_block(self.f, "inside"),
            ctx.append_basic_block(self.f, "next"),
        );
        self.e.b.build_conditional_branch(inside, yes, done)?;
        self.e.b.position_at_end(yes);
        body(self, at64)?;
        self.e.b.build_unconditional_branch(done)?;
        self.e.b.position_at_end(done);
        Ok(())
    }
}
