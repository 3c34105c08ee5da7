//! Which tiles are lazy: computed inside the loop of the op that consumes
//! them (`lazy.rs`) instead of stored in the frame.
//!
//! Every op on tiles is a loop over the elements; a chain of them (a load,
//! a broadcast, a subtraction, a select, ...) is as many passes over the
//! frame, each storing a tile the next one reads once. A tile is instead
//! **lazy** when it is made by `full`, `iota`, an elementwise op, a
//! `broadcast`/`expand` or a load, has exactly one use, and that use is an
//! elementwise op or a `broadcast`/`expand` later in the same region (not a
//! broadcast of an elementwise op's tile, which would compute each element
//! once per repetition): the
//! first consumer that is not lazy itself (the chain's *root*) computes the
//! whole chain in one loop. A load's checks still run where it stands, but
//! its elements are read in the root's loop, so no op between the two may
//! write memory (a store, a layout-view store, or a `for`/`if` whose regions
//! could hold one): the elements read later are then the ones the load
//! would have copied. For `x + y` both inputs stream at once, with no copy.
//! A reduction that folds in 8 × 8 register blocks (`reduce.rs`) also takes
//! an elementwise op's tile lazily: layernorm's squares are computed in the
//! fold that sums them, one row vector at a time.

use super::reduce;
use std::collections::{HashMap, HashSet};
use tile_ir::{Function, OpId, OpKind, Region, Type, Value};

