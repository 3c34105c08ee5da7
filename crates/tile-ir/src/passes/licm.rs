//! Loop-invariant code motion of what feeds the data movement LLVM cannot
//! move. A tile made before a `for` and broadcast in it (a `[BM, 1]` row
//! mask or row index against a block of columns) is converted by the
//! lowering, once, in front of the loop (`tile-thread`'s
//! `lower/invariant_broadcasts.rs`), when the broadcast's operand is
//! defined there; this pass moves the invariant ops of a loop body that a
//! broadcast of a tile reads (the row index's `tokens / TOPK`) in front of
//! the loop so that it is. A flip, slice, pad or concatenation of invariant
//! tiles (through shared memory, between barriers) moves itself, with what
//! it reads. Other invariant arithmetic stays: LLVM hoists it itself, or
//! not, weighing the registers it would hold across the loop (a kernel at
//! its register ceiling spills for one more), and a broadcast stays, since
//! its result can hold many times its operand's registers.
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
use crate::function::{Function, Op, OpId, Region, Value};
use crate::ops::{OpKind, Route};
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
/// returns them in order: the invariant ops a broadcast or expansion of a
/// tile in the body (or nested deeper) reads, transitively (the broadcast
/// stays: its result can be many times its operand, and the lowering
/// converts an operand made before the loop once, in front of it), and
/// each invariant flip, slice, pad or concatenation, with what it reads.
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
    // From the last op to the first: the values an anchor or a moving op
    // reads, and the invariant ops that define them.
    let mut wanted: HashSet<Value> = HashSet::new();
    let mut moving = HashSet::new();
    for &id in body.ops.iter().rev() {
        let op = func.op(id);
        let moves = invariant.contains(&id)
            && (op.results.iter().any(|r| wanted.contains(r)) || moves_in_place(func, op));
        if moves {
            moving.insert(id);
        }
        if moves || broadcasts_tile(func, op) {
            wanted.extend(&op.operands);
        }
        // A broadcast in a nested loop or branch reads values of this body
        // or of before it.
        for region in &op.regions {
            func.walk_region(region, &mut |nested| {
                let nested = func.op(nested);
                if broadcasts_tile(func, nested) {
                    wanted.extend(&nested.operands);
                }
            });
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

/// Whether `op` broadcasts or expands a tile, which a lowering may do
/// between threads (through shared memory or shuffles).
fn broadcasts_tile(func: &Function, op: &Op) -> bool {
    matches!(op.kind, OpKind::Broadcast { .. } | OpKind::Expand { .. })
        && op
            .operands
            .first()
            .is_some_and(|&v| func.ty(v).tile_shape().is_some())
}

/// Whether `op` moves a tile's elements into a result no larger than its
/// operands (a flip, slice, pad or concatenation: through shared memory,
/// which LLVM does not move out of a loop), so that it moves itself.
fn moves_in_place(func: &Function, op: &Op) -> bool {
    matches!(
        op.kind,
        OpKind::Flip { .. } | OpKind::Slice { .. } | OpKind::Pad { .. } | OpKind::Cat { .. }
    ) && op
        .operands
        .iter()
        .all(|&v| func.ty(v).tile_shape().is_some())
}

/// Whether an op of this kind computes from its operands alone, cannot
/// fail, and is not read by the lowerings as part of a chain (see the
/// module docs): the grid's indices, constants, elementwise ops, the
/// element moves but `reshape` and `permute`, and `dim`.
fn movable(kind: &OpKind) -> bool {
    match kind.route() {
        Route::ProgramId { .. } | Route::NumPrograms { .. } | Route::Constant(_) => true,
        Route::Elementwise => true,
        Route::Movement => !matches!(kind, OpKind::Reshape { .. } | OpKind::Permute { .. }),
        _ => matches!(kind, OpKind::Dim { .. }),
    }
}
