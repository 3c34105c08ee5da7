//! Loaded tiles repeated by a broadcast on their way to an elementwise op:
//! the scales of a block-scaled product or of a dequantization, each
//! repeated over its group of elements (`[M, K / 32]` reshaped to `[M,
//! K / 32, 1]`, expanded to `[M, K / 32, 32]`, reshaped to `[M, K]`).
//!
//! Such an operand takes the op's layout back down its chain to the load
//! (`propagate::held_source` at each step), so that the load reads the
//! small tile straight into the registers the repetition keeps, each
//! element once per thread. That pays only where each thread reuses what
//! it loads: where a thread would load a distinct element for more than
//! half of its registers (scales repeated across threads, not within one),
//! the uncoalesced element loads and their addresses cost more than
//! staging the repeated tile. Where the op's layout gives no reuse and
//! the op's other operands are loads as well, the op takes a blocked
//! layout whose threads hold runs along the repeated axis too
//! ([`reanchored`]): a `[K, N]` operand scaled per 32 rows, held as 8 rows
//! of 8 columns per thread, loads 8 scales for its 64 elements and its
//! rows in 8-byte vectors.

use super::propagate::held_source;
use super::DistLayout;
use std::collections::BTreeMap;
use tile_ir::{Function, OpId, OpKind, Type, Value};

/// Whether `v` is a loaded tile repeated: computed from a `load` through
/// casts, bitcasts, permutes, reshapes and at least one broadcast (`seen`:
/// one is below already), each value on the way used once (`uses`).
pub(super) fn repeats_load(
    func: &Function,
    v: Value,
    uses: &BTreeMap<Value, usize>,
    seen: bool,
) -> bool {
    if uses.get(&v) != Some(&1) {
        return false;
    }
    let Some(op) = func.defining_op(v).map(|id| func.op(id)) else {
        return false;
    };
    let through = |seen| {
        op.operands
            .first()
            .is_some_and(|&x| repeats_load(func, x, uses, seen))
    };
    match op.kind {
        OpKind::Load | OpKind::LoadMasked { .. } => seen,
        OpKind::Broadcast { .. } | OpKind::Expand { .. } => through(true),
        OpKind::Cast { .. }
        | OpKind::Bitcast { .. }
        | OpKind::Permute { .. }
        | OpKind::Reshape { .. } => through(seen),
        _ => false,
    }
}

/// The layouts that compute the repeated load `v` in `layout` in place:
/// `v`'s and each value's it is computed from, down to the load where a
/// layout exists all the way (else down to where one stops, the lowering
/// converting there). `None` when the load is reached but its thread would
/// not reuse what it loads (see the module doc).
pub(super) fn repeated_chain(
    func: &Function,
    v: Value,
    layout: &DistLayout,
) -> Option<Vec<(Value, DistLayout)>> {
    let mut chain = vec![(v, layout.clone())];
    while let Some((v, layout)) = chain.last().cloned() {
        let Some(op) = func.defining_op(v).map(|id| func.op(id)) else {
            break;
        };
        let next = match (&op.kind, op.operands.first()) {
            (OpKind::Cast { .. } | OpKind::Bitcast { .. }, Some(&x)) => Some((x, layout)),
            _ => held_source(func, v, &layout),
        };
        match next {
            Some(next) => chain.push(next),
            None => break,
        }
    }
    let reused = loaded_registers(func, &chain).is_none_or(|n| 2 * n <= layout.registers());
    reused.then_some(chain)
}

/// The distinct registers per thread of the load that ends `chain`, if it
/// ends in one.
fn loaded_registers(func: &Function, chain: &[(Value, DistLayout)]) -> Option<usize> {
    let (v, layout) = chain.last()?;
    is_load(func, *v).then(|| {
        layout
            .without_register_copies()
            .map_or(layout.registers(), |(distinct, _)| distinct.registers())
    })
}

/// Whether `chain` ends in a masked load of more than one distinct
/// element per thread.
pub(super) fn masked_loads(func: &Function, chain: &[(Value, DistLayout)]) -> bool {
    let masked = chain.last().is_some_and(|&(v, _)| {
        func.defining_op(v)
            .is_some_and(|id| matches!(func.op(id).kind, OpKind::LoadMasked { .. }))
    });
    masked && loaded_registers(func, chain).is_some_and(|n| n > 1)
}

/// `chain` without its load and the casts and bitcasts just above it: the
/// part of a repeated load's chain worth holding in place where the load
/// itself is not loaded in place, so that the one conversion between them
/// moves the loaded tile, at its narrowest, into the layout the rest keeps.
pub(super) fn above_load(
    func: &Function,
    mut chain: Vec<(Value, DistLayout)>,
) -> Vec<(Value, DistLayout)> {
    if chain.last().is_some_and(|&(v, _)| is_load(func, v)) {
        chain.pop();
        while chain.last().is_some_and(|&(v, _)| {
            func.defining_op(v).is_some_and(|id| {
                matches!(
                    func.op(id).kind,
                    OpKind::Cast { .. } | OpKind::Bitcast { .. }
                )
            })
        }) {
            chain.pop();
        }
    }
    chain
}

