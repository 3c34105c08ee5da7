//! `scatter`: each element written once, by the thread that owns it.
//!
//! The value, the index tiles and the mask are brought to one layout: the
//! value's, or, for a tensor-core accumulator's value whose rows a warp
//! writes in less than a sector per access, the blocked layout of 16-byte
//! vectors a store of it would take (`store_vectors.rs`; layout
//! assignment places the index tiles and the mask there). For each
//! register `v` with tensor index `(i_0, …)`:
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
use super::{wider_store_layout, LowerError, Lowerer};
use crate::program::ThreadOpKind;
use std::rc::Rc;
use tile_ir::OpId;

impl Lowerer<'_> {
    /// Lowers `scatter` (op `id`).
    pub(super) fn scatter_elements(&mut self, id: OpId) -> Result<(), LowerError> {
        let (param, rank, rest) = self.indexed_tensor(id)?;
        let [index_tiles @ .., value, mask] = rest else {
            return Err(self.invalid(id, "scatter operands"));
        };
        if index_tiles.len() != rank {
            return Err(self.invalid(id, "scatter operands"));
        }
        let dtype = self.func.ty(*value).dtype();
        let (from, regs) = self.tile(id, *value)?;
        let layout = match wider_store_layout(&from, dtype, self.program.num_warps) {
            Some(vectors) => Rc::new(vectors),
            None => from.clone(),
        };
        // An accumulator's value goes to 16-byte vectors without shared
        // memory where it can (`store_vectors.rs`), else as any operand.
        let (held, regs) = self.store_layout(dtype, from, regs);
        let values = self.convert(dtype, &held, &regs, &layout);
        let indices = self.tiles_in(id, index_tiles, &layout)?;
        let masks = self.tiles_in(id, std::slice::from_ref(mask), &layout)?;
        let coords = self.coords(&layout);
        let described = self.check_site(id);
        let width = vector_width(&layout, dtype);
        let whole = self.indexed_whole_vectors(
            param,
            (dtype, width),
            (index_tiles, *mask),
            layout.shape.len(),
        );
        let kind = |width| ThreadOpKind::StoreGlobal { param, width };
        self.indexed_groups(
            kind,
            (param, &indices),
            (&values, &masks[0]),
            (&coords.owner, width, whole),
            &described,
        );
        Ok(())
    }
}
