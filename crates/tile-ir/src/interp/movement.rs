//! Ops that move elements without computing: broadcast, reshape, permute,
//! expand, flip, slice, pad and cat. Each result element is a copy of one
//! operand element (or of the padding value), bits unchanged.

use super::value::{numel, RtValue, Tile};
use super::Fault;
use crate::ops::OpKind;

/// Runs one movement op.
pub(super) fn movement(kind: &OpKind, operands: &[RtValue]) -> Result<RtValue, Fault> {
    if let OpKind::Cat { axis } = kind {
        let parts = operands
            .iter()
            .map(|v| v.tile("every operand"))
            .collect::<Result<Vec<_>, _>>()?;
        return cat(&parts, *axis).map(RtValue::Tile);
    }
    let [x] = operands else {
        return Err(Fault::Type(format!(
            "`{}` takes one operand, found {}",
            kind.name(),
            operands.len()
        )));
    };
    if let (OpKind::Broadcast { shape }, RtValue::Scalar(s)) = (kind, x) {
        let shape = shape.dims().to_vec();
        return Tile::build(shape, s.dtype(), |_| Ok(*s)).map(RtValue::Tile);
    }
    let x = x.tile("the operand")?;
    let rank = x.shape.len();
    let bad = |what: String| {
        Fault::Type(format!(
            "`{}` {what} on a tile of shape {:?}",
            kind.name(),
            x.shape
        ))
    };
    let out = match kind {
        OpKind::Broadcast { shape } => {
            let to = shape.dims();
            let offset = to
                .len()
                .checked_sub(rank)
                .filter(|&o| {
                    x.shape
                        .iter()
                        .enumerate()
                        .all(|(a, &d)| d == 1 || d == to[a + o])
                })
                .ok_or_else(|| bad(format!("cannot broadcast to {to:?}")))?;
            gather(x, to.to_vec(), |out, index| {
                for (a, i) in index.iter_mut().enumerate() {
                    *i = if x.shape[a] == 1 { 0 } else { out[a + offset] };
                }
            })?
        }
        OpKind::Reshape { shape } => {
            if numel(shape.dims())? != x.data.len() {
                return Err(bad(format!("cannot reshape to {shape}")));
            }
            Tile {
                shape: shape.dims().to_vec(),
                dtype: x.dtype,
                data: x.data.clone(),
            }
        }
        OpKind::Permute { perm } => {
            let mut seen = vec![false; rank];
            let valid = perm.len() == rank
                && perm
                    .iter()
                    .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
            if !valid {
                return Err(bad(format!("{perm:?} is not a permutation")));
            }
            let shape = perm.iter().map(|&p| x.shape[p]).collect();
            gather(x, shape, |out, index| {
                for (i, &p) in perm.iter().enumerate() {
                    index[p] = out[i];
                }
            })?
        }
        OpKind::Expand { shape } => {
            let to = shape.dims();
            let valid = to.len() == rank && x.shape.iter().zip(to).all(|(&d, &t)| d == t || d == 1);
            if !valid {
                return Err(bad(format!("cannot expand to {to:?}")));
            }
            gather(x, to.to_vec(), |out, index| {
                for (a, i) in index.iter_mut().enumerate() {
                    *i = if x.shape[a] == 1 { 0 } else { out[a] };
                }
            })?
        }
        OpKind::Flip { axes } => {
            if axes.iter().any(|&a| a >= rank) {
                return Err(bad(format!("axes {axes:?} out of range")));
            }
            gather(x, x.shape.clone(), |out, index| {
                index.copy_from_slice(out);
                for &a in axes {
                    index[a] = x.shape[a] - 1 - out[a];
                }
            })?
        }
        OpKind::Slice { ranges } => {
            let valid = ranges.len() == rank
                && ranges
                    .iter()
                    .zip(&x.shape)
                    .all(|(r, &n)| r.step > 0 && r.start < r.stop && r.stop <= n);
            if !valid {
                let ranges: Vec<String> = ranges.iter().map(ToString::to_string).collect();
                return Err(bad(format!("slice [{}] is invalid", ranges.join(", "))));
            }
            let shape = ranges
                .iter()
                .map(|r| (r.stop - r.start).div_ceil(r.step))
                .collect();
            gather(x, shape, |out, index| {
                for ((i, r), o) in index.iter_mut().zip(ranges).zip(out) {
                    *i = r.start + o * r.step;
                }
            })?
        }
        OpKind::Pad { low, high, value } => {
            if low.len() != rank || high.len() != rank || value.dtype() != x.dtype {
                return Err(bad(format!(
                    "pad low {low:?} high {high:?} value {value} is invalid"
                )));
            }
            let shape = (0..rank)
                .map(|a| x.shape[a].saturating_add(low[a]).saturating_add(high[a]))
                .collect();
            let mut index = vec![0; rank];
            Tile::build(shape, x.dtype, |out| {
                let inside = (0..rank).all(|a| out[a] >= low[a] && out[a] - low[a] < x.shape[a]);
                if !inside {
                    return Ok(*value);
                }
                for (a, i) in index.iter_mut().enumerate() {
                    *i = out[a] - low[a];
                }
                x.at(&index)
            })?
        }
        other => {
            return Err(Fault::Type(format!(
                "`{}` is not a movement op",
                other.name()
            )))
        }
    };
    Ok(RtValue::Tile(out))
}

/// A tile of `shape` whose element at each index `out` is the element of
/// `x` at the index `locate(out, index)` writes into `index` (a buffer
/// reused across elements).
fn gather(
    x: &Tile,
    shape: Vec<usize>,
    mut locate: impl FnMut(&[usize], &mut [usize]),
) -> Result<Tile, Fault> {
    let mut index = vec![0; x.shape.len()];
    Tile::build(shape, x.dtype, |out| {
        locate(out, &mut index);
        x.at(&index)
    })
}

/// `cat`: the parts joined along `axis`, in operand order.
fn cat(parts: &[&Tile], axis: usize) -> Result<Tile, Fault> {
    let Some(first) = parts.first() else {
        return Err(Fault::Type("`cat` needs operands".into()));
    };
    let rank = first.shape.len();
    let agree = axis < rank
        && parts.iter().all(|t| {
            t.dtype == first.dtype
                && t.shape.len() == rank
                && (0..rank).all(|a| a == axis || t.shape[a] == first.shape[a])
        });
    if !agree {
        let shapes: Vec<_> = parts.iter().map(|t| &t.shape).collect();
        return Err(Fault::Type(format!(
            "`cat` along axis {axis} of shapes {shapes:?}"
        )));
    }
    let mut shape = first.shape.clone();
    shape[axis] = parts.iter().map(|t| t.shape[axis]).sum();
    Tile::build(shape, first.dtype, |out| {
        let mut index = out.to_vec();
        for part in parts {
            if index[axis] < part.shape[axis] {
                return part.at(&index);
            }
            index[axis] -= part.shape[axis];
        }
        Err(Fault::Type("`cat` index past the parts".into()))
    })
}
