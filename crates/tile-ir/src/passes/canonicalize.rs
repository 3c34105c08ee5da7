//! Canonicalization: constant folding, algebraic identities, and control
//! flow whose condition or trip count is known.
//!
//! Folding evaluates an op whose operands are all splats (a `constant`, a
//! `full`, or a broadcast of one) with the interpreter's own scalar semantics
//! ([`crate::eval`]), so a folded program computes bit for bit what the
//! unfolded one does. Replaced ops are left for `dce` to remove.

use super::rewrite::{put_regions, splat_of, take_regions, Substitution};
use super::Pass;
use crate::eval;
use crate::function::{Function, OpId, Region, Value};
use crate::ops::{BinaryOp, OpKind, UnaryOp};
use crate::scalar::Scalar;
use crate::types::Type;

/// The `canonicalize` pass.
pub struct Canonicalize;

impl Pass for Canonicalize {
    fn name(&self) -> &'static str {
        "canonicalize"
    }

    fn run(&self, func: &mut Function) -> bool {
        let mut subst = Substitution::default();
        let body = std::mem::take(&mut func.body);
        let mut changed = false;
        func.body = rewrite_region(func, body, &mut subst, &mut changed);
        subst.apply(func);
        changed || !subst.is_empty()
    }
}

/// What replaces an op: new ops to insert in its place (possibly none) and
/// the values that stand for its results.
struct Rewrite {
    ops: Vec<OpId>,
    values: Vec<Value>,
}

fn rewrite_region(
    func: &mut Function,
    region: Region,
    subst: &mut Substitution,
    changed: &mut bool,
) -> Region {
    let mut ops = Vec::with_capacity(region.ops.len());
    for id in region.ops {
        for operand in &mut func.ops[id].operands {
            *operand = subst.resolve(*operand);
        }
        let regions = take_regions(func, id)
            .into_iter()
            .map(|nested| rewrite_region(func, nested, subst, changed))
            .collect();
        put_regions(func, id, regions);
        match simplify(func, id) {
            Some(rewrite) => {
                *changed = true;
                let results = func.op(id).results.clone();
                for (result, value) in results.into_iter().zip(rewrite.values) {
                    subst.replace(result, value);
                }
                inherit_location(func, id, &rewrite.ops);
                ops.extend(rewrite.ops);
                // A replaced op stays (unused, for dce) unless it was control
                // flow whose regions were inlined or dropped.
                if !matches!(
                    func.op(id).kind,
                    OpKind::If | OpKind::For { .. } | OpKind::While
                ) {
                    ops.push(id);
                }
            }
            None => ops.push(id),
        }
    }
    Region {
        args: region.args,
        ops,
    }
}

/// Gives the ops of a rewrite that have no location the location of the op
/// they replace.
fn inherit_location(func: &mut Function, replaced: OpId, ops: &[OpId]) {
    let loc = func.op(replaced).loc.clone();
    for &op in ops {
        let op = &mut func.ops[op];
        if op.loc.is_none() {
            op.loc.clone_from(&loc);
        }
    }
}

fn simplify(func: &mut Function, id: OpId) -> Option<Rewrite> {
    match func.op(id).kind {
        OpKind::If => return known_branch(func, id),
        OpKind::For { .. } => return zero_trip_loop(func, id),
        _ => {}
    }
    if let Some(value) = identity(func, id) {
        return Some(Rewrite {
            ops: Vec::new(),
            values: vec![value],
        });
    }
    self_cancelling(func, id).or_else(|| fold(func, id))
}

/// The operand an op equals, by an algebraic identity.
fn identity(func: &Function, id: OpId) -> Option<Value> {
    let op = func.op(id);
    let operands = &op.operands;
    let result_ty = func.ty(*op.results.first()?);
    let splat = |i: usize| operands.get(i).and_then(|&v| splat_of(func, v));
    let same_type_as_result = |v: Value| func.ty(v) == result_ty;
    match &op.kind {
        // Arithmetic identities hold bit for bit only on integers and bool:
        // a float op returns the canonical NaN for a NaN operand and FP8
        // arithmetic saturates infinities, so `x * 1.0` is not `x` there.
        OpKind::Binary(_) | OpKind::Unary(_) if result_ty.dtype().is_float() => None,
        OpKind::Binary(bin) => {
            let (a, b) = (operands[0], operands[1]);
            match bin {
                // x + 0 == x, 0 + x == x
                BinaryOp::Add if splat(1).is_some_and(is_zero) => Some(a),
                BinaryOp::Add if splat(0).is_some_and(is_zero) => Some(b),
                // x - 0 == x
                BinaryOp::Sub if splat(1).is_some_and(is_zero) => Some(a),
                // x * 1 == x, 1 * x == x
                BinaryOp::Mul if splat(1).is_some_and(is_one) => Some(a),
                BinaryOp::Mul if splat(0).is_some_and(is_one) => Some(b),
                // x / 1 == x
                BinaryOp::Div if splat(1).is_some_and(is_one) => Some(a),
                // x | 0 == x, x ^ 0 == x
                BinaryOp::Or | BinaryOp::Xor if splat(1).is_some_and(is_zero) => Some(a),
                // x & x == x, x | x == x, min(x, x) == x, max(x, x) == x
                BinaryOp::And | BinaryOp::Or | BinaryOp::Min | BinaryOp::Max if a == b => Some(a),
                // x << 0 == x, x >> 0 == x
                BinaryOp::Shl | BinaryOp::Shr if splat(1).is_some_and(is_zero) => Some(a),
                _ => None,
            }
        }
        OpKind::Unary(UnaryOp::Neg | UnaryOp::Not) => {
            // neg(neg(x)) == x, not(not(x)) == x (wrapping negation)
            let inner = func.op(func.defining_op(operands[0])?);
            (inner.kind == op.kind).then(|| inner.operands[0])
        }
        // select(c, a, a) == a
        OpKind::Select if operands[1] == operands[2] => Some(operands[1]),
        // select(true, a, b) == a, select(false, a, b) == b
        OpKind::Select => match splat(0)? {
            Scalar::Bool(true) => Some(operands[1]),
            Scalar::Bool(false) => Some(operands[2]),
            _ => None,
        },
        // cast or bitcast of x to its own dtype == x
        OpKind::Cast { .. }
        | OpKind::Bitcast { .. }
        // reshape, broadcast or expand of a tile to its own shape == x
        | OpKind::Reshape { .. }
        | OpKind::Broadcast { .. }
        | OpKind::Expand { .. } => same_type_as_result(operands[0]).then_some(operands[0]),
        // permute by the identity == x
        OpKind::Permute { perm } if perm.iter().enumerate().all(|(i, &p)| i == p) => {
            Some(operands[0])
        }
        // flip of no axis == x
        OpKind::Flip { axes } if axes.is_empty() => Some(operands[0]),
        // slice of everything with step 1 == x; pad by nothing == x
        OpKind::Slice { .. } | OpKind::Pad { .. } => {
            same_type_as_result(operands[0]).then_some(operands[0])
        }
        _ => None,
    }
}

