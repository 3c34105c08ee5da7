//! `reduce_with` and `scan_with`: lanes folded left to right by the op's
//! region, the kernel author's combine function. Element 0 of each lane
//! starts the fold; each next element `k` gives `acc = combine(acc, x[k])`
//! (a scan keeps `acc` after every step).

use super::reduce::Lanes;
use super::value::{RtValue, Tile};
use super::{Fault, InterpError, Interpreter};
use crate::function::{Op, OpId};
use crate::ops::OpKind;
use crate::scalar::Scalar;

impl<'a> Interpreter<'a> {
    /// Runs a `reduce_with` or `scan_with` op.
    pub(super) fn run_combine(
        &mut self,
        id: OpId,
        op: &'a Op,
        operands: &[RtValue],
    ) -> Result<Vec<RtValue>, InterpError> {
        let (axis, keepdim) = match op.kind {
            OpKind::ReduceWith { axis, keepdim } => (axis, Some(keepdim)),
            OpKind::ScanWith { axis } => (axis, None),
            _ => return Err(self.error(id, Fault::Type("not a combine".into()))),
        };
        let [region] = op.regions.as_slice() else {
            return Err(self.error(id, Fault::Type("a combine needs one region".into())));
        };
        let tiles: Vec<&Tile> = operands
            .iter()
            .map(|v| v.tile("a combined operand"))
            .collect::<Result<_, _>>()
            .map_err(|f| self.error(id, f))?;
        let Some(shape) = tiles.first().map(|t| t.shape.clone()) else {
            return Err(self.error(id, Fault::Type("a combine needs operands".into())));
        };
        if axis >= shape.len() || tiles.iter().any(|t| t.shape != shape) {
            let fault = Fault::Type(format!("axis {axis} of tiles of shape {shape:?}"));
            return Err(self.error(id, fault));
        }
        let mut scanned: Vec<Vec<Scalar>> = tiles.iter().map(|t| t.data.clone()).collect();
        let mut reduced: Vec<Vec<Scalar>> = vec![Vec::new(); tiles.len()];
        for lane in Lanes::new(&shape, axis).iter() {
            let mut acc: Vec<Scalar> = tiles.iter().map(|t| t.data[lane[0]]).collect();
            for &at in &lane[1..] {
                let mut args: Vec<RtValue> = acc.iter().map(|&s| RtValue::Scalar(s)).collect();
                args.extend(tiles.iter().map(|t| RtValue::Scalar(t.data[at])));
                acc = self.combine_step(id, region, args)?;
                for (out, &value) in scanned.iter_mut().zip(&acc) {
                    out[at] = value;
                }
            }
            for (out, value) in reduced.iter_mut().zip(acc) {
                out.push(value);
            }
        }
        let Some(keepdim) = keepdim else {
            return Ok(tiles
                .iter()
                .zip(scanned)
                .map(|(t, data)| {
                    RtValue::Tile(Tile {
                        shape: shape.clone(),
                        dtype: t.dtype,
                        data,
                    })
                })
                .collect());
        };
        let mut out_shape = shape.clone();
        if keepdim {
            out_shape[axis] = 1;
        } else {
            out_shape.remove(axis);
        }
        Ok(tiles
            .iter()
            .zip(reduced)
            .map(|(t, data)| match (out_shape.is_empty(), data.as_slice()) {
                (true, [one]) => RtValue::Scalar(*one),
                _ => RtValue::Tile(Tile {
                    shape: out_shape.clone(),
                    dtype: t.dtype,
                    data,
                }),
            })
            .collect())
    }

    /// One run of the combine function: the accumulated values and the
    /// next elements in, the new accumulated values out.
    fn combine_step(
        &mut self,
        id: OpId,
        region: &'a crate::function::Region,
        args: Vec<RtValue>,
    ) -> Result<Vec<Scalar>, InterpError> {
        self.bind_values(&region.args, args, "combine argument")
            .map_err(|f| self.error(id, f))?;
        let yielded = self.run_region(region)?.unwrap_or_default();
        yielded
            .iter()
            .map(|v| v.scalar("a combined value"))
            .collect::<Result<_, _>>()
            .map_err(|f| self.error(id, f))
    }
}
