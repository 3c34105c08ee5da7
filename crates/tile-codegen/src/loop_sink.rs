//! Pure computations moved back into the loop over tiles that uses them,
//! past the inner loop they would otherwise be live across.
//!
//! A persistent kernel loops over output tiles with a K loop inside; its
//! epilogue's shared and global addresses depend on the thread's index
//! alone, so LLVM's loop-invariant code motion computes them once before
//! the outer loop, and each stays live through every iteration of the K
//! loop, where the accumulators and the pipeline already need the most
//! registers (40 shared addresses of a 128×128 epilogue, 80 registers on
//! NVPTX). NVPTX has no rematerialization before ptxas, and ptxas does
//! little. This pass moves each such instruction (integer and address
//! arithmetic, comparisons, casts) into the one block that uses it when
//! that block lies in an outer loop the instruction's block is not in, and
//! every such loop is a thread-level loop around another (the emitter marks
//! its latch, [`OUTER_LOOP`]; an element-by-element fallback inside a K
//! loop is a loop too, but the K loop is no loop over tiles) and holds an
//! inner loop the use block is outside: it is
//! then computed once per tile, after the K loop, at the cost of a few
//! integer instructions per tile. Operands follow their users (the
//! instructions are visited last to first), and values a phi reads stay.

use crate::sink::{move_before, users_of};
use crate::unroll::OUTER_LOOP;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::module::Module;
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, InstructionOpcode, InstructionValue};
use std::collections::HashMap;

/// Moves, in every function of `module`, the cheap pure instructions
/// computed before an outer loop and used only after its inner loop into
/// the block that uses them (see the module doc).
pub(crate) fn sink_past_inner_loops(module: &Module<'_>) {
    each_branching_function(module, sink_function);
}

/// Runs `pass` on every function of `module` with more than two blocks,
/// with a builder and the metadata kind of `llvm.loop`.
pub(crate) fn each_branching_function<'ctx>(
    module: &Module<'ctx>,
    pass: fn(&Builder<'ctx>, FunctionValue<'ctx>, u32),
) {
    let context = module.get_context();
    let (builder, loop_kind) = (context.create_builder(), context.get_kind_id("llvm.loop"));
    for function in module.get_functions() {
        if function.count_basic_blocks() > 2 {
            pass(&builder, function, loop_kind);
        }
    }
}

/// [`sink_past_inner_loops`] for one function; `loop_kind` is the
/// metadata kind of `llvm.loop`.
fn sink_function<'ctx>(builder: &Builder<'ctx>, function: FunctionValue<'ctx>, loop_kind: u32) {
    let cfg = Cfg::new(function, loop_kind);
    if cfg.loops.len() < 2 {
        return;
    }
    for (from, block) in cfg.blocks.iter().enumerate() {
        let instructions: Vec<InstructionValue<'ctx>> = block.get_instructions().collect();
        for &instruction in instructions.iter().rev() {
            if !is_cheap(instruction.get_opcode()) {
                continue;
            }
            let Some((to, first)) = cfg.single_use_block(instruction) else {
                continue;
            };
            if to == from || !cfg.dominates(from, to) || !cfg.worth_moving(from, to) {
                continue;
            }
            move_before(builder, instruction, first);
        }
    }
}

/// A function's control-flow graph: blocks, dominators and natural loops.
pub(crate) struct Cfg<'ctx> {
    /// The blocks, entry first.
    pub(crate) blocks: Vec<BasicBlock<'ctx>>,
    /// Each block's position in `blocks`.
    pub(crate) index: HashMap<BasicBlock<'ctx>, usize>,
    /// `dom[b][a]`: block `a` dominates block `b`.
    dom: Vec<Vec<bool>>,
    /// Each natural loop's blocks, as membership flags, and whether it is
    /// a thread-level loop around another ([`OUTER_LOOP`]).
    pub(crate) loops: Vec<(Vec<bool>, bool)>,
    /// Each block's successors.
    successors: Vec<Vec<usize>>,
}

