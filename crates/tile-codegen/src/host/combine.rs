//! `reduce_with` and `scan_with` in the interpreter's order: each lane of
//! the operands, seen as `[outer, extent, inner]` around the axis, folded
//! left to right by the combine function, whose scalar ops are emitted in
//! the loop body on the accumulators and the next elements (no order is
//! assumed: the function need not be associative).

use super::error::HostError;
use super::frame::TileRef;
use super::kernel::{HostKernel, HostValue};
use super::reduce::Dims;
use tile_ir::{OpId, OpKind};

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `reduce_with` or `scan_with`.
    pub(super) fn combine(&mut self, id: OpId) -> Result<(), HostError> {
        let op = self.func.op(id);
        let (axis, scan) = match op.kind {
            OpKind::ReduceWith { axis, .. } => (axis, false),
            OpKind::ScanWith { axis } => (axis, true),
            _ => return Err(HostError::internal("not a combine")),
        };
        let [region] = op.regions.as_slice() else {
            return Err(HostError::internal("a combine without its function"));
        };
        let xs: Vec<TileRef> = op
            .operands
            .iter()
            .map(|&x| self.tile(x))
            .collect::<Result<_, _>>()?;
        let Some(shape) = xs.first().map(|x| x.shape.clone()) else {
            return Err(HostError::internal("a combine without operands"));
        };
        let extent = *shape
            .get(axis)
            .ok_or_else(|| HostError::internal("a combined axis out of range"))?;
        let d = Dims {
            outer: shape[..axis].iter().product(),
            extent,
            inner: shape[axis + 1..].iter().product(),
        };
        let mut outs = Vec::with_capacity(xs.len());
        for x in &xs {
            let out = if scan {
                let out = self.place(&shape, x.dtype);
                self.copy(&out, x)?;
                out
            } else {
                let out = self.place(&[d.outer, d.inner], x.dtype);
                self.first_of_lanes(x, &out, d)?;
                out
            };
            outs.push(out);
        }
        self.lane_steps(d, scan, &mut |l, step| {
            let mut args = Vec::with_capacity(2 * outs.len());
            for out in &outs {
                args.push(l.get(out, step.read)?);
            }
            for x in &xs {
                args.push(l.get(x, step.from)?);
            }
            for (&arg, value) in region.args.iter().zip(args) {
                l.define(arg, HostValue::Scalar(value));
            }
            let yielded = l.region(region)?;
            for (out, v) in outs.iter().zip(yielded) {
                let value = l.scalar(v)?;
                l.set(out, step.write, value)?;
            }
            Ok(())
        })?;
        let results = op.results.clone();
        for (result, out) in results.into_iter().zip(outs) {
            self.define_reduction(result, out)?;
        }
        Ok(())
    }
}
