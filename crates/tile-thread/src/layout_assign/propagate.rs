//! Layouts that follow their users: elementwise ops compute in the layout of
//! their weightiest operand, and what is cheap to place (values computed
//! from `full`s and `iota`s alone, broadcasts, loop-carried values started
//! by a `full`, loaded tiles repeated by broadcasts) takes that layout
//! instead of being converted to it.

use super::repeated::{above_load, masked_loads, reanchored, repeated_chain, repeats_load};
use super::split::merged_axes;
use super::DistLayout;
use crate::lower::{wider_store_layout, TensorCores};
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{Function, OpKind, Type, Value};

/// How an operand of an elementwise op weighs in choosing the op's layout:
/// the op computes in the layout of its first operand of the lowest weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Weight {
    /// Computed by anything else (a `dot`, a load, a reduction, an
    /// elementwise op of such): converting it costs a tile.
    Fixed,
    /// A loaded tile repeated (block scales over their groups,
    /// `repeated.rs`); its load can read it in the layout its user needs.
    Repeated,
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
    let mut slots = every_carried_slot(func);
    slots.retain(|&(init, ..)| recomputable(func, init, memo));
    slots
}

/// Every `for` carried slot of `func`: `(initial value, region argument,
/// yielded value, loop result)`.
pub(super) fn every_carried_slot(func: &Function) -> Vec<(Value, Value, Value, Value)> {
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
    slots
}

/// What [`Weighing::weight`] reads besides the function: the loop-carried values
/// started by a `full`, what [`recomputable`] has found, and how many times
/// each value is used.
struct Weighing {
    soft: BTreeSet<Value>,
    memo: BTreeMap<Value, bool>,
    uses: BTreeMap<Value, usize>,
}

impl Weighing {
    fn new(func: &Function) -> Weighing {
        let mut memo = BTreeMap::new();
        let soft = carried_slots(func, &mut memo)
            .into_iter()
            .map(|(_, arg, ..)| arg)
            .collect();
        let mut uses = BTreeMap::new();
        func.walk(&mut |id| {
            for &v in &func.op(id).operands {
                *uses.entry(v).or_insert(0) += 1;
            }
        });
        Weighing { soft, memo, uses }
    }

    /// The weight of operand `v`.
    fn weight(&mut self, func: &Function, v: Value) -> Weight {
        if recomputable(func, v, &mut self.memo) {
            return Weight::Recomputable;
        }
        let broadcast = func
            .defining_op(v)
            .is_some_and(|id| matches!(func.op(id).kind, OpKind::Broadcast { .. }));
        if broadcast || self.soft.contains(&v) {
            Weight::Placeable
        } else if repeats_load(func, v, &self.uses, false) {
            Weight::Repeated
        } else {
            Weight::Fixed
        }
    }
}

/// In program order, gives each elementwise op the layout of its first
/// operand of the lowest [`Weight`] (its results take it too) and places
/// its other operands in it at their first use ([`place_operands`]). An
/// indexed access (`gather`, `atomic`, `scatter`), whose index, mask and
/// value tiles the lowering brings to its result's layout (a scatter's:
/// its value's), places them in that layout
/// alike: an embedding's `rows < n` mask and an atomic's index tiles built
/// from `iota`s are computed where the access reads them instead of being
/// converted to it, and its `ids` column, loaded and broadcast, is loaded
/// there where the target's masked loads are predicated. (On AMD each of
/// its thread's several masked element loads would be a branch of its own,
/// where the staging loads one element per thread: there the chain above
/// the load and its casts is held in place all the same, so the loaded
/// ids reach the access in one conversion, [`above_load`].)
pub(super) fn propagate(
    func: &Function,
    (tensor_cores, num_warps): (TensorCores, u32),
    values: &mut BTreeMap<Value, DistLayout>,
) {
    // The first user decides; later users of another layout convert.
    let mut decided = BTreeSet::new();
    let mut weighing = Weighing::new(func);
    func.walk(&mut |id| {
        let op = func.op(id);
        if matches!(
            op.kind,
            OpKind::Gather | OpKind::Atomic { .. } | OpKind::Scatter
        ) {
            // A scatter has no result: it writes in its value's layout, or
            // in 16-byte vectors where the value is an accumulator's.
            let anchor = match op.kind {
                OpKind::Scatter => op.operands.iter().rev().nth(1).and_then(|v| {
                    let layout = values.get(v)?;
                    let dtype = func.ty(*v).dtype();
                    Some(wider_store_layout(layout, dtype, num_warps).unwrap_or(layout.clone()))
                }),
                _ => op.results.first().and_then(|r| values.get(r)).cloned(),
            };
            if let Some(anchor) = anchor {
                let operands = op.operands.get(1..).unwrap_or_default();
                let placing = Placing {
                    anchor: &anchor,
                    masked_in_place: tensor_cores.predicated_loads(),
                };
                place_operands(func, operands, placing, values, &mut decided, &mut weighing);
            }
            return;
        }
        if !elementwise(&op.kind) {
            return;
        }
        // A recomputable result is placed by its own users.
        if op
            .results
            .iter()
            .all(|&r| recomputable(func, r, &mut weighing.memo))
        {
            return;
        }
        let anchor = op
            .operands
            .iter()
            .min_by_key(|&&v| weighing.weight(func, v))
            .and_then(|v| values.get(v))
            .cloned();
        let Some(mut anchor) = anchor else {
            return;
        };
        // A repeated load the anchor's layout gives no reuse: a layout in
        // which it has some, where the other operands are loads too.
        let unplaced = op.operands.iter().find(|&&v| {
            weighing.weight(func, v) == Weight::Repeated
                && repeated_chain(func, v, &anchor).is_none()
        });
        if let Some((better, loads)) =
            unplaced.and_then(|&v| reanchored(func, id, v, &anchor, &weighing.uses))
        {
            values.extend(loads);
            anchor = better;
        }
        let placing = Placing {
            anchor: &anchor,
            masked_in_place: true,
        };
        place_operands(
            func,
            &op.operands,
            placing,
            values,
            &mut decided,
            &mut weighing,
        );
        for &r in &op.results {
            values.insert(r, anchor.clone());
        }
    });
}