impl<'ctx> Cfg<'ctx> {
    /// The graph of `function`, whose loops' properties are metadata of
    /// kind `loop_kind` (`llvm.loop`).
    pub(crate) fn new(function: FunctionValue<'ctx>, loop_kind: u32) -> Cfg<'ctx> {
        let blocks = function.get_basic_blocks();
        let index: HashMap<_, _> = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let successors: Vec<Vec<usize>> = blocks
            .iter()
            .map(|b| {
                let Some(terminator) = b.get_terminator() else {
                    return Vec::new();
                };
                (0..terminator.get_num_operands())
                    .filter_map(|i| terminator.get_operand(i)?.block())
                    .filter_map(|s| index.get(&s).copied())
                    .collect()
            })
            .collect();
        let mut predecessors = vec![Vec::new(); blocks.len()];
        for (b, next) in successors.iter().enumerate() {
            for &s in next {
                predecessors[s].push(b);
            }
        }
        let dom = dominators(&predecessors);
        let mut loops = Vec::new();
        for (tail, next) in successors.iter().enumerate() {
            for &head in next {
                if dom[tail][head] {
                    let outer = blocks[tail]
                        .get_terminator()
                        .is_some_and(|latch| is_outer_latch(latch, loop_kind));
                    loops.push((natural_loop(&predecessors, head, tail), outer));
                }
            }
        }
        Cfg {
            blocks,
            index,
            dom,
            loops,
            successors,
        }
    }

    /// Which blocks the entry reaches.
    pub(crate) fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; self.blocks.len()];
        let mut work = vec![0];
        while let Some(b) = work.pop() {
            if b < seen.len() && !seen[b] {
                seen[b] = true;
                work.extend(&self.successors[b]);
            }
        }
        seen
    }

    /// Whether block `a` dominates block `b`.
    pub(crate) fn dominates(&self, a: usize, b: usize) -> bool {
        self.dom[b][a]
    }

    /// The one block all of `instruction`'s users are in, and its first
    /// user there, if none is a phi.
    fn single_use_block(
        &self,
        instruction: InstructionValue<'ctx>,
    ) -> Option<(usize, InstructionValue<'ctx>)> {
        let users = users_of(instruction)?;
        let block = users.first()?.get_parent()?;
        if users.iter().any(|u| u.get_parent() != Some(block)) {
            return None;
        }
        let first = block.get_instructions().find(|i| users.contains(i))?;
        Some((*self.index.get(&block)?, first))
    }

    /// Whether an instruction of block `from` is better computed in block
    /// `to`: `to` lies in some loop `from` is not in, each such loop is
    /// marked [`OUTER_LOOP`] and holds an inner loop `to` is outside.
    fn worth_moving(&self, from: usize, to: usize) -> bool {
        let entered: Vec<&(Vec<bool>, bool)> = self
            .loops
            .iter()
            .filter(|(l, _)| l[to] && !l[from])
            .collect();
        !entered.is_empty()
            && entered.iter().all(|(outer, marked)| {
                *marked
                    && self
                        .loops
                        .iter()
                        .any(|(inner, _)| !inner[to] && is_inside(inner, outer) && inner != outer)
            })
    }
}

/// `dom[b][a]`: whether block `a` dominates block `b` (block 0 the entry),
/// by the iterative data-flow solution; unreachable blocks are dominated
/// by every block.
fn dominators(predecessors: &[Vec<usize>]) -> Vec<Vec<bool>> {
    let n = predecessors.len();
    let mut dom = vec![vec![true; n]; n];
    dom[0] = (0..n).map(|a| a == 0).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..n {
            let mut meet = vec![true; n];
            for &p in &predecessors[b] {
                for (m, &d) in meet.iter_mut().zip(&dom[p]) {
                    *m &= d;
                }
            }
            meet[b] = true;
            if meet != dom[b] {
                dom[b] = meet;
                changed = true;
            }
        }
    }
    dom
}

/// The blocks of the natural loop of the back edge `tail → head`: `head`
/// and every block that reaches `tail` without passing `head`.
fn natural_loop(predecessors: &[Vec<usize>], head: usize, tail: usize) -> Vec<bool> {
    let mut inside = vec![false; predecessors.len()];
    inside[head] = true;
    let mut work = vec![tail];
    while let Some(b) = work.pop() {
        if !inside[b] {
            inside[b] = true;
            work.extend(&predecessors[b]);
        }
    }
    inside
}

/// Whether `latch` closes a loop whose `llvm.loop` properties (metadata
/// kind `loop_kind`) include [`OUTER_LOOP`].
fn is_outer_latch(latch: InstructionValue<'_>, loop_kind: u32) -> bool {
    let Some(properties) = latch
        .get_metadata(loop_kind)
        .and_then(|id| id.get_node_values())
    else {
        return false;
    };
    properties.into_iter().any(|p| {
        let BasicMetadataValueEnum::MetadataValue(node) = p else {
            return false;
        };
        let names = node.get_node_values().unwrap_or_default();
        names.into_iter().any(|n| {
            matches!(n, BasicMetadataValueEnum::MetadataValue(s)
                if s.get_string_value() == Some(OUTER_LOOP.as_bytes()))
        })
    })
}