/// The ops of `func` whose tiles are lazy.
pub(super) fn lazy_ops(func: &Function) -> HashSet<OpId> {
    let uses = use_counts(func);
    let mut lazy = HashSet::new();
    lazy_in(func, &func.body, &uses, &mut lazy);
    lazy
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

/// Adds the lazy ops of `region` and of the regions nested in it.
fn lazy_in(
    func: &Function,
    region: &Region,
    uses: &HashMap<Value, usize>,
    lazy: &mut HashSet<OpId>,
) {
    // The position in `region` of the only user of each candidate's tile.
    let mut user_at: HashMap<usize, usize> = HashMap::new();
    for (at, &id) in region.ops.iter().enumerate() {
        let op = func.op(id);
        for nested in &op.regions {
            lazy_in(func, nested, uses, lazy);
        }
        let [tile] = op.results.as_slice() else {
            continue;
        };
        if !makes_lazily(&op.kind)
            || !matches!(func.ty(*tile), Type::Tile(_))
            || uses.get(tile) != Some(&1)
        {
            continue;
        }
        let user = region.ops[at + 1..]
            .iter()
            .position(|&u| func.op(u).operands.contains(tile));
        if let Some(offset) = user {
            let consumer_id = region.ops[at + 1 + offset];
            let consumer = &func.op(consumer_id).kind;
            let folded = computes(&op.kind) && reduce::folds_in_row_blocks(func, consumer_id);
            if folded || consumes_lazily(consumer) && !(repeats(consumer) && computes(&op.kind)) {
                lazy.insert(id);
                user_at.insert(at, at + 1 + offset);
            }
        }
    }
    // A load is read at its chain's root: nothing between may write.
    for (at, &id) in region.ops.iter().enumerate() {
        if !matches!(func.op(id).kind, OpKind::Load | OpKind::LoadMasked { .. })
            || !lazy.contains(&id)
        {
            continue;
        }
        let mut root = at;
        while let Some(&next) = user_at.get(&root) {
            root = next;
            if !lazy.contains(&region.ops[root]) {
                break;
            }
        }
        let writes = region.ops[at + 1..root].iter().any(|&between| {
            let op = func.op(between);
            op.kind.writes_memory() || op.kind.orders_memory() || !op.regions.is_empty()
        });
        if writes {
            lazy.remove(&id);
        }
    }
}

/// Whether an op of `kind` can make a lazy tile.
fn makes_lazily(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Load
            | OpKind::LoadMasked { .. }
            | OpKind::Full { .. }
            | OpKind::Iota { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Expand { .. }
    ) || consumes_lazily(kind)
}

/// Whether an op of `kind` may read an operand element many times (a
/// broadcast repeats its extent-1 axes).
fn repeats(kind: &OpKind) -> bool {
    matches!(kind, OpKind::Broadcast { .. } | OpKind::Expand { .. })
}

/// Whether an op of `kind` computes (an elementwise op) rather than moves
/// or makes elements: lazy under a broadcast, it would be computed again
/// for every repetition (a row's `rsqrt` once per element of the row).
fn computes(kind: &OpKind) -> bool {
    !matches!(
        kind,
        OpKind::Load
            | OpKind::LoadMasked { .. }
            | OpKind::Full { .. }
            | OpKind::Iota { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Expand { .. }
    )
}

/// Whether an op of `kind` computes its result element by element from its
/// operands' elements, so it can read lazy tiles.
fn consumes_lazily(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Fma
            | OpKind::Cast { .. }
            | OpKind::Bitcast { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Expand { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::lazy_ops;
    use tile_ir::{Function, OpKind, ValueDef};

    /// The kernel whose body (after the views `%vx`, `%vy` and `%vo` of `x`,
    /// `y` and `out`, all `[8]`, and `%p`, the program id) is `body`.
    fn kernel(body: &str) -> Function {
        let text = format!(
            "kernel @k(%x: tensor<f32, 1>, %y: tensor<f32, 1>, %out: tensor<f32, 1>, %n: i32) {{
  %p = program_id 0 : i32
  %vx = partition_view %x [8] : view<f32, [8]>
  %vy = partition_view %y [8] : view<f32, [8]>
  %vo = partition_view %out [8] : view<f32, [8]>
{body}
}}"
        );
        tile_ir::text::parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// The tensors (parameter names) read by the lazy loads of the kernel
    /// of `body`, sorted.
    fn deferred(body: &str) -> Vec<String> {
        let func = kernel(body);
        let mut out: Vec<String> = lazy_ops(&func)
            .into_iter()
            .filter(|&id| matches!(func.op(id).kind, OpKind::Load | OpKind::LoadMasked { .. }))
            .map(|id| {
                let view = func
                    .defining_op(func.op(id).operands[0])
                    .expect("a view op");
                match func.values[func.op(view).operands[0]].def {
                    ValueDef::Param(index) => func.params[index].name.clone(),
                    _ => panic!("a view of a non-parameter"),
                }
            })
            .collect();
        out.sort();
        out
    }

    /// The names of the ops with lazy tiles in the kernel of `body`, in
    /// program order.
    fn lazy_kinds(body: &str) -> Vec<&'static str> {
        let func = kernel(body);
        let lazy = lazy_ops(&func);
        func.body
            .ops
            .iter()
            .filter(|id| lazy.contains(id))
            .map(|&id| func.op(id).kind.name())
            .collect()
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

    #[test]
    fn chains_are_lazy_up_to_their_root() {
        // `%e` has two uses: it is the root of `%a`, `%b` and `%d`; `%f`
        // consumes it and is stored (the root of nothing lazy but `%g`).
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %c = constant 2.0 : f32
  %b = broadcast %c to [8] : tile<8xf32>
  %d = mul %a, %b : tile<8xf32>
  %e = exp %d : tile<8xf32>
  %g = full 1.0 : tile<8xf32>
  %f = fma %e, %e, %g : tile<8xf32>
  store %f, %vo[%p]";
        assert_eq!(lazy_kinds(body), ["load", "broadcast", "mul", "full"]);
    }

    #[test]
    fn a_store_before_the_root_keeps_the_load() {
        // `%a`'s only user `%d` is lazy; its root `%s` comes after a store.
        let body = "  %a = load %vx[%p] : tile<8xf32>
  %d = neg %a : tile<8xf32>
  %z = full 0.0 : tile<8xf32>
  store %z, %vx[%p]
  %s = abs %d : tile<8xf32>
  store %s, %vo[%p]";
        assert_eq!(lazy_kinds(body), ["neg"]);
    }

    #[test]
    fn computed_tiles_under_a_broadcast_are_stored() {
        // `%r` would be computed once per repetition: it is stored; the
        // loaded row `%w` is read again instead.
        let body = "  %w = load %vx[%p] : tile<8xf32>
  %r = rsqrt %w : tile<8xf32>
  %rb = broadcast %r to [2, 8] : tile<2x8xf32>
  %wb = broadcast %w2 to [2, 8] : tile<2x8xf32>
  %s = add %rb, %wb : tile<2x8xf32>
  %f = reshape %s to [16] : tile<16xf32>
  %v2 = partition_view %out [16] : view<f32, [16]>
  store %f, %v2[%p]";
        let body = body.replace("  %wb", "  %w2 = load %vy[%p] : tile<8xf32>\n  %wb");
        assert_eq!(
            lazy_kinds(&body),
            ["load", "broadcast", "load", "broadcast"]
        );
    }
}
