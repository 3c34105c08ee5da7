//! The tensor-memory ops of a program (`tmem.*`, `tcgen05.*`), each handed
//! to its model in `tcgen05.rs`.

use super::tcgen05::SourceA;
use super::{Emulator, LockstepError, LockstepFault, Operands};
use crate::program::{OpId, ThreadOpKind};
use tile_ir::Scalar;

impl Emulator<'_> {
    /// The tensor-memory op `kind` on its operands `x`: its results (a
    /// load's values; none for the others).
    pub(super) fn tensor_memory_op(
        &mut self,
        id: OpId,
        kind: &ThreadOpKind,
        x: &Operands<'_>,
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        // A store's values fill whole columns: one, two 16-bit or four
        // 8-bit ones a column.
        let stored = |per: usize| x.list("values").len() / per;
        match kind {
            ThreadOpKind::TmemAlloc { columns, slot } => {
                self.tmem_alloc(id, (*columns, *slot), x)?
            }
            ThreadOpKind::TmemDealloc { columns } => self.tmem_dealloc(id, *columns, x)?,
            ThreadOpKind::Tcgen05Mma {
                kind,
                a,
                a_swizzle,
                b,
            } => {
                self.tcgen05_products(id, (*kind, SourceA::Shared(*a, *a_swizzle), *b), None, x)?
            }
            ThreadOpKind::Tcgen05MmaScaled {
                kind,
                a,
                a_swizzle,
                b,
                byte,
            } => {
                let source = SourceA::Shared(*a, *a_swizzle);
                self.tcgen05_products(id, (*kind, source, *b), Some(*byte), x)?
            }
            ThreadOpKind::Tcgen05MmaTensorA { kind, b } => {
                self.tcgen05_products(id, (*kind, SourceA::Tensor, *b), None, x)?
            }
            ThreadOpKind::Tcgen05CommitWait { bar } => self.tcgen05_commit_wait(id, *bar, x)?,
            ThreadOpKind::TmemLoad { columns } => {
                return self.tmem_access(id, usize::from(*columns), x, false)
            }
            ThreadOpKind::TmemStore => return self.tmem_access(id, stored(1), x, true),
            ThreadOpKind::TmemStoreHalves => return self.tmem_access(id, stored(2), x, true),
            ThreadOpKind::TmemStoreBytes => return self.tmem_access(id, stored(4), x, true),
            _ => {
                let what = "not a tensor-memory op".to_string();
                return Err(self.error(Some(id), None, LockstepFault::Malformed(what)));
            }
        }
        Ok(Vec::new())
    }
}
