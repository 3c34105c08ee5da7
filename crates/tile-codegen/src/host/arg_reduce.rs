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
        let dtype = x.dtype;
        self.lane_steps(d, false, &mut |l, step| {
            let (k, at) = (step.k, step.read);
            let current = l.get(best, at)?;
            let v = l.get(x, step.from)?;
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
