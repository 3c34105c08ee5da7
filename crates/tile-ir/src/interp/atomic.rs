//! `atomic`: indivisible read-modify-writes of tensor elements at index
//! tiles; `gather` and `scatter`: reads and writes of tensor elements at
//! index tiles.
//!
//! The interpreter runs one program at a time and a tile's elements in
//! row-major order, so its updates happen in that order; a device may
//! order them otherwise (docs/semantics.md, "Atomics"), which changes the
//! old values returned and, for float `add`, the rounding of the sum, but
//! not which updates happen.

use super::memory::{tensor_arg, tensor_arg_mut};
use super::value::{RtValue, Tile};
use super::{Arg, Fault, HostTensor};
use crate::eval;
use crate::ops::AtomicOp;
use crate::scalar::Scalar;

/// Runs `atomic op` on its operands: the tensor, one index tile per axis,
/// `cmp` for `cas`, the value and the mask. Returns the old values.
pub(super) fn atomic(
    op: AtomicOp,
    operands: &[RtValue],
    args: &mut [Arg],
) -> Result<RtValue, Fault> {
    let Some(RtValue::Tensor(arg)) = operands.first() else {
        return Err(Fault::Type("an atomic needs a tensor operand".into()));
    };
    let rank = tensor_arg(*arg, args)?.shape().len();
    let trailing = if op == AtomicOp::Cas { 3 } else { 2 };
    if operands.len() != 1 + rank + trailing {
        return Err(Fault::Type(format!(
            "atomic {op} on a tensor of rank {rank} with {} operands",
            operands.len()
        )));
    }
    let tiles = operands[1..]
        .iter()
        .map(|v| v.tile("an atomic operand"))
        .collect::<Result<Vec<&Tile>, _>>()?;
    let (indices, rest) = tiles.split_at(rank);
    let (cmp, value, mask) = match rest {
        [cmp, value, mask] => (Some(*cmp), *value, *mask),
        [value, mask] => (None, *value, *mask),
        _ => return Err(Fault::Type("atomic operands".into())),
    };
    if tiles.iter().any(|t| t.shape != value.shape) {
        return Err(Fault::Type("atomic operands of different shapes".into()));
    }
    let t = tensor_arg_mut(*arg, args)?;
    let mut old = Vec::with_capacity(value.data.len());
    for j in 0..value.data.len() {
        if mask.data[j] != Scalar::Bool(true) {
            old.push(Scalar::zero(value.dtype));
            continue;
        }
        let at = element_at(t, indices, j, &value.shape)?;
        let outside = || Fault::Type(format!("element offset {at} outside the buffer"));
        let before = t.read(at).ok_or_else(outside)?;
        let after = eval::atomic(op, before, value.data[j], cmp.map(|c| c.data[j]))?;
        t.write(at, after).ok_or_else(outside)?;
        old.push(before);
    }
    Ok(RtValue::Tile(Tile {
        shape: value.shape.clone(),
        dtype: value.dtype,
        data: old,
    }))
}

/// Runs `gather` on its operands: the tensor, one index tile per axis, the
/// mask and the other values.
pub(super) fn gather(operands: &[RtValue], args: &[Arg]) -> Result<RtValue, Fault> {
    let Some(RtValue::Tensor(arg)) = operands.first() else {
        return Err(Fault::Type("a gather needs a tensor operand".into()));
    };
    let t = tensor_arg(*arg, args)?;
    let rank = t.shape().len();
    if operands.len() != rank + 3 {
        return Err(Fault::Type(format!(
            "gather from a tensor of rank {rank} with {} operands",
            operands.len()
        )));
    }
    if let Some(RtValue::Scalar(other)) = operands.last() {
        // One element: the operands as one-element tiles.
        let tiles: Vec<RtValue> = operands[1..]
            .iter()
            .map(|v| match v {
                RtValue::Scalar(s) => Ok(RtValue::Tile(Tile {
                    shape: vec![1],
                    dtype: s.dtype(),
                    data: vec![*s],
                })),
                _ => Err(Fault::Type("a gather of scalars and tiles".into())),
            })
            .collect::<Result<_, _>>()?;
        let mut all = vec![operands[0].clone()];
        all.extend(tiles);
        let RtValue::Tile(read) = gather(&all, args)? else {
            return Err(Fault::Type("a gather".into()));
        };
        return Ok(RtValue::Scalar(
            read.data.first().copied().unwrap_or(*other),
        ));
    }
    let tiles = operands[1..]
        .iter()
        .map(|v| v.tile("a gather operand"))
        .collect::<Result<Vec<&Tile>, _>>()?;
    let (indices, rest) = tiles.split_at(rank);
    let [mask, other] = rest else {
        return Err(Fault::Type("gather operands".into()));
    };
    if tiles.iter().any(|x| x.shape != other.shape) {
        return Err(Fault::Type("gather operands of different shapes".into()));
    }
    let data = (0..other.data.len())
        .map(|j| {
            if mask.data[j] != Scalar::Bool(true) {
                return Ok(other.data[j]);
            }
            let at = element_at(t, indices, j, &other.shape)?;
            t.read(at)
                .ok_or_else(|| Fault::Type(format!("element offset {at} outside the buffer")))
        })
        .collect::<Result<Vec<Scalar>, Fault>>()?;
    Ok(RtValue::Tile(Tile {
        shape: other.shape.clone(),
        dtype: other.dtype,
        data,
    }))
}

/// Runs `scatter` on its operands: the tensor, one index tile per axis,
/// the value and the mask. Elements are written in row-major order, so of
/// two at one address (a race on a GPU) the later stays.
pub(super) fn scatter(operands: &[RtValue], args: &mut [Arg]) -> Result<(), Fault> {
    let Some(RtValue::Tensor(arg)) = operands.first() else {
        return Err(Fault::Type("a scatter needs a tensor operand".into()));
    };
    let rank = tensor_arg(*arg, args)?.shape().len();
    let tiles = operands[1..]
        .iter()
        .map(|v| v.tile("a scatter operand"))
        .collect::<Result<Vec<&Tile>, _>>()?;
    let (indices, [value, mask]) = tiles.split_at(rank.min(tiles.len())) else {
        return Err(Fault::Type(format!(
            "scatter into a tensor of rank {rank} with {} operands",
            operands.len()
        )));
    };
    if tiles.iter().any(|x| x.shape != value.shape) {
        return Err(Fault::Type("scatter operands of different shapes".into()));
    }
    let t = tensor_arg_mut(*arg, args)?;
    for j in 0..value.data.len() {
        if mask.data[j] == Scalar::Bool(true) {
            let at = element_at(t, indices, j, &value.shape)?;
            t.write(at, value.data[j])
                .ok_or_else(|| Fault::Type(format!("element offset {at} outside the buffer")))?;
        }
    }
    Ok(())
}

/// The offset of the tensor element that element `j` of the index tiles
/// names, or [`Fault::IndexOutside`].
fn element_at(
    t: &HostTensor,
    indices: &[&Tile],
    j: usize,
    shape: &[usize],
) -> Result<usize, Fault> {
    let index = indices
        .iter()
        .map(|i| {
            i.data[j]
                .to_i128()
                .ok_or_else(|| Fault::Type("an index".into()))
        })
        .collect::<Result<Vec<i128>, _>>()?;
    index
        .iter()
        .map(|&i| usize::try_from(i).ok())
        .collect::<Option<Vec<usize>>>()
        .and_then(|at| t.element_offset(&at))
        .ok_or_else(|| Fault::IndexOutside {
            element: Tile::unravel(j, shape),
            index,
            extents: t.shape().to_vec(),
        })
}
