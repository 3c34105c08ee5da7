//! The typing rules of the movement ops: elements moved, not computed.

use super::checks::*;
use super::{check_shape, RuleResult};
use crate::dtype::DType;
use crate::ops::OpKind;
use crate::types::{Shape, Type};

/// The result types of a movement op of `kind` applied to operands of the given
/// types.
pub(super) fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let one = |ty: Type| Ok(Some(vec![ty]));
    match kind {
        OpKind::Broadcast { shape } => {
            arity(operands, 1)?;
            check_shape(shape)?;
            let ty = data(operands[0], "the operand")?;
            if let Some(from) = ty.tile_shape() {
                broadcastable(from, shape)?;
            }
            one(tile(shape.clone(), ty.dtype()))
        }
        OpKind::Reshape { shape } => {
            arity(operands, 1)?;
            check_shape(shape)?;
            let t = tile_operand(operands[0])?;
            if t.shape.numel() != shape.numel() {
                return Err(format!(
                    "reshape keeps the number of elements: {} has {}, {} has {}",
                    t.shape,
                    t.shape.numel(),
                    shape,
                    shape.numel()
                ));
            }
            one(tile(shape.clone(), t.dtype))
        }
        OpKind::Permute { perm } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            let rank = t.shape.rank();
            let mut seen = vec![false; rank];
            let valid = perm.len() == rank
                && perm
                    .iter()
                    .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
            if !valid {
                return Err(format!(
                    "{perm:?} is not a permutation of the {rank} axes of {}",
                    t.shape
                ));
            }
            let dims = perm.iter().map(|&p| t.shape.dims()[p]).collect::<Vec<_>>();
            one(tile(Shape(dims), t.dtype))
        }
        OpKind::Expand { shape } => {
            arity(operands, 1)?;
            check_shape(shape)?;
            let t = tile_operand(operands[0])?;
            same_rank(&t.shape, shape, "expand")?;
            for (axis, (&from, &to)) in t.shape.dims().iter().zip(shape.dims()).enumerate() {
                if from != to && from != 1 {
                    return Err(format!(
                        "expand grows only axes of extent 1, but axis {axis} of {} has extent {from} and the target {} has {to}",
                        t.shape, shape
                    ));
                }
            }
            one(tile(shape.clone(), t.dtype))
        }
        OpKind::Flip { axes } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            distinct_axes(axes, t.shape.rank())?;
            one(Type::Tile(t.clone()))
        }
        OpKind::Slice { ranges } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            let rank = t.shape.rank();
            if ranges.len() != rank {
                return Err(format!(
                    "slice needs one start:stop:step per axis of {}, found {}",
                    t.shape,
                    ranges.len()
                ));
            }
            let mut dims = Vec::with_capacity(rank);
            for (axis, range) in ranges.iter().enumerate() {
                let (lo, hi, st, extent) =
                    (range.start, range.stop, range.step, t.shape.dims()[axis]);
                if st == 0 || lo >= hi || hi > extent {
                    return Err(format!(
                        "slice {lo}:{hi}:{st} of axis {axis} (extent {extent}) must satisfy start < stop <= extent and step >= 1"
                    ));
                }
                dims.push((hi - lo).div_ceil(st));
            }
            one(tile(Shape(dims), t.dtype))
        }
        OpKind::Pad { low, high, value } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            let rank = t.shape.rank();
            if low.len() != rank || high.len() != rank {
                return Err(format!(
                    "pad needs one low and one high amount per axis of {}, found {} and {}",
                    t.shape,
                    low.len(),
                    high.len()
                ));
            }
            if value.dtype() != t.dtype {
                return Err(format!(
                    "the padding value {value} is {}, the tile is {}",
                    value.dtype(),
                    t.dtype
                ));
            }
            let dims = (0..rank)
                .map(|a| t.shape.dims()[a] + low[a] + high[a])
                .collect::<Vec<_>>();
            let shape = Shape(dims);
            check_shape(&shape)?;
            one(tile(shape, t.dtype))
        }
        OpKind::Cat { axis } => {
            if operands.len() < 2 {
                return Err(format!(
                    "cat needs at least 2 operands, found {}",
                    operands.len()
                ));
            }
            let first = tile_operand(operands[0])?;
            axis_in(*axis, first.shape.rank())?;
            let mut dims = first.shape.dims().to_vec();
            for other in &operands[1..] {
                let t = tile_operand(other)?;
                let mut agree = t.dtype == first.dtype && t.shape.rank() == first.shape.rank();
                agree &= (0..dims.len()).all(|a| a == *axis || t.shape.dims()[a] == dims[a]);
                if !agree {
                    return Err(format!(
                        "cat along axis {axis} needs one dtype and equal extents on the other axes, found {} and {}",
                        operands[0], other
                    ));
                }
                dims[*axis] += t.shape.dims()[*axis];
            }
            let shape = Shape(dims);
            check_shape(&shape)?;
            one(tile(shape, first.dtype))
        }
        OpKind::UnpackFp4 { axis } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            if t.dtype != DType::U8 {
                return Err(format!(
                    "the packed FP4 pairs are u8 bytes, found {}",
                    t.dtype
                ));
            }
            axis_in(*axis, t.shape.rank())?;
            let mut dims = t.shape.dims().to_vec();
            dims[*axis] *= 2;
            let shape = Shape(dims);
            check_shape(&shape)?;
            one(tile(shape, DType::F4E2M1))
        }
        OpKind::PackFp4 { axis } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            if t.dtype != DType::F4E2M1 {
                return Err(format!("the values packed are f4e2m1, found {}", t.dtype));
            }
            axis_in(*axis, t.shape.rank())?;
            let mut dims = t.shape.dims().to_vec();
            if !dims[*axis].is_multiple_of(2) {
                return Err(format!(
                    "pairs lie along axis {axis}, whose extent in {} is odd",
                    t.shape
                ));
            }
            dims[*axis] /= 2;
            one(tile(Shape(dims), DType::U8))
        }
        other => Err(format!("`{}` is not a movement op", other.name())),
    }
}
