//! Broadcasts of loop-invariant tiles, converted once, before the loop.
//!
//! A `broadcast` in a `for` body of a tile made before the loop (a `[BM,
//! 1]` row index or row mask against the block of columns each iteration
//! reads, a query row against a block of keys) needs its operand in the
//! layout that broadcasts to the result's register for register
//! (`DistLayout::fit`). Where the operand is not already held so, the
//! conversion (through shared memory between barriers, or a read of the
//! loaded tile again) would run on every iteration; here it runs once, in
//! front of the loop, and the loop's broadcast takes its registers: the
//! operand's elements in the fitted layout, not the broadcast's many
//! copies of them, when a thread holds few of them ([`MAX_HELD`]). The
//! tile IR's `licm` pass moves the invariant arithmetic a broadcast reads
//! in front of the loop, so that its operand is made there.

use super::rebroadcast::first_copies;
use super::shared::broadcast_selection;
use super::{Lowered, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::Reg;
use std::rc::Rc;
use tile_ir::{OpKind, Region};

/// The most elements of a converted operand a thread holds across the
/// loop: a row index or a row mask takes one or two. A query row spread
/// over the columns of a block of keys takes a register per column a
/// thread holds (8 and more), which, held through the loop beside the
/// keys, values and running sums, cost more registers than the conversion
/// costs each iteration (measured on the corpus's decoding attention: 148
/// registers on sm_90a without holding it, 128 and a spill with).
const MAX_HELD: usize = 4;

/// How many distinct elements a thread holds in `layout` (thread 0's:
/// every thread holds as many).
fn held_elements(layout: &DistLayout) -> usize {
    let mut held = std::collections::HashSet::new();
    for v in 0..layout.registers() {
        let (c, live, _) = layout.coordinate(0, v);
        if live {
            held.insert(c);
        }
    }
    held.len()
}

impl<'a> Lowerer<'a> {
    /// Before the `for` whose body is `body`: for each `broadcast` or
    /// `expand` directly in it whose operand is a tile made before the
    /// loop and held in a layout that does not broadcast to the result's,
    /// the operand in the layout that does (see the module docs), kept
    /// for the broadcast's lowering.
    pub(super) fn preconvert_invariant_broadcasts(
        &mut self,
        body: &'a Region,
    ) -> Result<(), super::LowerError> {
        let func = self.func;
        for &id in &body.ops {
            let op = func.op(id);
            if !matches!(op.kind, OpKind::Broadcast { .. } | OpKind::Expand { .. }) {
                continue;
            }
            let (Some(&operand), Some(&result)) = (op.operands.first(), op.results.first()) else {
                continue;
            };
            let Some(Lowered::Tile { layout: from, regs }) = self.env.get(&operand).cloned() else {
                continue;
            };
            let Some(to) = self.plan.values.get(&result).cloned() else {
                continue;
            };
            let Some(fitted) = to.fit(&from.shape).filter(|f| f.broadcasts_to(&to)) else {
                continue;
            };
            if from.broadcasts_to(&to)
                || broadcast_selection(&from, &to, self.program.block_threads()).is_some()
            {
                // The loop's broadcast keeps or picks registers it holds.
                continue;
            }
            if held_elements(&fitted) > MAX_HELD {
                // Held across the loop, they would take more registers
                // than the conversion costs an iteration.
                continue;
            }
            let dtype = func.ty(operand).dtype();
            let converted = match self.reload_broadcast(operand, &to)? {
                Some(regs) => regs,
                None => self.convert(dtype, &from, &regs, &fitted),
            };
            let threads = self.program.block_threads() as usize;
            let held = first_copies(&fitted, threads)
                .into_iter()
                .map(|u| converted[u])
                .collect();
            self.preconverted.insert(id, (Rc::new(to), held));
        }
        Ok(())
    }

    /// The broadcast `id`'s registers converted before its loop, if they
    /// were: its result's layout and registers.
    pub(super) fn preconverted_broadcast(&self, id: tile_ir::OpId) -> Option<Lowered> {
        let (layout, regs): &(Rc<DistLayout>, Vec<Reg>) = self.preconverted.get(&id)?;
        Some(Lowered::Tile {
            layout: layout.clone(),
            regs: regs.clone(),
        })
    }
}