/// Evaluates an op whose operands are all splats into a new splat.
fn fold(func: &mut Function, id: OpId) -> Option<Rewrite> {
    let op = func.op(id);
    let result_ty = func.ty(*op.results.first()?).clone();
    let mut splats = Vec::with_capacity(op.operands.len());
    for &operand in &op.operands {
        splats.push(splat_of(func, operand)?);
    }
    let value = match (&op.kind, splats.as_slice()) {
        (OpKind::Unary(u), [x]) => eval::unary(*u, *x).ok()?,
        (OpKind::Binary(b), [x, y]) => eval::binary(*b, *x, *y).ok()?,
        (OpKind::Cmp(pred), [x, y]) => Scalar::Bool(eval::compare(*pred, *x, *y).ok()?),
        (OpKind::Select, [c, a, b]) => eval::select(*c, *a, *b).ok()?,
        (OpKind::Fma, [a, b, c]) => eval::fma(*a, *b, *c).ok()?,
        (OpKind::Cast { to }, [x]) => eval::cast(*x, *to),
        (OpKind::Bitcast { to }, [x]) => eval::bitcast(*x, *to).ok()?,
        (
            OpKind::Broadcast { .. }
            | OpKind::Reshape { .. }
            | OpKind::Permute { .. }
            | OpKind::Expand { .. }
            | OpKind::Flip { .. }
            | OpKind::Slice { .. },
            [x],
        ) if matches!(result_ty, Type::Tile(_)) && !is_splat_op(func, id) => *x,
        (OpKind::Pad { value, .. }, [x]) if value == x => *x,
        _ => return None,
    };
    Some(materialize(func, value, &result_ty))
}

/// `x - x == 0` and `x ^ x == 0` on integers and `bool`, whatever `x` is.
fn self_cancelling(func: &mut Function, id: OpId) -> Option<Rewrite> {
    let op = func.op(id);
    let OpKind::Binary(BinaryOp::Sub | BinaryOp::Xor) = op.kind else {
        return None;
    };
    let ty = func.ty(op.results[0]).clone();
    if op.operands[0] != op.operands[1] || ty.dtype().is_float() {
        return None;
    }
    Some(materialize(func, Scalar::zero(ty.dtype()), &ty))
}

/// Whether `id` itself is a splat (so folding it would only copy it).
fn is_splat_op(func: &Function, id: OpId) -> bool {
    matches!(
        func.op(id).kind,
        OpKind::Constant { .. } | OpKind::Full { .. }
    )
}

/// A new `constant` (for a scalar type) or `full` (for a tile type) op.
fn materialize(func: &mut Function, value: Scalar, ty: &Type) -> Rewrite {
    let kind = match ty.tile_shape() {
        Some(shape) => OpKind::Full {
            value,
            shape: shape.clone(),
        },
        None => OpKind::Constant { value },
    };
    let op = func.create_op(kind, Vec::new(), vec![ty.clone()], Vec::new());
    Rewrite {
        ops: vec![op],
        values: func.op(op).results.clone(),
    }
}

/// `if` on a known condition: the chosen branch's ops, inlined.
fn known_branch(func: &mut Function, id: OpId) -> Option<Rewrite> {
    let Scalar::Bool(cond) = splat_of(func, func.op(id).operands[0])? else {
        return None;
    };
    let mut regions = take_regions(func, id);
    let mut branch = regions.swap_remove(if cond { 0 } else { 1 });
    let terminator = branch.ops.pop()?;
    Some(Rewrite {
        values: func.op(terminator).operands.clone(),
        ops: branch.ops,
    })
}

/// `for` whose bounds are known and give no iteration: its results are the
/// initial carried values.
fn zero_trip_loop(func: &mut Function, id: OpId) -> Option<Rewrite> {
    let operands = func.op(id).operands.clone();
    let lo = splat_of(func, operands[0])?.to_i128()?;
    let hi = splat_of(func, operands[1])?.to_i128()?;
    if lo < hi {
        return None;
    }
    take_regions(func, id);
    Some(Rewrite {
        ops: Vec::new(),
        values: operands[3..].to_vec(),
    })
}

fn is_zero(s: Scalar) -> bool {
    s == Scalar::zero(s.dtype())
}

fn is_one(s: Scalar) -> bool {
    s.to_i128() == Some(1) && !s.dtype().is_bool()
}
