//! `expand-scaled-dots`: every `dot_scaled` rewritten as the ops that
//! define it, for targets without a block-scaled tensor-core instruction.
//!
//! Each scaled operand `x: [R, K]` with scales `s: [R, K / G]` becomes
//! `cast(cast(x, f32) × cast(s', f32), compute)`, where `s'` repeats each
//! scale over its group (`reshape` to `[R, K / G, 1]`, `expand` to
//! `[R, K / G, G]`, `reshape` to `[R, K]`; `b`'s scales, stored
//! `[N, K / G]`, are first permuted to `[K / G, N]` and repeated along the
//! first axis; a `b` that is the transpose of a tile stored `[N, K]`, as
//! weights are, is scaled as stored, along its scales' own axis, and
//! transposed last). The scales move as stored, one byte each, and widen
//! last.
//! The product of an element and a scale is exact in `f32` (both are short
//! floats, and the scales are powers of two or `f8e4m3` values), so the one
//! rounding, to the compute dtype, is the definition's. The operands then
//! meet in a `dot` of precision `tensor`.

use super::expansion::{expand_ops, Emitter};
use super::Pass;
use crate::dtype::DType;
use crate::function::{Function, OpId, Value};
use crate::ops::{BinaryOp, DotPrecision, OpKind};
use crate::scaled::{compute_dtype, scale_group, ScaledOperands};
use crate::types::{TileType, Type};

/// The `expand-scaled-dots` pass.
pub struct ExpandScaledDots;

impl Pass for ExpandScaledDots {
    fn name(&self) -> &'static str {
        "expand-scaled-dots"
    }

    fn run(&self, func: &mut Function) -> bool {
        expand_except(func, &[])
    }
}

/// Expands every `dot_scaled` of `func` but those of `keep`; whether any
/// was.
pub(super) fn expand_except(func: &mut Function, keep: &[OpId]) -> bool {
    expand_ops(func, &|emit, id| {
        // An ill-typed `dot_scaled` stays, for the verifier to name.
        (emit.func.op(id).kind == OpKind::DotScaled && !keep.contains(&id))
            .then(|| scaled_dot(emit, id))
            .flatten()
    })
}

/// Whether `func` has a `dot_scaled` outside `keep`.
pub(super) fn any_to_expand(func: &Function, keep: &[OpId]) -> bool {
    let mut found = false;
    func.walk(&mut |id| found |= func.op(id).kind == OpKind::DotScaled && !keep.contains(&id));
    found
}

/// The expansion of `dot_scaled` `id`, its result; `None` when the op
/// breaks its typing rule.
fn scaled_dot(emit: &mut Emitter, id: OpId) -> Option<Value> {
    let operands = emit.func.op(id).operands.clone();
    let types: Vec<&Type> = operands.iter().map(|&v| emit.func.ty(v)).collect();
    crate::rules::infer(&OpKind::DotScaled, &types).ok()?;
    let dtypes: Vec<DType> = types.iter().map(|t| t.dtype()).collect();
    let pos = ScaledOperands::locate(&dtypes).ok()?;
    let compute = compute_dtype(dtypes[pos.a], dtypes[pos.b]);
    let a = operand(
        emit,
        operands[pos.a],
        pos.a_scale.map(|i| operands[i]),
        false,
        compute,
    );
    let b = operand(
        emit,
        operands[pos.b],
        pos.b_scale.map(|i| operands[i]),
        true,
        compute,
    );
    let c = operands[pos.c];
    let ty = emit.func.ty(c).clone();
    let precision = DotPrecision::Tensor;
    Some(emit.op(OpKind::Dot { precision }, vec![a, b, c], ty))
}

/// One operand scaled and rounded to `compute`; `transposed` for `b`,
/// whose scales are stored `[N, K / G]` against its `[K, N]`.
fn operand(
    emit: &mut Emitter,
    x: Value,
    scale: Option<Value>,
    transposed: bool,
    compute: DType,
) -> Value {
    if let Some(stored) = transposed.then(|| transposed_from(emit.func, x)).flatten() {
        // `b` is the transpose of a tile stored `[N, K]`, as its scales are:
        // scaled in its stored layout, then transposed, so the transpose
        // is read by the dot alone (which takes it in the same registers).
        let scaled = operand(emit, stored, scale, false, compute);
        return emit.transpose(scaled);
    }
    let Some(scale) = scale else {
        return emit.cast(x, compute);
    };
    let group = scale_group(emit.func.ty(scale).dtype()).unwrap_or(1);
    let repeated = if transposed {
        // [N, G] → [G, N] → [G, 1, N] → [G, group, N] → [K, N].
        let s = emit.transpose(scale);
        let [groups, cols] = emit.dims2(s);
        let s = emit.reshape(s, &[groups, 1, cols]);
        let s = emit.expand(s, &[groups, group, cols]);
        emit.reshape(s, &[groups * group, cols])
    } else {
        // [M, G] → [M, G, 1] → [M, G, group] → [M, K].
        let [rows, groups] = emit.dims2(scale);
        let s = emit.reshape(scale, &[rows, groups, 1]);
        let s = emit.expand(s, &[rows, groups, group]);
        emit.reshape(s, &[rows, groups * group])
    };
    let wide = emit.cast(x, DType::F32);
    let s = emit.cast(repeated, DType::F32);
    let ty = Type::Tile(TileType {
        shape: emit.shape(x),
        dtype: DType::F32,
    });
    let scaled = emit.op(OpKind::Binary(BinaryOp::Mul), vec![wide, s], ty);
    emit.cast(scaled, compute)
}

/// The rank-2 tile `x` is the transpose of, if it is one.
fn transposed_from(func: &Function, x: Value) -> Option<Value> {
    let op = func.op(func.defining_op(x)?);
    match (&op.kind, op.operands.as_slice()) {
        (OpKind::Permute { perm }, &[stored]) if perm == &[1, 0] => Some(stored),
        _ => None,
    }
}

/// Whether `func` has a `dot_scaled`.
pub(super) fn has_scaled_dots(func: &Function) -> bool {
    func.find_op(|op| (op.kind == OpKind::DotScaled).then_some(()))
        .is_some()
}
