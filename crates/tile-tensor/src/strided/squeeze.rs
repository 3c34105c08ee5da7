//! `squeeze` and `unsqueeze`: remove or add size-1 axes.

use super::args::{axis, insertion};
use super::{StridedView, StridedViewError};

impl StridedView {
    /// Removes size-1 axes: all of them for `None`, or only `dim` if it has
    /// size 1 (a larger axis, or a rank-0 view, is returned unchanged, as in
    /// tinygrad). Fails only when the result would be a rank-0 view of a
    /// masked-out element, which no mask can express.
    pub fn squeeze(&self, dim: Option<isize>) -> Result<StridedView, StridedViewError> {
        let op = "squeeze";
        let axes: Vec<usize> = match dim {
            None => (0..self.rank()).filter(|&a| self.shape[a] == 1).collect(),
            Some(_) if self.rank() == 0 => Vec::new(),
            Some(d) => {
                let a = axis(op, d, self.rank())?;
                if self.shape[a] == 1 {
                    vec![a]
                } else {
                    Vec::new()
                }
            }
        };
        self.drop_units(op, &axes)
    }

    /// Inserts a size-1 axis so that it becomes axis `dim` of the result
    /// (`-1` appends at the end).
    pub fn unsqueeze(&self, dim: isize) -> Result<StridedView, StridedViewError> {
        let at = insertion("unsqueeze", dim, self.rank())?;
        Ok(self.insert_unit(at))
    }

    /// Removes the listed axes, which must all have size 1.
    pub(crate) fn drop_units(
        &self,
        op: &'static str,
        axes: &[usize],
    ) -> Result<StridedView, StridedViewError> {
        if axes.is_empty() {
            return Ok(self.clone());
        }
        let keep: Vec<usize> = (0..self.rank()).filter(|a| !axes.contains(a)).collect();
        if keep.is_empty() && self.all_masked() {
            return Err(StridedViewError::needs_copy(
                op,
                &self.shape,
                &self.strides,
                "cannot become () as one strided view: every element is masked out and a rank-0 view has no mask",
            ));
        }
        let shape = keep.iter().map(|&a| self.shape[a]).collect();
        let strides = keep.iter().map(|&a| self.strides[a]).collect();
        // A canonical mask hiding a size-1 axis hides every axis, so the kept
        // entries still say so.
        let mask = self
            .mask
            .as_ref()
            .map(|m| keep.iter().map(|&a| m[a]).collect());
        StridedView::canonical(op, shape, strides, self.offset, mask)
    }

    /// Inserts a size-1 axis at position `at` (at most the rank).
    pub(crate) fn insert_unit(&self, at: usize) -> StridedView {
        let mut view = self.clone();
        let valid = if self.all_masked() { (0, 0) } else { (0, 1) };
        view.shape.insert(at, 1);
        view.strides.insert(at, 0);
        if let Some(m) = view.mask.as_mut() {
            m.insert(at, valid);
        }
        view
    }
}
