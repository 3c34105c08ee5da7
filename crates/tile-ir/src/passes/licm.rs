//! Loop-invariant code motion of what LLVM cannot move: an op directly in
//! a `for` body that moves the elements of a tile computed before the loop
//! (a `[BM, 1]` row mask or row index broadcast against a block of
//! columns, a slice, a flip) moves in front of the loop, with the invariant
//! ops of the body it reads. A lowering converts such a tile between
//! distributions where it is used, through shared memory between barriers
//! or by warp shuffles, which LLVM keeps in place; hoisted, the conversion
//! happens once, before the loop. Other invariant arithmetic stays: LLVM
//! hoists it itself, or not, weighing the registers it would hold across
//! the loop (a kernel at its register ceiling spills for one more).
//!
//! Only ops that compute from their operands alone and cannot fail move:
//! constants, `iota`, elementwise arithmetic (integer division is total:
//! a zero divisor gives 0), casts and the broadcasts and other movements
//! that copy elements. Memory accesses, products, reductions, ops with
//! regions, and `reshape`/`permute` (which the lowerings read as the
//! operand chains of the loads and products beside them) stay. Ops inside
//! a nested `if` stay; an inner loop's invariants move out of it first and
//! then, where they are invariant in the outer loop too, out of that.
//! A hoisted op runs even when the loop runs no iteration, which costs a
//! few instructions and changes nothing the kernel computes.

use super::rewrite::{put_regions, take_regions};
use super::Pass;
use crate::function::{Function, OpId, Region, Value};
use crate::ops::OpKind;
use std::collections::HashSet;

/// The `licm` pass.
pub struct Licm;

impl Pass for Licm {
    fn name(&self) -> &'static str {
        "licm"
    }

    fn run(&self, func: &mut Function) -> bool {
        let mut body = std::mem::take(&mut func.body);
        let changed = hoist_in(func, &mut body);
        func.body = body;
        changed
    }
}

/// Hoists the invariants of every `for` in `region` and its nested regions,
/// innermost loops first, in front of their loops.
fn hoist_in(func: &mut Function, region: &mut Region) -> bool {
    let mut changed = false;
    let mut ops = Vec::with_capacity(region.ops.len());
    for id in std::mem::take(&mut region.ops) {
        let mut regions = take_regions(func, id);
        for nested in &mut regions {
            changed |= hoist_in(func, nested);
        }
        if matches!(func.op(id).kind, OpKind::For { .. }) {
            if let Some(body) = regions.first_mut() {
                let hoisted = invariants(func, body);
                changed |= !hoisted.is_empty();
                ops.extend(hoisted);
            }
        }
        put_regions(func, id, regions);
        ops.push(id);
    }
    region.ops = ops;
    changed
}

/// Removes from the loop body `body` the ops that move before the loop and
/// returns them in order: each invariant op that moves elements between
/// threads ([`moves_elements`]), and the invariant ops it reads,
/// transitively.
fn invariants(func: &Function, body: &mut Region) -> Vec<OpId> {
    let mut inside: HashSet<Value> = body.args.iter().copied().collect();
    func.walk_region(body, &mut |id| inside.extend(&func.op(id).results));
    let mut invariant = HashSet::new();
    for &id in &body.ops {
        let op = func.op(id);
        if op.regions.is_empty()
            && movable(&op.kind)
            && op.operands.iter().all(|v| !inside.contains(v))
        {
            invariant.insert(id);
            for result in &op.results {
                inside.remove(result);
            }
        }
    }
    // The ops that move, from the last to the first: an anchor, or an
    // invariant op a moving one reads.
    let mut moving = HashSet::new();
    for &id in body.ops.iter().rev() {
        let op = func.op(id);
        let read = op.results.iter().any(|r| {
            body.ops
                .iter()
                .any(|o| moving.contains(o) && func.op(*o).operands.contains(r))
        });
        if invariant.contains(&id) && (moves_elements(func, op) || read) {
            moving.insert(id);
        }
    }
    let hoisted = body
        .ops
        .iter()
        .copied()
        .filter(|o| moving.contains(o))
        .collect();
    body.ops.retain(|o| !moving.contains(o));
    hoisted
}

/// Whether `op` moves tile elements between positions, which a lowering
/// may do between threads (through shared memory or shuffles, which LLVM
/// does not move out of a loop): a broadcast or expansion of a tile, a
/// flip, slice, pad or concatenation. Broadcasts of scalars and arithmetic
/// stay in the loop unless such an op reads them: LLVM moves those itself,
/// weighing the registers they would hold.
fn moves_elements(func: &Function, op: &crate::function::Op) -> bool {
    match op.kind {
        OpKind::Broadcast { .. } | OpKind::Expand { .. } => op
            .operands
            .first()
            .is_some_and(|&v| func.ty(v).tile_shape().is_some()),
        OpKind::Flip { .. } | OpKind::Slice { .. } | OpKind::Pad { .. } | OpKind::Cat { .. } => {
            true
        }
        _ => false,
    }
}

/// Whether an op of this kind computes from its operands alone, cannot
/// fail, and is not read by the lowerings as part of a chain (see the
/// module docs).
fn movable(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::ProgramId { .. }
            | OpKind::NumPrograms { .. }
            | OpKind::Constant { .. }
            | OpKind::Full { .. }
            | OpKind::Iota { .. }
            | OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Fma
            | OpKind::Cast { .. }
            | OpKind::Bitcast { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Expand { .. }
            | OpKind::Flip { .. }
            | OpKind::Slice { .. }
            | OpKind::Pad { .. }
            | OpKind::Cat { .. }
            | OpKind::Dim { .. }
    )
}
