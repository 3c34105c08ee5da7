//! `arg` reductions (argmax, argmin): each lane keeps its best value and
//! index, in the interpreter's order, with NaN counting as the greatest and
//! the first index winning ties.

use super::error::HostError;
use super::frame::TileRef;
use super::kernel::HostKernel;
use super::reduce::Dims;
use crate::scalar::Nans;
use inkwell::values::{BasicValueEnum, IntValue};
use tile_ir::{ArgKind, CmpPred, DType, OpKind};

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// `arg` along the lanes: `best` holds each lane's best value so far,
    /// `out` its index. A NaN wins and then stays; otherwise a later element
    /// wins when it is strictly better (`-0 < +0`).
    pub(super) fn arg_fold(
        &mut self,
        x: &TileRef,
        best: &TileRef,
        out: &TileRef,
        d: Dims,
        kind: ArgKind,
    ) -> Result<(), HostError> {
        if d.extent < 2 {
            return Ok(());
        }
        let dtype = x.dtype;
        let (lane, along) = ((d.extent * d.inner) as i64, d.inner as i64);
        let bounds = [
            self.i64(d.outer as i64),
            self.i64(d.extent as i64 - 1),
            self.i64(d.inner as i64),
        ];
        self.nest(&bounds, &mut |l, c| {
            let (o, k1, i) = (c[0], c[1], c[2]);
            let b = &l.e.b;
            let k = b.build_int_nsw_add(k1, l.i64(1), "k")?;
            let from = l.linear(&[o, k, i], &[lane, along, 1], 0)?;
            let at = l.linear(&[o, i], &[along, 1], 0)?;
            let current = l.get(best, at)?;
            let v = l.get(x, from)?;
            let (before, after) = match kind {
                ArgKind::ArgMax => (current, v),
                ArgKind::ArgMin => (v, current),
            };
            let better = l.precedes(dtype, before, after)?;
            let better = if dtype.is_float() {
                let b = &l.e.b;
                let nan_v = l.is_nan(dtype, v)?;
                let nan_current = l.is_nan(dtype, current)?;
                let better = b.build_or(nan_v, better, "better")?;
                b.build_and(b.build_not(nan_current, "settled")?, better, "better")?
            } else {
                better
            };
            let b = &l.e.b;
            let value = b.build_select(better, v, current, "best")?;
            let index = b.build_int_truncate(k, l.e.ctx.i32_type(), "k32")?;
            let old = l.get(out, at)?;
            let index = b.build_select(better, index.into(), old, "arg")?;
            l.set(best, at, value)?;
            l.set(out, at, index)
        })
    }

    /// Whether `a` comes strictly before `b` (non-NaN floats: `-0 < +0`).
    fn precedes(
        &self,
        dtype: DType,
        a: BasicValueEnum<'ctx>,
        b: BasicValueEnum<'ctx>,
    ) -> Result<IntValue<'ctx>, HostError> {
        if dtype.is_float() {
            let (x, y) = (self.e.widen(a, dtype)?, self.e.widen(b, dtype)?);
            Ok(self.e.is_below(x, y)?)
        } else {
            Ok(self
                .apply(
                    &OpKind::Cmp(CmpPred::Lt),
                    &[dtype; 2],
                    &[a, b],
                    Nans::Canonical,
                )?
                .into_int_value())
        }
    }

    /// Whether the float `v` of `dtype` is a NaN.
    fn is_nan(&self, dtype: DType, v: BasicValueEnum<'ctx>) -> Result<IntValue<'ctx>, HostError> {
        Ok(self
            .apply(
                &OpKind::Cmp(CmpPred::Ne),
                &[dtype; 2],
                &[v, v],
                Nans::Canonical,
            )?
            .into_int_value())
    }
}
