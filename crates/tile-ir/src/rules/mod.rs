//! The typing rule of every op: from the operand types and the attributes to
//! the result types, or a message naming the broken rule and the offending
//! values.
//!
//! The builder uses these rules to type new ops and the verifier uses them to
//! check declared types, so the two can never disagree. `for`, `if` and
//! `yield` are typed partly by their regions; the verifier checks those parts.

mod checks;
mod control;
mod dot;
mod elementwise;
mod memory;
mod movement;
mod operand_lists;
mod reduction;
mod sync;

use crate::ops::{OpFamily, OpKind};
use crate::types::{Shape, Type};
use operand_lists::{assertion, multiple_of, print};

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
        Type::Tensor(t) | Type::Tensors(t) if t.rank == 0 => {
            Err("a tensor needs at least one axis".into())
        }
        Type::Tensor(_) | Type::Tensors(_) => Ok(()),
    }
}

/// The result types of an op of `kind` applied to operands of the given types.
///
/// For `for`, the results are the types of the carried values; `if` and
/// `yield` take their types from regions, so this returns `None` for `if`
/// (the caller supplies the types) and no results for `yield`.
pub fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    match kind.family() {
        OpFamily::Grid | OpFamily::Constant | OpFamily::Elementwise => {
            elementwise::infer(kind, operands)
        }
        OpFamily::Movement => movement::infer(kind, operands),
        OpFamily::Reduction => reduction::infer(kind, operands),
        OpFamily::Memory => memory::infer(kind, operands),
        OpFamily::Sync => sync::infer(kind, operands),
        OpFamily::Control => control::infer(kind, operands),
        OpFamily::Dot | OpFamily::Debug | OpFamily::LayoutView => match kind {
            OpKind::Dot { precision } => dot::dot(*precision, operands).map(Some),
            OpKind::DotScaled => dot::dot_scaled(operands).map(Some),
            OpKind::Assert { message, .. } => assertion(message, operands),
            OpKind::MultipleOf { divisor, .. } => multiple_of(*divisor, operands),
            OpKind::Print { message, .. } => print(message, operands),
            OpKind::LView(op) => crate::lview::rules::infer(op, operands).map(Some),
            other => Err(format!("`{}` has no typing rule", other.name())),
        },
    }
}

pub use checks::check_padding;
pub use dot::dot_accumulator;
