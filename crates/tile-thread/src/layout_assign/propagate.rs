//! Layouts that follow their users: elementwise ops compute in the layout of
//! their weightiest operand, and what is cheap to place (values computed
//! from `full`s and `iota`s alone, broadcasts, loop-carried values started
//! by a `full`) takes that layout instead of being converted to it.

use super::DistLayout;
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{Function, OpKind, Type, Value};

/// How an operand of an elementwise op weighs in choosing the op's layout:
/// the op computes in the layout of its first operand of the lowest weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Weight {
    /// Computed by anything else (a `dot`, a load, a reduction, an
    /// elementwise op of such): converting it costs a tile.
    Fixed,
    /// A loop-carried value started by a `full` (its layout follows what
    /// the loop yields for it, [`carry_through_loops`]) or a broadcast of a
    /// fixed value (it can be broadcast into any layout its source fits).
    Placeable,
    /// [`recomputable`]: computed right where it is used.
    Recomputable,
}

/// Whether `v` is computed alike in any layout, from nothing but scalars,
/// `full`s and `iota`s through broadcasts, elementwise ops and reshapes that
/// only insert an axis of extent 1 (attention's `key < seq` mask,
/// `(iota + j * BN).reshape([1, BN])`).
fn recomputable(func: &Function, v: Value, memo: &mut BTreeMap<Value, bool>) -> bool {
    if !matches!(func.ty(v), Type::Tile(_)) {
        return true;
    }
    if let Some(&known) = memo.get(&v) {
        return known;
    }
    let answer = match func.defining_op(v).map(|id| func.op(id)) {
        Some(op) => match op.kind {
            OpKind::Full { .. } | OpKind::Iota { .. } => true,
            OpKind::Broadcast { .. } | OpKind::Expand { .. } => {
                op.operands.iter().all(|&x| recomputable(func, x, memo))
            }
            OpKind::Reshape { .. } => {
                unit_axes_inserted(func, op.operands[0], v).is_some()
                    && recomputable(func, op.operands[0], memo)
            }
            _ if elementwise(&op.kind) => op.operands.iter().all(|&x| recomputable(func, x, memo)),
            _ => false,
        },
        None => false,
    };
    memo.insert(v, answer);
    answer
}

/// The axes of extent 1 (ascending, at least one) that a reshape of
/// `source` into `result` inserts, if that is all it does (`[BN]` into `[1,
/// BN]` or `[BN, 1]`, `[BM, D]` into `[1, BM, 1, D]`).
pub(crate) fn unit_axes_inserted(
    func: &Function,
    source: Value,
    result: Value,
) -> Option<Vec<usize>> {
    let (Type::Tile(s), Type::Tile(r)) = (func.ty(source), func.ty(result)) else {
        return None;
    };
    let (s, r) = (s.shape.dims(), r.shape.dims());
    if r.len() <= s.len() {
        return None;
    }
    // Each of the source's axes is the result's next one of its extent;
    // the result's axes passed over on the way are the inserted ones, of
    // extent 1. (Where a source axis of extent 1 could be either of two
    // result axes, either choice holds the elements alike.)
    let mut inserted = Vec::new();
    let mut next = 0;
    for (axis, &extent) in r.iter().enumerate() {
        if next < s.len() && s[next] == extent {
            next += 1;
        } else if extent == 1 {
            inserted.push(axis);
        } else {
            return None;
        }
    }
    (next == s.len() && inserted.len() == r.len() - s.len()).then_some(inserted)
}

/// Whether ops of `kind` compute each result element from the operands'
/// elements at the same coordinates.
pub(super) fn elementwise(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Fma
            | OpKind::Cast { .. }
            | OpKind::Bitcast { .. }
    )
}

/// The `for` carried slots of `func` whose initial value is recomputable:
/// `(initial value, region argument, yielded value, loop result)`.
fn carried_slots(
    func: &Function,
    memo: &mut BTreeMap<Value, bool>,
) -> Vec<(Value, Value, Value, Value)> {
    let mut slots = Vec::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        let (OpKind::For { .. }, Some(body)) = (&op.kind, op.regions.first()) else {
            return;
        };
        let yielded = body
            .ops
            .last()
            .map(|&y| func.op(y))
            .filter(|y| y.kind == OpKind::Yield);
        for (slot, (&arg, &result)) in body.args.iter().skip(1).zip(&op.results).enumerate() {
            let init = op.operands.get(3 + slot).copied();
            let yield_value = yielded.and_then(|y| y.operands.get(slot).copied());
            if let (Some(init), Some(yield_value)) = (init, yield_value) {
                slots.push((init, arg, yield_value, result));
            }
        }
    });
    slots.retain(|&(init, ..)| recomputable(func, init, memo));
    slots
}

