//! `gather`: each element read by every thread that holds it.
//!
//! The index tiles, the mask and the other values are brought to the
//! result's layout. For each register `v` (replicas read too: reads do not
//! race):
//!
//! ```text
//! on    = live_v ∧ mask_v
//! check.index (¬on ∨ inside) [i_0, …]            (`indexed_element`)
//! r_v   = ld.global.v1 [Σ_d i_d · stride[d]] mask(on ∧ inside) other(other_v)
//! ```
//!
//! A gather of scalars is the same single read in every thread: a uniform
//! register, with no exchange between threads.

use super::{LowerError, Lowered, Lowerer};
use crate::program::ThreadOpKind;
use tile_ir::{OpId, Type};

impl Lowerer<'_> {
    /// Lowers `gather` (op `id`).
    pub(super) fn gather_elements(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let ir = func.op(id);
        let result = *ir
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
        let dtype = func.ty(result).dtype();
        let (param, rank, rest) = self.indexed_tensor(id)?;
        if !matches!(func.ty(result), Type::Tile(_)) {
            let mut scalars = Vec::with_capacity(rest.len());
            for &v in rest {
                scalars.push(vec![self.scalar(id, v)?]);
            }
            let [indices @ .., mask, other] = scalars.as_slice() else {
                return Err(self.invalid(id, "gather operands"));
            };
            if indices.len() != rank {
                return Err(self.invalid(id, "gather operands"));
            }
            let everyone = self.constant(tile_ir::Scalar::Bool(true));
            let described = self.check_site(id);
            let (at, on, inside) =
                self.indexed_element(param, indices, 0, (everyone, mask[0]), &described);
            let read = self.and(on, inside);
            let kind = ThreadOpKind::LoadGlobal { param, width: 1 };
            let r = self.emit(kind, vec![at, read, other[0]], dtype);
            return self.bind(id, Lowered::Scalar(r));
        }
        let layout = self.layout_of(id, result)?;
        let columns = self.tiles_in(id, rest, &layout)?;
        let [indices @ .., mask, other] = columns.as_slice() else {
            return Err(self.invalid(id, "gather operands"));
        };
        if indices.len() != rank {
            return Err(self.invalid(id, "gather operands"));
        }
        let coords = self.coords(&layout);
        let described = self.check_site(id);
        let mut regs = Vec::with_capacity(layout.registers());
        for v in 0..layout.registers() {
            let (at, on, inside) =
                self.indexed_element(param, indices, v, (coords.live[v], mask[v]), &described);
            let read = self.and(on, inside);
            let kind = ThreadOpKind::LoadGlobal { param, width: 1 };
            regs.push(self.emit(kind, vec![at, read, other[v]], dtype));
        }
        self.bind(id, Lowered::Tile { layout, regs })
    }
}
