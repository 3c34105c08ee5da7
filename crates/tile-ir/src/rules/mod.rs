//! The typing rule of every op: from the operand types and the attributes to
//! the result types, or a message naming the broken rule and the offending
//! values.
//!
//! The builder uses these rules to type new ops and the verifier uses them to
//! check declared types, so the two can never disagree. `for`, `if` and
//! `yield` are typed partly by their regions; the verifier checks those parts.

mod checks;
mod dot;
mod operand_lists;

use crate::dtype::DType;
use crate::ops::{CmpPred, MemOrder, OpKind};
use crate::types::{PartitionViewType, Shape, Type};
use checks::*;
use operand_lists::{assertion, atomic, combined, gather, print};

/// The largest number of elements a tile may hold.
pub const MAX_TILE_ELEMENTS: usize = 1 << 20;

/// A broken typing rule, as a message without the op (the caller names it).
pub type RuleResult<T> = Result<T, String>;

/// Checks that `shape` can be a tile's shape: at least one axis, every extent
/// positive, at most [`MAX_TILE_ELEMENTS`] elements.
pub fn check_shape(shape: &Shape) -> RuleResult<()> {
    if shape.rank() == 0 {
        return Err("a tile shape needs at least one axis, found []".into());
    }
    if let Some(axis) = shape.dims().iter().position(|&d| d == 0) {
        return Err(format!(
            "tile extents must be positive, found 0 at axis {axis} of {shape}"
        ));
    }
    let numel = shape
        .dims()
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d));
    match numel {
        Some(n) if n <= MAX_TILE_ELEMENTS => Ok(()),
        _ => Err(format!(
            "a tile holds at most {MAX_TILE_ELEMENTS} elements, {shape} holds more"
        )),
    }
}

/// Checks that every tile or view shape inside `ty` is valid and that a
/// tensor has at least one axis.
pub fn check_type(ty: &Type) -> RuleResult<()> {
    match ty {
        Type::Scalar(_) => Ok(()),
        Type::Tile(t) => check_shape(&t.shape),
        Type::PartitionView(v) => check_shape(&v.tile),
        Type::LayoutView(v) => crate::lview::rules::check_layout(&v.layout),
        Type::Tensor(t) if t.rank == 0 => Err("a tensor needs at least one axis".into()),
        Type::Tensor(_) => Ok(()),
    }
}