/// The weight of operand `v`.
fn weight(
    func: &Function,
    v: Value,
    soft: &BTreeSet<Value>,
    memo: &mut BTreeMap<Value, bool>,
) -> Weight {
    if recomputable(func, v, memo) {
        return Weight::Recomputable;
    }
    let broadcast = func
        .defining_op(v)
        .is_some_and(|id| matches!(func.op(id).kind, OpKind::Broadcast { .. }));
    if broadcast || soft.contains(&v) {
        Weight::Placeable
    } else {
        Weight::Fixed
    }
}

/// In program order, gives each elementwise op the layout of its first
/// operand of the lowest [`Weight`] (its results take it too) and places
/// its other operands in it at their first use: recomputable ones with
/// their whole computation ([`place`]), broadcasts of fixed values
/// themselves (their source is converted, if need be: a row, not a tile).
/// So `sum / broadcast(n)` computes `broadcast(n)` in the reduction's slice
/// layout, and a mask built from an `iota` is built in the layout of the
/// scores it selects from.
pub(super) fn propagate(func: &Function, values: &mut BTreeMap<Value, DistLayout>) {
    // The first user decides; later users of another layout convert.
    let mut decided = BTreeSet::new();
    let mut memo = BTreeMap::new();
    let soft: BTreeSet<Value> = carried_slots(func, &mut memo)
        .into_iter()
        .map(|(_, arg, ..)| arg)
        .collect();
    func.walk(&mut |id| {
        let op = func.op(id);
        if !elementwise(&op.kind) {
            return;
        }
        // A recomputable result is placed by its own users.
        if op.results.iter().all(|&r| recomputable(func, r, &mut memo)) {
            return;
        }
        let anchor = op
            .operands
            .iter()
            .min_by_key(|&&v| weight(func, v, &soft, &mut memo))
            .and_then(|v| values.get(v))
            .cloned();
        let Some(anchor) = anchor else {
            return;
        };
        for &v in &op.operands {
            if values.get(&v).is_none_or(|l| l.shape != anchor.shape) {
                continue;
            }
            match weight(func, v, &soft, &mut memo) {
                Weight::Recomputable => place(func, v, &anchor, values, &mut decided),
                Weight::Placeable if !soft.contains(&v) && decided.insert(v) => {
                    values.insert(v, anchor.clone());
                }
                _ => {}
            }
        }
        for &r in &op.results {
            values.insert(r, anchor.clone());
        }
    });
}

/// Gives each loop-carried value started by a recomputable `full` (a
/// running maximum, a sum, an accumulator rescaled before its `dot`) the
/// layout of what the loop yields for it: its initial value, region
/// argument and loop result alike, so the loop carries it without a
/// conversion.
pub(super) fn carry_through_loops(func: &Function, values: &mut BTreeMap<Value, DistLayout>) {
    let mut memo = BTreeMap::new();
    for (init, arg, yielded, result) in carried_slots(func, &mut memo) {
        let Some(layout) = values.get(&yielded).cloned() else {
            continue;
        };
        if values.get(&arg).is_some_and(|l| l.shape == layout.shape) {
            let mut decided = BTreeSet::new();
            place(func, init, &layout, values, &mut decided);
            values.insert(arg, layout.clone());
            values.insert(result, layout);
        }
    }
}

/// Gives the recomputable value `v` (unless decided already) `layout`, and
/// its operands the layouts that compute it in place: the same for an
/// elementwise op, the fit for a broadcast's source.
fn place(
    func: &Function,
    v: Value,
    layout: &DistLayout,
    values: &mut BTreeMap<Value, DistLayout>,
    decided: &mut BTreeSet<Value>,
) {
    if !matches!(func.ty(v), Type::Tile(_)) || !decided.insert(v) {
        return;
    }
    values.insert(v, layout.clone());
    let Some(op) = func.defining_op(v).map(|id| func.op(id)) else {
        return;
    };
    match op.kind {
        OpKind::Broadcast { .. } | OpKind::Expand { .. } => {
            for &x in &op.operands {
                if let Type::Tile(t) = func.ty(x) {
                    if let Some(fitted) = layout.fit(t.shape.dims()) {
                        place(func, x, &fitted, values, decided);
                    }
                }
            }
        }
        OpKind::Reshape { .. } => {
            let source = op.operands[0];
            let dropped = unit_axes_inserted(func, source, v).and_then(|a| layout.drop_axes(&a));
            if let Some(dropped) = dropped {
                place(func, source, &dropped, values, decided);
            }
        }
        _ if elementwise(&op.kind) => {
            for &x in &op.operands {
                place(func, x, layout, values, decided);
            }
        }
        _ => {}
    }
}
