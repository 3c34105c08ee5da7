//! `expand`: broadcast size-1 axes with stride 0.

use super::{StridedView, StridedViewError};

impl StridedView {
    /// Broadcasts to `sizes`, aligned to the right as in tinygrad's
    /// `Tensor.expand`: missing leading axes are added as size 1 first. A size
    /// of `-1` keeps the axis; any other size must equal the current one, or
    /// the current one must be 1 (the axis then gets stride 0).
    pub fn expand(&self, sizes: &[isize]) -> Result<StridedView, StridedViewError> {
        let op = "expand";
        let rank = self.rank();
        if sizes.len() < rank {
            return Err(StridedViewError::TooFewSizes {
                op,
                rank,
                got: sizes.len(),
            });
        }
        let lead = sizes.len() - rank;
        let aligned = self.with_leading_units(lead);
        let mut target = Vec::with_capacity(sizes.len());
        for (position, (&size, &current)) in sizes.iter().zip(&aligned.shape).enumerate() {
            match size {
                -1 => target.push(current),
                s if s < 0 => {
                    return Err(StridedViewError::NegativeSize {
                        op,
                        position,
                        size,
                        rule: "only -1 is allowed, meaning 'keep this size'",
                    });
                }
                s => target.push(s as usize),
            }
        }
        aligned.expand_to(&target)
    }

    /// `expand` to a shape of the same rank.
    pub(crate) fn expand_to(&self, target: &[usize]) -> Result<StridedView, StridedViewError> {
        let mut strides = self.strides.clone();
        let mut mask = self.mask.clone();
        for (axis, (&size, &want)) in self.shape.iter().zip(target).enumerate() {
            if size == want {
                continue;
            }
            if size != 1 {
                return Err(StridedViewError::ExpandNonUnit {
                    axis,
                    size,
                    target: want,
                });
            }
            strides[axis] = 0;
            if let Some(m) = mask.as_mut() {
                // A size-1 axis is either valid (0, 1) or hidden (0, 0).
                m[axis] = if m[axis] == (0, 1) { (0, want) } else { (0, 0) };
            }
        }
        StridedView::canonical("expand", target.to_vec(), strides, self.offset, mask)
    }

    /// The same view with `count` size-1 axes in front.
    pub(crate) fn with_leading_units(&self, count: usize) -> StridedView {
        let mut view = self.clone();
        let valid = if self.all_masked() { (0, 0) } else { (0, 1) };
        view.shape.splice(0..0, std::iter::repeat_n(1, count));
        view.strides.splice(0..0, std::iter::repeat_n(0, count));
        if let Some(m) = view.mask.as_mut() {
            m.splice(0..0, std::iter::repeat_n(valid, count));
        }
        view
    }
}