/// The result types of an op of `kind` applied to operands of the given types.
///
/// For `for`, the results are the types of the carried values; `if` and
/// `yield` take their types from regions, so this returns `None` for `if`
/// (the caller supplies the types) and no results for `yield`.
pub fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    let one = |ty: Type| Ok(Some(vec![ty]));
    match kind {
        OpKind::ProgramId { axis } | OpKind::NumPrograms { axis } => {
            arity(operands, 0)?;
            if *axis > 2 {
                return Err(format!("the grid axis must be 0, 1 or 2, found {axis}"));
            }
            one(Type::Scalar(DType::I32))
        }
        OpKind::Constant { value } => {
            arity(operands, 0)?;
            one(Type::Scalar(value.dtype()))
        }
        OpKind::Full { value, shape } => {
            arity(operands, 0)?;
            check_shape(shape)?;
            one(tile(shape.clone(), value.dtype()))
        }
        OpKind::Iota { shape, dtype } => {
            arity(operands, 0)?;
            check_shape(shape)?;
            if dtype.is_bool() {
                return Err("iota needs an integer or float dtype, found bool".into());
            }
            one(tile(shape.clone(), *dtype))
        }
        OpKind::Unary(op) => {
            arity(operands, 1)?;
            let ty = data(operands[0], "the operand")?;
            unary_dtype(*op, ty.dtype())?;
            one(ty.clone())
        }
        OpKind::Binary(op) => {
            arity(operands, 2)?;
            let ty = same_data(operands, "operands")?;
            binary_dtype(*op, ty.dtype())?;
            one(ty.clone())
        }
        OpKind::Cmp(pred) => {
            arity(operands, 2)?;
            let ty = same_data(operands, "operands")?;
            let d = ty.dtype();
            if !matches!(pred, CmpPred::Eq | CmpPred::Ne) && d.is_bool() {
                return Err(format!(
                    "cmp {pred} needs integer or float operands, found bool"
                ));
            }
            one(ty.with_dtype(DType::Bool))
        }
        OpKind::Select => {
            arity(operands, 3)?;
            let ty = same_data(&operands[1..], "the two choices")?;
            let want = ty.with_dtype(DType::Bool);
            if *operands[0] != want {
                return Err(format!(
                    "the condition must have type {want}, found {}",
                    operands[0]
                ));
            }
            one(ty.clone())
        }
        OpKind::Fma => {
            arity(operands, 3)?;
            let ty = same_data(operands, "operands")?;
            float(ty.dtype(), "fma")?;
            one(ty.clone())
        }
        OpKind::Cast { to } => {
            arity(operands, 1)?;
            let ty = data(operands[0], "the operand")?;
            one(ty.with_dtype(*to))
        }
        OpKind::Bitcast { to } => {
            arity(operands, 1)?;
            let ty = data(operands[0], "the operand")?;
            let from = ty.dtype();
            if from.is_bool() || to.is_bool() {
                return Err(format!(
                    "bitcast needs dtypes with a bit layout, found {from} to {to}"
                ));
            }
            if from.bits() != to.bits() {
                return Err(format!(
                    "bitcast needs dtypes of one width, found {from} ({} bits) to {to} ({} bits)",
                    from.bits(),
                    to.bits()
                ));
            }
            one(ty.with_dtype(*to))
        }
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
        OpKind::Reduce { axis, keepdim, .. } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            numeric(t.dtype, kind.name())?;
            one(reduced(t, *axis, *keepdim, t.dtype)?)
        }
        OpKind::ArgReduce { axis, keepdim, .. } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            numeric(t.dtype, "arg")?;
            one(reduced(t, *axis, *keepdim, DType::I32)?)
        }
        OpKind::Scan { axis, .. } => {
            arity(operands, 1)?;
            let t = tile_operand(operands[0])?;
            numeric(t.dtype, "scan")?;
            axis_in(*axis, t.shape.rank())?;
            one(Type::Tile(t.clone()))
        }
        OpKind::ReduceWith { axis, keepdim } => combined(operands, *axis, Some(*keepdim)),
        OpKind::ScanWith { axis } => combined(operands, *axis, None),
        OpKind::Dot { precision } => dot::dot(*precision, operands).map(Some),
        OpKind::DotScaled => dot::dot_scaled(operands).map(Some),
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
        OpKind::Fence { order, .. } => {
            arity(operands, 0)?;
            if *order == MemOrder::Relaxed {
                return Err("a fence's order is acquire, release, acq_rel or seq_cst: a relaxed fence orders nothing".into());
            }
            Ok(Some(Vec::new()))
        }
        OpKind::Barrier | OpKind::GridWait | OpKind::GridLaunchDependents => {
            arity(operands, 0)?;
            Ok(Some(Vec::new()))
        }
        OpKind::Gather => gather(operands),
        OpKind::Assert { message, .. } => assertion(message, operands),
        OpKind::Print { message, .. } => print(message, operands),
        OpKind::For { stages } => {
            if let Some(n) = stages.filter(|n| !(1..=8).contains(n)) {
                return Err(format!("a loop's stages are 1 to 8, found {n}"));
            }
            if operands.len() < 3 {
                return Err(format!(
                    "for needs a lower bound, an upper bound and a step, found {} operands",
                    operands.len()
                ));
            }
            let bound = operands[0];
            let integer = matches!(bound, Type::Scalar(d) if d.is_int());
            if !integer || operands[1] != bound || operands[2] != bound {
                return Err(format!(
                    "the bounds and step must be scalars of one integer dtype, found {}, {} and {}",
                    operands[0], operands[1], operands[2]
                ));
            }
            for carried in &operands[3..] {
                data(carried, "a carried value")?;
            }
            Ok(Some(operands[3..].iter().map(|t| (*t).clone()).collect()))
        }
        OpKind::While => {
            for carried in operands {
                data(carried, "a carried value")?;
            }
            Ok(Some(operands.iter().map(|t| (*t).clone()).collect()))
        }
        OpKind::If => {
            arity(operands, 1)?;
            if *operands[0] != Type::Scalar(DType::Bool) {
                return Err(format!(
                    "the condition must be a bool scalar (block-uniform), found {}; use select for a tile condition",
                    operands[0]
                ));
            }
            Ok(None)
        }
        OpKind::Yield => Ok(Some(Vec::new())),
        OpKind::LView(op) => crate::lview::rules::infer(op, operands).map(Some),
    }
}

pub use checks::check_padding;
pub use dot::dot_accumulator;
