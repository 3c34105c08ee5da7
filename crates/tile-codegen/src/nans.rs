//! Which ops may leave their NaN results as the hardware makes them: the
//! analysis both back ends share (`host/nan.rs` over the tile IR, `gpu/nan.rs`
//! over the thread-level program).
//!
//! The interpreter gives every computed f32/f64 NaN the canonical bits
//! (docs/semantics.md), and the scalar emitter canonicalizes each computed
//! result: a compare and a select per element and op. A NaN's payload is
//! only seen where its bits leave the arithmetic, though: in a store, a
//! bitcast, a shuffle, a `dot`, a loop's carried values. An op that computes
//! from a float (unary and binary ops, `cmp`, `fma`, a cast to another
//! dtype) gives the same result whatever the payload of a NaN operand. So an
//! op's result may keep the hardware's NaN when each of its uses computes
//! from it, or passes it on unchanged (a `select`) to a result whose NaN may
//! itself be left so. Such an op is emitted without its canonicalization
//! (`crate::scalar::Nans::AsComputed`); the first op that observes the value
//! computes it from canonical operands or canonicalizes itself.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

/// The ops of `candidates` (each defining one float value, `result(op)`)
/// whose results no use observes: starting from every candidate, those with
/// a use that `observes(user, operand number, candidates left)` are dropped
/// until none is left (a use by a passing op observes once that op is
/// dropped). `uses` lists each value's users and operand numbers.
pub(crate) fn unobserved<Id, V>(
    mut candidates: HashSet<Id>,
    result: impl Fn(Id) -> V,
    uses: &HashMap<V, Vec<(Id, usize)>>,
    observes: impl Fn(Id, usize, &HashSet<Id>) -> bool,
) -> HashSet<Id>
where
    Id: Copy + Eq + Hash,
    V: Eq + Hash,
{
    loop {
        let observed: Vec<Id> = candidates
            .iter()
            .copied()
            .filter(|&id| {
                uses.get(&result(id))
                    .into_iter()
                    .flatten()
                    .any(|&(user, at)| observes(user, at, &candidates))
            })
            .collect();
        if observed.is_empty() {
            return candidates;
        }
        for id in observed {
            candidates.remove(&id);
        }
    }
}
