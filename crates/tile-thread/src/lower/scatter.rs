//! `scatter`: each element written once, by the thread that owns it.
//!
//! The index tiles and the mask are brought to the value's layout. For
//! each register `v` with tensor index `(i_0, …)`:
//!
//! ```text
//! inside = ∧_d 0 ≤ i_d < dim[d]                     (i64)
//! on     = owner_v ∧ mask_v
//! check.index (¬on ∨ inside) [i_0, …]             (the index of a failure)
//! st.global.v1 [Σ_d i_d · stride[d]], value_v mask(on ∧ inside)
//! ```
//!
//! Where a thread holds `w > 1` consecutive elements along the innermost
//! axis (`contiguity::vector_width`), its `w` writes are one access,
//! grouped as a gather's reads (`gather.rs`): one check for the group's
//! indices, and a vector store where the group's indices are those of
//! consecutive elements from a multiple of `w`, the tensor is contiguous
//! and aligned for it and every owner's mask holds; else each element at
//! its own offset. A replicated layout keeps each element in several
//! threads, of which only the owner writes. Two elements at one address
//! held by two threads race (docs/semantics.md, "Scatters"); the emulator
//! reports it.

use super::contiguity::vector_width;
use super::{LowerError, Lowerer};
use crate::program::ThreadOpKind;
use tile_ir::OpId;

impl Lowerer<'_> {
    /// Lowers `scatter` (op `id`).
    pub(super) fn scatter_elements(&mut self, id: OpId) -> Result<(), LowerError> {
        let (param, rank, rest) = self.indexed_tensor(id)?;
        let [.., value, _] = rest else {
            return Err(self.invalid(id, "scatter operands"));
        };
        let layout = self.layout_of(id, *value)?;
        let dtype = self.func.ty(*value).dtype();
        let columns = self.tiles_in(id, rest, &layout)?;
        let [indices @ .., values, masks] = columns.as_slice() else {
            return Err(self.invalid(id, "scatter operands"));
        };
        if indices.len() != rank {
            return Err(self.invalid(id, "scatter operands"));
        }
        let coords = self.coords(&layout);
        let described = self.check_site(id);
        let width = vector_width(&layout, dtype);
        let kind = |width| ThreadOpKind::StoreGlobal { param, width };
        self.indexed_groups(
            kind,
            (param, indices),
            (values, masks),
            (&coords.owner, width),
            &described,
        );
        Ok(())
    }
}
