//! Dead code elimination: removes ops whose results are unused and that have
//! no effect, until none is left.
//!
//! Stores and `yield`s always stay. A `for` or `if` stays while any of its
//! results is used or its regions contain a store.

use super::rewrite::{put_regions, take_regions};
use super::Pass;
use crate::function::{Function, OpId, Region, Value};
use crate::ops::OpKind;
use std::collections::HashSet;

/// The `dce` pass.
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, func: &mut Function) -> bool {
        let mut changed = false;
        loop {
            let used = func.used_values();
            let mut body = std::mem::take(&mut func.body);
            let removed = sweep(func, &mut body, &used);
            func.body = body;
            if !removed {
                return changed;
            }
            changed = true;
        }
    }
}

/// Removes the dead ops of `region` and its nested regions.
fn sweep(func: &mut Function, region: &mut Region, used: &HashSet<Value>) -> bool {
    let mut removed = false;
    let mut kept = Vec::with_capacity(region.ops.len());
    // Backwards, so an op whose only users are removed in this sweep is seen
    // after them; `used` is from before the sweep, so the outer loop repeats.
    for &op in region.ops.iter().rev() {
        if is_dead(func, op, used) {
            removed = true;
            continue;
        }
        let mut regions = take_regions(func, op);
        for nested in &mut regions {
            removed |= sweep(func, nested, used);
        }
        put_regions(func, op, regions);
        kept.push(op);
    }
    kept.reverse();
    region.ops = kept;
    removed
}

fn is_dead(func: &Function, id: OpId, used: &HashSet<Value>) -> bool {
    let op = func.op(id);
    if op.results.iter().any(|r| used.contains(r)) {
        return false;
    }
    match op.kind {
        OpKind::For { .. } | OpKind::While | OpKind::If => !observable_inside(func, id),
        ref kind => !kind.has_side_effects(),
    }
}

/// Whether a store, an assertion or a print runs anywhere inside `op`'s
/// regions.
fn observable_inside(func: &Function, op: OpId) -> bool {
    let mut observable = false;
    for region in &func.op(op).regions {
        func.walk_region(region, &mut |inner| {
            observable |= func.op(inner).kind.is_observable();
        });
    }
    observable
}
