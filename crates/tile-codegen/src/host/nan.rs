//! Which ops of a tile IR function may leave their NaN results as the
//! hardware makes them (`crate::nans` explains why that is safe). Besides
//! the thread-level program's, the tile IR passes NaNs on through
//! `broadcast`, `expand` and `reduce`, and an `arg` reduction computes from
//! its operand.
//!
//! Layernorm's `x - mean` (selected, then squared and scaled), its squares
//! (summed, then divided) and `centered · rstd` (the operand of an `fma`)
//! are all such ops; the `fma`, which is stored, is not.

use std::collections::{HashMap, HashSet};
use tile_ir::{DType, Function, OpId, OpKind, Value};

/// The ops of `func` whose results' NaN payloads no use observes.
pub(super) fn unobserved_nans(func: &Function) -> HashSet<OpId> {
    let mut uses: HashMap<Value, Vec<(OpId, usize)>> = HashMap::new();
    let mut candidates = HashSet::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        for (at, &v) in op.operands.iter().enumerate() {
            uses.entry(v).or_default().push((id, at));
        }
        let float = |v: Value| matches!(func.ty(v).dtype(), DType::F32 | DType::F64);
        if matches!(op.results.as_slice(), [r] if float(*r))
            && (computes(&op.kind) || passes_on(&op.kind))
        {
            candidates.insert(id);
        }
    });
    let result = |id: OpId| func.op(id).results[0];
    let observing = |user, at, left: &HashSet<OpId>| observes(func, user, at, left);
    crate::nans::unobserved(candidates, result, &uses, observing)
}

/// Whether op `user` sees the NaN payload of its operand number `at`, given
/// the ops whose NaN payloads are still taken as unobserved.
fn observes(func: &Function, user: OpId, at: usize, unobserved: &HashSet<OpId>) -> bool {
    let op = func.op(user);
    match &op.kind {
        // The condition is a bool.
        OpKind::Select if at == 0 => false,
        OpKind::Cast { to } => op
            .operands
            .first()
            .is_some_and(|&v| func.ty(v).dtype() == *to),
        kind if computes(kind) => false,
        kind if passes_on(kind) => !unobserved.contains(&user),
        _ => true,
    }
}

/// Whether an op of `kind` computes its result from its operands' values,
/// so that a NaN operand's payload does not change it (a cast to the same
/// dtype is the operand itself: see [`observes`]).
fn computes(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Fma
            | OpKind::Cast { .. }
            | OpKind::ArgReduce { .. }
    )
}

/// Whether an op of `kind` may hand an operand's NaN on unchanged.
fn passes_on(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Select | OpKind::Broadcast { .. } | OpKind::Expand { .. } | OpKind::Reduce { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::unobserved_nans;

    /// The names of the results whose NaN payloads are unobserved in the
    /// kernel of `body` (over `%vx`, `%vo`: views `[8]` of `x` and `out`),
    /// sorted.
    fn unobserved(body: &str) -> Vec<String> {
        let text = format!(
            "kernel @k(%x: tensor<f32, 1>, %out: tensor<f32, 1>, %s: f32) {{
  %p = program_id 0 : i32
  %vx = partition_view %x [8] : view<f32, [8]>
  %vo = partition_view %out [8] : view<f32, [8]>
{body}
}}"
        );
        let func = tile_ir::text::parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        // Values are numbered in text order: `%p`, `%vx` and `%vo` are
        // `%0` to `%2`, then the body's results in turn.
        let numbers = tile_ir::ValueNames::new(&func);
        let written: Vec<&str> = body
            .lines()
            .filter_map(|line| line.trim().strip_prefix('%')?.split(' ').next())
            .collect();
        let mut out: Vec<String> = unobserved_nans(&func)
            .into_iter()
            .map(|id| {
                let number = numbers.name(func.op(id).results[0]);
                let n: usize = number[1..].parse().expect("a numbered value");
                written[n - 3].to_string()
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_chain_of_arithmetic_canonicalizes_only_where_it_is_stored() {
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %b = mul %a, %a : tile<8xf32>
  %c = sqrt %b : tile<8xf32>
  %d = add %c, %a : tile<8xf32>
  store %d, %vo[%p]";
        assert_eq!(unobserved(body), ["b", "c"]);
    }

    #[test]
    fn passing_ops_observe_when_their_result_is_observed() {
        // `%m`'s select is summed and the sum divided: all unobserved.
        // `%n`'s select is stored: `%n` keeps its canonicalization.
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %t = cmp lt %a, %a : tile<8xbool>
  %m = sub %a, %a : tile<8xf32>
  %z = full 0.0 : tile<8xf32>
  %sm = select %t, %m, %z : tile<8xf32>
  %r = reduce sum %sm axis 0 : f32
  %q = div %r, %s : f32
  %bq = broadcast %q to [8] : tile<8xf32>
  %n = mul %a, %bq : tile<8xf32>
  %sn = select %t, %n, %a : tile<8xf32>
  store %sn, %vo[%p]";
        assert_eq!(unobserved(body), ["bq", "m", "q", "r", "sm"]);
    }

    #[test]
    fn a_cast_to_the_same_dtype_passes_its_operand_on() {
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %b = mul %a, %a : tile<8xf32>
  %c = cast %b to f32 : tile<8xf32>
  %d = cast %b to f64 : tile<8xf64>
  %e = cast %d to f32 : tile<8xf32>
  store %c, %vo[%p]
  store %e, %vo[%p]";
        assert_eq!(unobserved(body), ["d"]);
    }
}