fn is_load(func: &Function, v: Value) -> bool {
    func.defining_op(v)
        .is_some_and(|id| matches!(func.op(id).kind, OpKind::Load | OpKind::LoadMasked { .. }))
}

/// For the elementwise op `id`, whose repeated operand `v` no thread
/// reuses in the op's layout `anchor`: a blocked layout with runs along
/// an outer axis ([`DistLayout::blocked_runs`]) in which it is reused the
/// most (fewest loads per thread: distinct loaded registers plus element
/// rows; then the widest runs along the innermost axis, a power of two of
/// at most 16 bytes of the loads' dtype), with the placements of the
/// op's other operands, each a load through casts and bitcasts used once.
/// `None` where another operand is not such a load (converting it would
/// cost a tile) or no such layout gives reuse.
pub(super) fn reanchored(
    func: &Function,
    id: OpId,
    v: Value,
    anchor: &DistLayout,
    uses: &BTreeMap<Value, usize>,
) -> Option<(DistLayout, Vec<(Value, DistLayout)>)> {
    let op = func.op(id);
    let loads: Vec<Vec<Value>> = op
        .operands
        .iter()
        .filter(|&&x| x != v)
        .map(|&x| load_chain(func, x, uses))
        .collect::<Option<_>>()?;
    let bytes = loads
        .iter()
        .filter_map(|chain| chain.last())
        .map(|&load| func.ty(load).dtype().size_bytes())
        .min()?;
    let shape = match func.ty(op.results[0]) {
        Type::Tile(t) => t.shape.dims().to_vec(),
        _ => return None,
    };
    let threads = anchor.thread.size() as usize;
    let warps = u32::try_from(threads / 32).ok()?;
    let elements = shape.iter().product::<usize>();
    if !elements.is_multiple_of(threads) {
        return None;
    }
    let per_thread = elements / threads;
    let inner = shape.len() - 1;
    let mut best: Option<(usize, usize, DistLayout)> = None;
    for axis in 0..inner {
        let mut run = 2;
        while run <= per_thread && shape[axis].is_multiple_of(run) {
            let across = per_thread / run;
            let fits = per_thread.is_multiple_of(run)
                && across.is_power_of_two()
                && shape[inner].is_multiple_of(across)
                && across * bytes <= 16;
            let mut spt = vec![1; shape.len()];
            (spt[axis], spt[inner]) = (run, across);
            let candidate = fits
                .then(|| DistLayout::blocked_runs(&shape, warps, &spt).ok())
                .flatten()
                .filter(|c| c.registers() == per_thread);
            let loaded = candidate.as_ref().and_then(|c| {
                let chain = repeated_chain(func, v, c)?;
                loaded_registers(func, &chain)
            });
            if let (Some(candidate), Some(loaded)) = (candidate, loaded) {
                let cost = loaded + per_thread / across;
                let better = best
                    .as_ref()
                    .is_none_or(|&(n, a, _)| (cost, usize::MAX - across) < (n, usize::MAX - a));
                if better {
                    best = Some((cost, across, candidate));
                }
            }
            run *= 2;
        }
    }
    let (_, _, layout) = best?;
    let placed = loads
        .into_iter()
        .flatten()
        .map(|x| (x, layout.clone()))
        .collect();
    Some((layout, placed))
}

/// `x` and the values it is computed from through casts and bitcasts, down
/// to a load (last), each used once: a loaded tile that can be loaded in
/// any layout.
fn load_chain(func: &Function, x: Value, uses: &BTreeMap<Value, usize>) -> Option<Vec<Value>> {
    let mut chain = vec![x];
    loop {
        let v = *chain.last()?;
        if uses.get(&v) != Some(&1) {
            return None;
        }
        if is_load(func, v) {
            return Some(chain);
        }
        let op = func.op(func.defining_op(v)?);
        match (&op.kind, op.operands.first()) {
            (OpKind::Cast { .. } | OpKind::Bitcast { .. }, Some(&source)) => chain.push(source),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DistLayout;

    /// Runs of 8 rows by 8 columns per thread: each thread holds one 8×8
    /// block of the tile, its registers running along the columns first,
    /// and the blocks of a warp's lanes side by side along a row.
    #[test]
    fn runs_along_an_outer_axis_give_each_thread_a_block() {
        let layout = DistLayout::blocked_runs(&[128, 128], 8, &[8, 8]).unwrap();
        assert_eq!(layout.registers(), 64);
        for t in 0..256 {
            let (origin, ..) = layout.coordinate(t, 0);
            assert_eq!(origin, [8 * (t / 16), 8 * (t % 16)], "thread {t}");
            for v in 0..64 {
                let (c, live, owner) = layout.coordinate(t, v);
                assert!(live && owner);
                assert_eq!(c, [origin[0] + v / 8, origin[1] + v % 8], "thread {t}");
            }
        }
        // The default layout is the one with runs along the innermost axis.
        let runs = DistLayout::blocked_runs(&[64, 96], 4, &[1, 8]).unwrap();
        assert_eq!(runs, DistLayout::blocked(&[64, 96], 4, 8).unwrap());
    }
}
