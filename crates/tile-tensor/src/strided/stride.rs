//! `stride` and `flip`: keep every n-th coordinate, possibly walking backwards.

use super::args::distinct_axes;
use super::checked::{add, mul, signed};
use super::{StridedView, StridedViewError};

impl StridedView {
    /// Keeps every `|step|`-th coordinate of each axis (tinygrad's `STRIDE`
    /// movement op); a negative step also reverses the axis. Axis `i` gets
    /// size `ceil(size / |step|)` and stride `stride·step`; a negative step adds
    /// `(size-1)·stride` to the offset. A step of 0 is an error.
    pub fn stride(&self, steps: &[isize]) -> Result<StridedView, StridedViewError> {
        self.stepped("stride", steps)
    }

    /// Reverses the given axes (negative axes count from the end): the stride
    /// is negated, `(size-1)·stride` is added to the offset and the mask is
    /// mirrored. Naming an axis twice is an error.
    pub fn flip(&self, axes: &[isize]) -> Result<StridedView, StridedViewError> {
        let axes = distinct_axes("flip", axes, self.rank())?;
        let mut steps = vec![1; self.rank()];
        for axis in axes {
            steps[axis] = -1;
        }
        self.stepped("flip", &steps)
    }

    /// The shared body of `stride` and `flip`, reporting errors as `op`.
    pub(crate) fn stepped(
        &self,
        op: &'static str,
        steps: &[isize],
    ) -> Result<StridedView, StridedViewError> {
        let rank = self.rank();
        if steps.len() != rank {
            return Err(StridedViewError::RankMismatch {
                op,
                what: "steps",
                rank,
                expected: rank,
                got: steps.len(),
            });
        }
        let mut offset = self.offset;
        let mut shape = Vec::with_capacity(rank);
        let mut strides = Vec::with_capacity(rank);
        let mut mask = Vec::with_capacity(rank);
        for (axis, &step) in steps.iter().enumerate() {
            if step == 0 {
                return Err(StridedViewError::ZeroStep { op, axis });
            }
            let (size, stride) = (self.shape[axis], self.strides[axis]);
            let jump = step.unsigned_abs();
            let (begin, end) = self.range(axis);
            shape.push(size.div_ceil(jump));
            strides.push(mul(op, "a stride", stride, step)?);
            if step > 0 {
                mask.push((begin.div_ceil(jump), end.div_ceil(jump)));
            } else {
                if size > 0 {
                    let last = mul(op, "the offset", signed(op, "a size", size - 1)?, stride)?;
                    offset = add(op, "the offset", offset, last)?;
                }
                mask.push(((size - end).div_ceil(jump), (size - begin).div_ceil(jump)));
            }
        }
        let mask = self.mask.as_ref().map(|_| mask);
        StridedView::canonical(op, shape, strides, offset, mask)
    }
}