/// Where [`place_operands`] places: the op's layout, and whether repeated
/// masked loads of several elements per thread may be loaded in it.
#[derive(Clone, Copy)]
struct Placing<'a> {
    anchor: &'a DistLayout,
    masked_in_place: bool,
}

/// Places the light `operands` of one op in its layout:
/// recomputable ones with their whole computation ([`place`]), repeated
/// loads down their chain, broadcasts of fixed values themselves (their
/// source is converted, if need be: a row, not a tile). So `sum /
/// broadcast(n)` computes `broadcast(n)` in the reduction's slice layout,
/// and a mask built from an `iota` is built in the layout of the scores it
/// selects from.
fn place_operands(
    func: &Function,
    operands: &[Value],
    Placing {
        anchor,
        masked_in_place,
    }: Placing<'_>,
    values: &mut BTreeMap<Value, DistLayout>,
    decided: &mut BTreeSet<Value>,
    weighing: &mut Weighing,
) {
    let chain = |v| {
        repeated_chain(func, v, anchor).map(|chain| {
            if masked_in_place || !masked_loads(func, &chain) {
                chain
            } else {
                above_load(func, chain)
            }
        })
    };
    for &v in operands {
        if values.get(&v).is_none_or(|l| l.shape != anchor.shape) {
            continue;
        }
        match weighing.weight(func, v) {
            Weight::Recomputable => place(func, v, anchor, values, decided),
            Weight::Repeated => values.extend(chain(v).unwrap_or_default()),
            Weight::Placeable if !weighing.soft.contains(&v) && decided.insert(v) => {
                // A broadcast of a repeated load (a row of statistics
                // loaded `[1, BM]`, viewed `[BM, 1]`): loaded in place
                // where its threads reuse it, else broadcast from
                // wherever its source is held.
                let chain = repeats_load(func, v, &weighing.uses, false)
                    .then(|| chain(v))
                    .flatten();
                values.extend(chain.unwrap_or_else(|| vec![(v, anchor.clone())]));
            }
            _ => {}
        }
    }
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
    if elementwise(&op.kind) {
        for &x in &op.operands {
            place(func, x, layout, values, decided);
        }
    } else if let Some((source, held)) = held_source(func, v, layout) {
        place(func, source, &held, values, decided);
    }
}

/// The tile operand of the movement op defining `v`, and the layout in
/// which it computes `v` in `layout` keeping its registers: a broadcast's
/// source fit to it, a reshape's operand without the unit axes it inserts,
/// with the axes it merges split or with its unit axes where the operand
/// has them, a permute's operand permuted back.
pub(super) fn held_source(
    func: &Function,
    v: Value,
    layout: &DistLayout,
) -> Option<(Value, DistLayout)> {
    let op = func.op(func.defining_op(v)?);
    let source = *op.operands.first()?;
    let Type::Tile(t) = func.ty(source) else {
        return None;
    };
    let dims = t.shape.dims();
    let held = match &op.kind {
        OpKind::Broadcast { .. } | OpKind::Expand { .. } => layout.fit(dims),
        OpKind::Reshape { .. } => match unit_axes_inserted(func, source, v) {
            Some(axes) => layout.drop_axes(&axes),
            None => merged_axes(dims, &layout.shape)
                .and_then(|(axis, inner)| layout.split_axis(axis, inner))
                .or_else(|| layout.with_unit_axes_of(dims)),
        },
        OpKind::Permute { perm } => {
            let mut inverse = vec![0; perm.len()];
            for (i, &d) in perm.iter().enumerate() {
                *inverse.get_mut(d)? = i;
            }
            layout.permuted(&inverse)
        }
        _ => None,
    }?;
    Some((source, held))
}
