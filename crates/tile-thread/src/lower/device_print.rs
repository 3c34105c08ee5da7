//! `print`: a record per element, appended by the thread that owns it.
//!
//! The tile operands are brought to the layout of the first; for each
//! register `v`:
//!
//! ```text
//! print id owner_v, linear_v [a_v, …]     (scalars: the same register in every v)
//! ```
//!
//! A print of scalars only is one record per block, by thread 0.

use super::{LowerError, Lowered, Lowerer};
use crate::program::ThreadOpKind;
use tile_ir::{CmpPred, DType, OpId};

impl Lowerer<'_> {
    /// Lowers `print id` (op `op`).
    pub(super) fn print(&mut self, op: OpId, id: u32) -> Result<(), LowerError> {
        let func = self.func;
        let operands = &func.op(op).operands;
        let mut lowered = Vec::with_capacity(operands.len());
        for &v in operands {
            lowered.push((v, self.get(op, v)?));
        }
        let layout = lowered.iter().find_map(|(_, l)| match l {
            Lowered::Tile { layout, .. } => Some(layout.clone()),
            _ => None,
        });
        let kind = ThreadOpKind::Print { id };
        let Some(layout) = layout else {
            let tid = self.thread_id();
            let zero = self.i32c(0);
            let first = self.emit(ThreadOpKind::Cmp(CmpPred::Eq), vec![tid, zero], DType::Bool);
            let mut regs = vec![first, zero];
            for &(v, _) in &lowered {
                regs.push(self.scalar(op, v)?);
            }
            self.emit_op(kind, regs, &[]);
            return Ok(());
        };
        let mut columns = Vec::with_capacity(lowered.len());
        for (v, l) in lowered {
            columns.push(match l {
                Lowered::Tile { layout: from, regs } => {
                    if from.shape != layout.shape {
                        return Err(self.invalid(op, "printed tiles of different shapes"));
                    }
                    self.convert(func.ty(v).dtype(), &from, &regs, &layout)
                }
                _ => vec![self.scalar(op, v)?; layout.registers()],
            });
        }
        let coords = self.coords(&layout);
        for r in 0..layout.registers() {
            let mut regs = vec![coords.owner[r], coords.linear[r]];
            regs.extend(columns.iter().map(|c| c[r]));
            self.emit_op(kind.clone(), regs, &[]);
        }
        Ok(())
    }
}
