//! `permute` and `transpose`: reorder axes.

use super::args::axis;
use super::{StridedView, StridedViewError};

impl StridedView {
    /// Reorders the axes: result axis `i` is axis `order[i]` of `self` (shape,
    /// stride and mask entry move together). Negative entries count from the
    /// end; `order` must name every axis exactly once.
    pub fn permute(&self, order: &[isize]) -> Result<StridedView, StridedViewError> {
        let rank = self.rank();
        let bad = || StridedViewError::BadPermutation {
            order: order.to_vec(),
            rank,
        };
        if order.len() != rank {
            return Err(bad());
        }
        let mut seen = vec![false; rank];
        let mut resolved = Vec::with_capacity(rank);
        for &a in order {
            let a = axis("permute", a, rank).map_err(|_| bad())?;
            if std::mem::replace(&mut seen[a], true) {
                return Err(bad());
            }
            resolved.push(a);
        }
        let shape = resolved.iter().map(|&a| self.shape[a]).collect();
        let strides = resolved.iter().map(|&a| self.strides[a]).collect();
        let mask = self
            .mask
            .as_ref()
            .map(|m| resolved.iter().map(|&a| m[a]).collect());
        StridedView::canonical("permute", shape, strides, self.offset, mask)
    }

    /// Swaps two axes (negative axes count from the end).
    pub fn transpose(&self, first: isize, second: isize) -> Result<StridedView, StridedViewError> {
        let rank = self.rank();
        let (a, b) = (
            axis("transpose", first, rank)?,
            axis("transpose", second, rank)?,
        );
        let mut order: Vec<isize> = (0..rank as isize).collect();
        order.swap(a, b);
        self.permute(&order)
    }
}
