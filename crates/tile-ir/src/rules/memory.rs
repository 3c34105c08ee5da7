//! The typing rules of tensors, tensor arrays and partition views: `dim`,
//! `get_tensor`, `num_tensors`, `partition_view`, loads, stores, atomics
//! and gathers.

use super::checks::*;
use super::operand_lists::*;
use super::{check_shape, RuleResult};
use crate::dtype::DType;
use crate::ops::{MemOrder, OpKind};
use crate::types::{PartitionViewType, TensorType, Type};

/// The result types of a memory op of `kind` applied to operands of the given
/// types.
pub(super) fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let one = |ty: Type| Ok(Some(vec![ty]));
    match kind {
        OpKind::Dim { axis } => {
            arity(operands, 1)?;
            let Type::Tensor(t) = operands[0] else {
                return Err(format!(
                    "the operand must be a tensor, found {}",
                    operands[0]
                ));
            };
            axis_in(*axis, t.rank)?;
            one(Type::Scalar(DType::I32))
        }
        OpKind::GetTensor => {
            arity(operands, 2)?;
            let t = tensor_array(operands[0])?;
            match operands[1] {
                Type::Scalar(d) if d.is_int() => one(Type::Tensor(*t)),
                other => Err(format!(
                    "the index must be an integer scalar, found {other}"
                )),
            }
        }
        OpKind::NumTensors => {
            arity(operands, 1)?;
            tensor_array(operands[0])?;
            one(Type::Scalar(DType::I32))
        }
        OpKind::PartitionView { shape } => {
            check_shape(shape)?;
            let t = match operands.first() {
                Some(Type::Tensor(t)) => t,
                Some(other) => return Err(format!("the operand must be a tensor, found {other}")),
                None => return Err("expected a tensor operand, found none".into()),
            };
            if shape.rank() != t.rank {
                return Err(format!(
                    "the partition shape {shape} has rank {}, the tensor has rank {}",
                    shape.rank(),
                    t.rank
                ));
            }
            let rank = t.rank;
            if ![1, 1 + rank, 1 + 2 * rank].contains(&operands.len()) {
                return Err(format!(
                    "expected the tensor, then {rank} offsets and optionally {rank} extents: 1, {} or {} operands, found {}",
                    1 + rank,
                    1 + 2 * rank,
                    operands.len()
                ));
            }
            for (k, ty) in operands.iter().enumerate().skip(1) {
                let what = if k <= rank { "offset" } else { "extent" };
                match ty {
                    Type::Scalar(d) if d.is_int() => {}
                    other => {
                        return Err(format!(
                            "the {what} of axis {} must be an integer scalar, found {other}",
                            (k - 1) % rank
                        ))
                    }
                }
            }
            one(Type::PartitionView(PartitionViewType {
                dtype: t.dtype,
                tile: shape.clone(),
            }))
        }
        OpKind::Load | OpKind::LoadMasked { .. } => {
            let view = view_access(operands, 0)?;
            if let OpKind::LoadMasked { padding } = kind {
                check_padding(*padding, view.dtype)?;
            }
            one(tile(view.tile.clone(), view.dtype))
        }
        OpKind::Store | OpKind::StoreMasked => {
            if operands.len() < 2 {
                return Err(format!(
                    "{} needs a tile, a view and indices, found {} operands",
                    kind.name(),
                    operands.len()
                ));
            }
            let view = view_access(operands, 1)?;
            let want = tile(view.tile.clone(), view.dtype);
            if *operands[0] != want {
                return Err(format!(
                    "the stored value must have type {want} (the view's tile), found {}",
                    operands[0]
                ));
            }
            Ok(Some(Vec::new()))
        }
        OpKind::Atomic { op, order, .. } => {
            if *order == MemOrder::SeqCst {
                return Err("an atomic's order is relaxed, acquire, release or acq_rel: seq_cst is for fences".into());
            }
            atomic(*op, operands)
        }
        OpKind::Gather => gather(operands),
        OpKind::Scatter => scatter(operands),
        other => Err(format!("`{}` is not a memory op", other.name())),
    }
}

/// The element type of the tensor array `ty`, or why it is none.
fn tensor_array(ty: &Type) -> RuleResult<&TensorType> {
    match ty {
        Type::Tensors(t) => Ok(t),
        other => Err(format!("the operand must be a tensor array, found {other}")),
    }
}