/// Whether every block of `inner` is in `outer`.
fn is_inside(inner: &[bool], outer: &[bool]) -> bool {
    inner.iter().zip(outer).all(|(&i, &o)| !i || o)
}

/// Whether an instruction of `opcode` is integer or address arithmetic, a
/// comparison or a cast: pure, and cheaper to recompute once per tile than
/// to keep in a register across a K loop.
fn is_cheap(opcode: InstructionOpcode) -> bool {
    use InstructionOpcode as O;
    matches!(
        opcode,
        O::Add
            | O::Sub
            | O::Mul
            | O::And
            | O::Or
            | O::Xor
            | O::Shl
            | O::LShr
            | O::AShr
            | O::ICmp
            | O::GetElementPtr
            | O::Trunc
            | O::ZExt
            | O::SExt
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each block of `@f` after the pass, as its name and its named
    /// instructions.
    fn moved(ir: &str) -> Vec<(String, Vec<String>)> {
        crate::sink::named_blocks_after(ir, sink_past_inner_loops)
    }

    /// A loop over tiles (`tiles`, its latch marked [`OUTER_LOOP`]) around a
    /// K loop (`k`): `%epilogue`
    /// (and `%row`, which only it reads) is used only after the K loop and
    /// moves there; `%in_k` is used inside the K loop, `%both` in two blocks
    /// and `%carried` by a phi: they stay.
    const NEST: &str = "define void @f(i32 %tid, i32 %n, ptr %p) {
entry:
  %row = shl i32 %tid, 3
  %epilogue = add i32 %row, 7
  %in_k = mul i32 %tid, 5
  %both = xor i32 %tid, 9
  %carried = or i32 %tid, 1
  br label %tiles
tiles:
  %t = phi i32 [ 0, %entry ], [ %t.next, %after ]
  store i32 %both, ptr %p
  br label %k
k:
  %i = phi i32 [ 0, %tiles ], [ %i.next, %k ]
  store i32 %in_k, ptr %p
  %i.next = add i32 %i, 1
  %k.done = icmp eq i32 %i.next, %n
  br i1 %k.done, label %after, label %k
after:
  %c = phi i32 [ %carried, %k ]
  store i32 %epilogue, ptr %p
  store i32 %both, ptr %p
  store i32 %c, ptr %p
  %t.next = add i32 %t, 1
  %t.done = icmp eq i32 %t.next, %n
  br i1 %t.done, label %exit, label %tiles, !llvm.loop !0
exit:
  ret void
}
!0 = distinct !{!0, !1, !2}
!1 = !{!\"llvm.loop.unroll.disable\"}
!2 = !{!\"tile.loop.outer\"}
";

    #[test]
    fn what_only_the_epilogue_reads_moves_after_the_inner_loop() {
        let blocks = moved(NEST);
        let names = |block: &str| crate::sink::block_named(&blocks, block);
        assert_eq!(names("entry"), ["in_k", "both", "carried"]);
        assert_eq!(names("after"), ["c", "row", "epilogue", "t.next", "t.done"]);
    }

    #[test]
    fn an_unmarked_loop_around_another_keeps_its_invariants_before_it() {
        // A K loop around an element-by-element fallback copy, say.
        let unmarked = NEST.replace(", !llvm.loop !0", "");
        let blocks = moved(&unmarked);
        assert_eq!(blocks[0].1, ["row", "epilogue", "in_k", "both", "carried"]);
    }

    #[test]
    fn a_single_loop_keeps_its_invariants_before_it() {
        // Without the K loop, `after` is the tile loop's only block past
        // `tiles`: nothing is worth a recomputation per iteration.
        let flat = NEST
            .replace(
                "  br label %k\nk:\n  %i = phi i32 [ 0, %tiles ], [ %i.next, %k ]\n",
                "  br label %k\nk:\n  %i = phi i32 [ 0, %tiles ]\n",
            )
            .replace("br i1 %k.done, label %after, label %k", "br label %after");
        let blocks = moved(&flat);
        assert_eq!(blocks[0].1, ["row", "epilogue", "in_k", "both", "carried"]);
    }
}
