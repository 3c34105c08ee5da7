//! Reductions, arg-reductions and scans along one axis.
//!
//! Every lane (the elements along the axis at one position of the other
//! axes) is combined strictly sequentially, from index 0 upwards, in the
//! operand's dtype, each step rounded by [`crate::eval::binary`]: a sum over
//! `x_0 .. x_{n-1}` is `(((x_0 + x_1) + x_2) + ...)`, starting from `x_0`
//! itself (no identity element is added, so a lone `-0.0` stays `-0.0`).

use super::value::{RtValue, Tile};
use super::Fault;
use crate::dtype::DType;
use crate::eval;
use crate::ops::{ArgKind, BinaryOp, CmpPred, OpKind, ReduceKind, ScanKind};
use crate::scalar::Scalar;

/// Runs a `reduce`, `arg` or `scan` op.
pub(super) fn reduce(kind: &OpKind, operands: &[RtValue]) -> Result<RtValue, Fault> {
    let [x] = operands else {
        return Err(Fault::Type(format!("`{}` takes one operand", kind.name())));
    };
    let x = x.tile("the operand")?;
    let (axis, keepdim) = match kind {
        OpKind::Reduce { axis, keepdim, .. } | OpKind::ArgReduce { axis, keepdim, .. } => {
            (*axis, *keepdim)
        }
        OpKind::Scan { axis, .. } => (*axis, true),
        other => {
            return Err(Fault::Type(format!(
                "`{}` is not a reduction",
                other.name()
            )))
        }
    };
    if axis >= x.shape.len() {
        return Err(Fault::Type(format!(
            "axis {axis} of a tile of shape {:?}",
            x.shape
        )));
    }
    let lanes = Lanes::new(&x.shape, axis);
    if let OpKind::Scan { kind, .. } = kind {
        let op = match kind {
            ScanKind::CumSum => BinaryOp::Add,
            ScanKind::CumProd => BinaryOp::Mul,
        };
        let mut data = x.data.clone();
        for lane in lanes.iter() {
            for pair in lane.windows(2) {
                data[pair[1]] = eval::binary(op, data[pair[0]], x.data[pair[1]])?;
            }
        }
        return Ok(RtValue::Tile(Tile {
            shape: x.shape.clone(),
            dtype: x.dtype,
            data,
        }));
    }
    let mut data = Vec::with_capacity(lanes.count());
    for lane in lanes.iter() {
        let values: Vec<Scalar> = lane.iter().map(|&i| x.data[i]).collect();
        data.push(match kind {
            OpKind::Reduce { kind, .. } => fold(*kind, &values)?,
            OpKind::ArgReduce { kind, .. } => Scalar::I32(arg(*kind, &values)?),
            _ => return Err(Fault::Type("not a reduction".into())),
        });
    }
    let dtype = data.first().map_or(DType::I32, |s| s.dtype());
    let mut shape = x.shape.clone();
    if keepdim {
        shape[axis] = 1;
    } else {
        shape.remove(axis);
    }
    Ok(match (shape.is_empty(), data.as_slice()) {
        (true, [one]) => RtValue::Scalar(*one),
        _ => RtValue::Tile(Tile { shape, dtype, data }),
    })
}

/// The positions (row-major linear indices) of every lane along one axis.
pub(super) struct Lanes {
    /// The product of the extents before the axis.
    outer: usize,
    /// The extent of the axis.
    extent: usize,
    /// The product of the extents after the axis (the axis's stride).
    inner: usize,
}

impl Lanes {
    pub(super) fn new(shape: &[usize], axis: usize) -> Self {
        Lanes {
            outer: shape[..axis].iter().product(),
            extent: shape[axis],
            inner: shape[axis + 1..].iter().product(),
        }
    }

    fn count(&self) -> usize {
        self.outer * self.inner
    }

    /// Each lane's positions in axis order; lanes in row-major order of the
    /// remaining axes.
    pub(super) fn iter(&self) -> impl Iterator<Item = Vec<usize>> + '_ {
        (0..self.count()).map(move |lane| {
            let base = (lane / self.inner) * self.extent * self.inner + lane % self.inner;
            (0..self.extent).map(|k| base + k * self.inner).collect()
        })
    }
}

/// A sequential left-to-right fold of a lane.
fn fold(kind: ReduceKind, values: &[Scalar]) -> Result<Scalar, Fault> {
    let op = match kind {
        ReduceKind::Sum => BinaryOp::Add,
        ReduceKind::Prod => BinaryOp::Mul,
        ReduceKind::Max => BinaryOp::Max,
        ReduceKind::Min => BinaryOp::Min,
    };
    let (&first, rest) = values
        .split_first()
        .ok_or_else(|| Fault::Type("a reduction over an empty axis".into()))?;
    rest.iter()
        .try_fold(first, |acc, &v| eval::binary(op, acc, v))
        .map_err(Fault::from)
}

/// The index of the first extreme of a lane: the first NaN if there is one,
/// otherwise the first element equal to the `max` (`min`) of the lane, in the
/// order of IEEE `maximum` (`-0 < +0`).
fn arg(kind: ArgKind, values: &[Scalar]) -> Result<i32, Fault> {
    let mut best = 0usize;
    for (k, &v) in values.iter().enumerate().skip(1) {
        let current = values[best];
        if current.is_nan() {
            break;
        }
        let better = v.is_nan()
            || match kind {
                ArgKind::ArgMax => precedes(current, v)?,
                ArgKind::ArgMin => precedes(v, current)?,
            };
        if better {
            best = k;
        }
    }
    i32::try_from(best).map_err(|_| Fault::Type("an axis longer than i32::MAX".into()))
}

/// Whether `a < b` in the order of IEEE `minimum`/`maximum`: numeric, with
/// `-0 < +0` (for non-NaN operands of one dtype).
fn precedes(a: Scalar, b: Scalar) -> Result<bool, Fault> {
    if eval::compare(CmpPred::Lt, a, b)? {
        return Ok(true);
    }
    let zeros = a.dtype().is_float() && a.to_f64() == 0.0 && b.to_f64() == 0.0;
    Ok(zeros && a.to_f64().is_sign_negative() && b.to_f64().is_sign_positive())
}
