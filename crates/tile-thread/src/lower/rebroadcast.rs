//! A broadcast wanted in another layout than its own is broadcast again.
//!
//! A tile broadcast from a smaller one (a `[BM, 1]` row index or row mask
//! against `[BM, BN]`, a query row against a block of keys) that an op
//! reads in a layout other than the one it was made in is not converted
//! as the whole tile (a `[64, 128]` index tile through 32 KiB of shared
//! memory), but broadcast again: its operand, a scalar or the smaller tile,
//! is brought to the layout that broadcasts to the wanted one register for
//! register (`DistLayout::fit`), a conversion of its elements only, and
//! its registers are the broadcast's; a `full` is its constant in any
//! layout. Attention over gathered keys and values reads the slots'
//! indices, the mask and the zeros in the keys' and in the values'
//! layouts: one conversion of 64 indices and one of 64 flags, where whole
//! `[64, 128]` tiles took 56 KiB of shared memory.

use super::shared::register_selection;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::Reg;
use std::collections::HashMap;
use tile_ir::{OpId, OpKind, Value};

impl Lowerer<'_> {
    /// The registers of the tile `v` (held in `from` as `regs`), read by
    /// op `id`, in layout `to` of the same shape: as held, renamed where
    /// every thread already holds its elements, broadcast again where `v`
    /// is a broadcast (see the module docs), else converted.
    pub(super) fn tile_in(
        &mut self,
        (id, v): (OpId, Value),
        (from, regs): (&DistLayout, &[Reg]),
        to: &DistLayout,
    ) -> Result<Vec<Reg>, LowerError> {
        if from == to {
            return Ok(regs.to_vec());
        }
        let threads = self.program.block_threads();
        if let Some(selected) = register_selection(from, to, threads, |c| c.to_vec()) {
            return Ok(selected.into_iter().map(|u| regs[u]).collect());
        }
        if let Some(broadcast) = self.broadcast_again(id, v, to)? {
            return Ok(broadcast);
        }
        Ok(self.convert(self.func.ty(v).dtype(), from, regs, to))
    }

    /// `v` made again in `to`: a `full`'s constant in every register, or a
    /// broadcast or an expansion from its operand (a scalar, or a tile
    /// whose layout `to` fits).
    fn broadcast_again(
        &mut self,
        id: OpId,
        v: Value,
        to: &DistLayout,
    ) -> Result<Option<Vec<Reg>>, LowerError> {
        let func = self.func;
        let Some(def) = func.defining_op(v) else {
            return Ok(None);
        };
        let op = func.op(def);
        if let OpKind::Full { value, .. } = &op.kind {
            let r = self.constant(*value);
            return Ok(Some(vec![r; to.registers()]));
        }
        let (OpKind::Broadcast { .. } | OpKind::Expand { .. }, Some(&source)) =
            (&op.kind, op.operands.first())
        else {
            return Ok(None);
        };
        let (layout, regs) = match self.get(id, source)? {
            Lowered::Scalar(r) => return Ok(Some(vec![r; to.registers()])),
            Lowered::Tile { layout, regs } => (layout, regs),
            _ => return Ok(None),
        };
        let Some(fitted) = to.fit(&layout.shape).filter(|f| f.broadcasts_to(to)) else {
            return Ok(None);
        };
        let threads = self.program.block_threads() as usize;
        let converted = self.convert(func.ty(source).dtype(), &layout, &regs, &fitted);
        Ok(Some(
            first_copies(&fitted, threads)
                .into_iter()
                .map(|u| converted[u])
                .collect(),
        ))
    }
}

/// For each register of `layout`, the first register that holds the same
/// element in every one of the block's `threads` threads: the copies a
/// thread holds, read once (each register of a conversion is a load of its
/// own, and LLVM need not see that two loads' swizzled addresses agree).
pub(super) fn first_copies(layout: &DistLayout, threads: usize) -> Vec<usize> {
    let mut first: HashMap<Vec<(Vec<usize>, bool)>, usize> = HashMap::new();
    (0..layout.registers())
        .map(|v| {
            let held: Vec<(Vec<usize>, bool)> = (0..threads)
                .map(|t| {
                    let (c, live, _) = layout.coordinate(t, v);
                    (c, live)
                })
                .collect();
            *first.entry(held).or_insert(v)
        })
        .collect()
}
