//! Loads fused into the elementwise op that consumes them.
//!
//! A load copies its partition into the frame, and the elementwise op that
//! uses it reads the copy: for `x + y`, two copy loops (one input stream in
//! flight at a time) and then the add. Where nothing can tell the difference,
//! the load is instead **deferred**: its checks run where it stands, but its
//! elements are read from the tensor inside the consumer's loop, so every
//! fused input streams at once and no frame copy is made.
//!
//! A load is deferred when its tile has exactly one use, that use is an
//! elementwise op later in the same region, and no op between them may write
//! memory (a store, a layout-view store, or a `for`/`if` whose regions could
//! hold one): the elements read later are then the ones the load would have
//! copied. A masked load whose partition turns out to be partial at run time
//! is copied into the frame after all (padding and all), by the consumer,
//! which then runs its ordinary loop (`elementwise.rs`).

use std::collections::{HashMap, HashSet};
use tile_ir::{Function, OpId, OpKind, Region, Value};

/// The loads of `func` to defer into their consumers.
pub(super) fn deferred_loads(func: &Function) -> HashSet<OpId> {
    let uses = use_counts(func);
    let mut deferred = HashSet::new();
    defer_in(func, &func.body, &uses, &mut deferred);
    deferred
}

/// How many times each value is an operand, anywhere in `func`.
fn use_counts(func: &Function) -> HashMap<Value, usize> {
    let mut uses = HashMap::new();
    func.walk(&mut |id| {
        for &v in &func.op(id).operands {
            *uses.entry(v).or_insert(0) += 1;
        }
    });
    uses
}

/// Adds the deferrable loads of `region` and of the regions nested in it.
fn defer_in(
    func: &Function,
    region: &Region,
    uses: &HashMap<Value, usize>,
    deferred: &mut HashSet<OpId>,
) {
    for (at, &id) in region.ops.iter().enumerate() {
        let op = func.op(id);
        for nested in &op.regions {
            defer_in(func, nested, uses, deferred);
        }
        if !matches!(op.kind, OpKind::Load | OpKind::LoadMasked { .. }) {
            continue;
        }
        let [tile] = op.results.as_slice() else {
            continue;
        };
        if uses.get(tile) != Some(&1) {
            continue;
        }
        for &later in &region.ops[at + 1..] {
            let next = func.op(later);
            if next.operands.contains(tile) {
                if is_elementwise(&next.kind) {
                    deferred.insert(id);
                }
                break;
            }
            if next.kind.writes_memory() || !next.regions.is_empty() {
                break;
            }
        }
    }
}

/// Whether `kind` is an elementwise op with operands (the ops
/// `Lowering::elementwise` computes element by element).
fn is_elementwise(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Fma
            | OpKind::Cast { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::deferred_loads;
    use tile_ir::{Function, OpKind, ValueDef};

    /// The tensors (parameter names) read by the deferred loads of the kernel
    /// whose body (after the views `%vx`, `%vy` and `%vo` of `x`, `y` and
    /// `out`, all `[8]`, and `%p`, the program id) is `body`, sorted.
    fn deferred(body: &str) -> Vec<String> {
        let text = format!(
            "kernel @k(%x: tensor<f32, 1>, %y: tensor<f32, 1>, %out: tensor<f32, 1>, %n: i32) {{
  %p = program_id 0 : i32
  %vx = partition_view %x [8] : view<f32, [8]>
  %vy = partition_view %y [8] : view<f32, [8]>
  %vo = partition_view %out [8] : view<f32, [8]>
{body}
}}"
        );
        let func: Function =
            tile_ir::text::parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut out: Vec<String> = deferred_loads(&func)
            .into_iter()
            .map(|id| {
                let op = func.op(id);
                assert!(matches!(op.kind, OpKind::Load | OpKind::LoadMasked { .. }));
                let view = func.defining_op(op.operands[0]).expect("a view op");
                match func.values[func.op(view).operands[0]].def {
                    ValueDef::Param(index) => func.params[index].name.clone(),
                    _ => panic!("a view of a non-parameter"),
                }
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn both_inputs_of_an_add_are_deferred() {
        let body = "  %a = load_masked %vx[%p] pad(zero) : tile<8xf32>
  %b = load %vy[%p] : tile<8xf32>
  %s = add %a, %b : tile<8xf32>
  store_masked %s, %vo[%p]";
        assert_eq!(deferred(body), ["x", "y"]);
    }

    #[test]
    fn a_tile_used_twice_is_copied() {
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %s = mul %a, %a : tile<8xf32>
  store %s, %vo[%p]";
        assert!(deferred(body).is_empty());
    }

    #[test]
    fn a_store_between_load_and_use_keeps_the_copy() {
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %b = load %vy[%p] : tile<8xf32>
  store %b, %vx[%p]
  %s = add %a, %b : tile<8xf32>
  store %s, %vo[%p]";
        assert!(deferred(body).is_empty());
    }

    #[test]
    fn a_loop_between_load_and_use_keeps_the_copy() {
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %c0 = constant 0 : i32
  %c1 = constant 1 : i32
  for %i = %c0 to %n step %c1 {
    %z = full 0.0 : tile<8xf32>
    store %z, %vy[%i]
    yield
  }
  %b = full 1.0 : tile<8xf32>
  %s = add %a, %b : tile<8xf32>
  store %s, %vo[%p]";
        assert!(deferred(body).is_empty());
    }

    #[test]
    fn only_elementwise_consumers_fuse() {
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %r = reshape %a to [2, 4] : tile<2x4xf32>
  %f = reshape %r to [8] : tile<8xf32>
  store %f, %vo[%p]";
        assert!(deferred(body).is_empty());
    }

    #[test]
    fn loads_inside_a_loop_body_fuse_there() {
        let body = "  %c0 = constant 0 : i32
  %c1 = constant 1 : i32
  for %i = %c0 to %n step %c1 {
    %a = load_masked %vx[%i] pad(zero) : tile<8xf32>
    %e = exp %a : tile<8xf32>
    store_masked %e, %vo[%i]
    yield
  }";
        assert_eq!(deferred(body), ["x"]);
    }
}
