//! Pure instructions moved down the control flow, from their block to the
//! nearest block that dominates all their uses, outside any loop their
//! block is not in.
//!
//! A tile store whose rows may leave the tensor is a chain of conditional
//! stores (`if` the vector is inside, one store, else element by element),
//! each its own block. The thread-level program computes a tile op for
//! all of a thread's elements before the next op, so every value of the
//! tile is computed in the block before the first store and stays live
//! across the whole chain: a row kernel that stores two tiles of 128
//! values a thread (Liger's JSD: its loss, then its gradient) holds the
//! first tile's 128 and everything the second needs at once. The
//! block-local sink (`sink.rs`) moves nothing out of a block. Here each
//! value moves to the block that ends with the branch of the store that
//! reads it, so it is computed just before it is stored. Never into a
//! loop (it would run once per iteration), never past a phi that reads
//! it; operands follow their users (users are visited first).

use crate::loop_sink::{each_branching_function, Cfg};
use crate::sink::{move_before, moves_freely, users_of};
use inkwell::builder::Builder;
use inkwell::module::Module;
use inkwell::values::{FunctionValue, InstructionValue};

/// Moves, in every function of `module`, each pure instruction whose uses
/// lie in later blocks to the nearest block dominating them all (see the
/// module doc).
pub(crate) fn sink_to_dominating_block(module: &Module<'_>) {
    each_branching_function(module, sink_function);
}

/// [`sink_to_dominating_block`] for one function.
fn sink_function<'ctx>(builder: &Builder<'ctx>, function: FunctionValue<'ctx>, loop_kind: u32) {
    let cfg = Cfg::new(function, loop_kind);
    let tree = DominatorTree::new(&cfg);
    for from in (0..cfg.blocks.len()).rev() {
        // Code in a loop keeps its order: the loops are K loops whose
        // pipelines and products ptxas and LLVM's schedulers order best as
        // they come.
        if cfg.loops.iter().any(|(l, _)| l[from]) {
            continue;
        }
        let instructions: Vec<InstructionValue<'ctx>> =
            cfg.blocks[from].get_instructions().collect();
        for &instruction in instructions.iter().rev() {
            if !moves_freely(instruction) {
                continue;
            }
            let Some(users) = users_of(instruction).filter(|u| !u.is_empty()) else {
                continue;
            };
            let Some(blocks) = users
                .iter()
                .map(|u| u.get_parent().and_then(|b| cfg.index.get(&b).copied()))
                .collect::<Option<Vec<usize>>>()
            else {
                continue;
            };
            if blocks.iter().all(|&b| b == from) {
                continue;
            }
            // The deepest block dominating every use.
            let Some(to) = blocks
                .iter()
                .try_fold(None, |common, &b| match common {
                    None => tree.reachable(b).then_some(Some(b)),
                    Some(c) => tree.reachable(b).then(|| Some(tree.common(c, b))),
                })
                .flatten()
            else {
                continue;
            };
            let enters_loop = cfg.loops.iter().any(|(l, _)| l[to] && !l[from]);
            if to == from || enters_loop || !cfg.dominates(from, to) {
                continue;
            }
            let target = cfg.blocks[to];
            let Some(before) = target
                .get_instructions()
                .find(|i| users.contains(i))
                .or_else(|| target.get_terminator())
            else {
                continue;
            };
            move_before(builder, instruction, before);
        }
    }
}

/// A function's dominator tree: each reachable block's depth and
/// immediate dominator.
struct DominatorTree {
    /// Each block's dominators, itself included (0: unreachable).
    depth: Vec<usize>,
    /// Each block's immediate dominator (the entry's is itself).
    parent: Vec<usize>,
}

impl DominatorTree {
    fn new(cfg: &Cfg<'_>) -> DominatorTree {
        let n = cfg.blocks.len();
        let reachable = cfg.reachable();
        let depth: Vec<usize> = (0..n)
            .map(|b| match reachable[b] {
                true => (0..n).filter(|&a| cfg.dominates(a, b)).count(),
                false => 0,
            })
            .collect();
        let parent = (0..n)
            .map(|b| {
                (0..n)
                    .filter(|&a| a != b && reachable[b] && cfg.dominates(a, b))
                    .max_by_key(|&a| depth[a])
                    .unwrap_or(b)
            })
            .collect();
        DominatorTree { depth, parent }
    }

    /// Whether block `b` is reached from the entry.
    fn reachable(&self, b: usize) -> bool {
        self.depth[b] > 0
    }

    /// The deepest block dominating both reachable blocks `a` and `b`.
    fn common(&self, mut a: usize, mut b: usize) -> usize {
        while a != b {
            if self.depth[a] >= self.depth[b] {
                a = self.parent[a];
            } else {
                b = self.parent[b];
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each block of `@f` after the pass, as its name and its named
    /// instructions.
    fn moved(ir: &str) -> Vec<(String, Vec<String>)> {
        crate::sink::named_blocks_after(ir, sink_to_dominating_block)
    }

    /// Two conditional stores, each with a vector path and an element
    /// path: `%a`, read by both paths of the first, stays in the block that
    /// branches to them; `%b2` (the second's) and `%b` (which only `%b2`
    /// reads) move to the block after the first store; `%l`, a load, stays;
    /// `%in_loop`, used only in a loop, stays out of it; `%c`, read by a
    /// phi, stays.
    #[test]
    fn values_move_to_the_block_before_their_stores() {
        let ir = "define void @f(float %x, i1 %ok1, i1 %ok2, ptr %p, ptr %q, i32 %n) {
entry:
  %a = fmul float %x, 2.0
  %b = fadd float %x, 1.0
  %b2 = fmul float %b, %b
  %l = load float, ptr %q
  %in_loop = fadd float %x, 3.0
  %c = fsub float %x, 4.0
  br i1 %ok1, label %vec1, label %elem1
vec1:
  store float %a, ptr %p
  br label %next
elem1:
  store volatile float %a, ptr %p
  br label %next
next:
  br i1 %ok2, label %vec2, label %elem2
vec2:
  store float %b2, ptr %p
  br label %loop
elem2:
  store volatile float %b2, ptr %p
  store float %l, ptr %p
  br label %loop
loop:
  %i = phi i32 [ 0, %vec2 ], [ 0, %elem2 ], [ %i.next, %loop ]
  %cc = phi float [ %c, %vec2 ], [ %c, %elem2 ], [ %cc, %loop ]
  store float %in_loop, ptr %p
  %i.next = add i32 %i, 1
  %done = icmp eq i32 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
";
        let blocks = moved(ir);
        let names = |block: &str| crate::sink::block_named(&blocks, block);
        assert_eq!(names("entry"), ["a", "l", "in_loop", "c"]);
        assert_eq!(names("next"), ["b", "b2"]);
    }
}
