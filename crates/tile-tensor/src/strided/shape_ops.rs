//! `flatten`, `unflatten` and `repeat`: reshapes with a purpose.

use super::args::{axis, sizes_for};
use super::fmt::Tuple;
use super::{StridedView, StridedViewError};

impl StridedView {
    /// Merges axes `start..=end` (negative axes count from the end) into one.
    pub fn flatten(&self, start: isize, end: isize) -> Result<StridedView, StridedViewError> {
        let op = "flatten";
        let rank = self.rank();
        let (start, end) = (axis(op, start, rank)?, axis(op, end, rank)?);
        if start > end {
            return Err(StridedViewError::FlattenOrder { start, end });
        }
        let mut shape = self.shape[..start].to_vec();
        shape.push(self.shape[start..=end].iter().product());
        shape.extend_from_slice(&self.shape[end + 1..]);
        self.reshape_to(op, &shape)
    }

    /// Splits axis `dim` into axes of `sizes` (one may be `-1`, inferred);
    /// their product must equal the axis size.
    pub fn unflatten(&self, dim: isize, sizes: &[isize]) -> Result<StridedView, StridedViewError> {
        let op = "unflatten";
        let a = axis(op, dim, self.rank())?;
        let inner = sizes_for(op, sizes, self.shape[a])?;
        let mut shape = self.shape[..a].to_vec();
        shape.extend(inner);
        shape.extend_from_slice(&self.shape[a + 1..]);
        self.reshape_to(op, &shape)
    }

    /// Tiles the view `repeats[i]` times along each axis, right-aligned like
    /// tinygrad's `Tensor.repeat` (extra leading repeats add axes). This is
    /// `reshape -> expand -> reshape`, so it is a view only when every axis
    /// repeated more than once has size 1 or stride 0 and no partial mask;
    /// otherwise it fails with [`StridedViewError::NeedsCopy`].
    pub fn repeat(&self, repeats: &[usize]) -> Result<StridedView, StridedViewError> {
        let op = "repeat";
        let rank = self.rank();
        if repeats.len() < rank {
            return Err(StridedViewError::TooFewSizes {
                op,
                rank,
                got: repeats.len(),
            });
        }
        let base = self.with_leading_units(repeats.len() - rank);
        let (mut unit, mut wide, mut last) = (Vec::new(), Vec::new(), Vec::new());
        for (&r, &s) in repeats.iter().zip(&base.shape) {
            if r != 1 {
                unit.push(1);
                wide.push(r);
            }
            unit.push(s);
            wide.push(s);
            last.push(
                r.checked_mul(s)
                    .ok_or(StridedViewError::Overflow { op, what: "a size" })?,
            );
        }
        let expanded = base.reshape_to(op, &unit)?.expand_to(&wide)?;
        expanded.reshape_to(op, &last).map_err(|e| match e {
            StridedViewError::NeedsCopy { .. } => base.repeat_culprit(repeats).map_or(e, |axis| {
                StridedViewError::needs_copy(
                    op,
                    &self.shape,
                    &self.strides,
                    format_args!(
                        "cannot be repeated {} as one strided view: axis {axis} of the aligned shape {} has size {} and stride {}{}; \
                         only axes of size 1, or of stride 0 without a partial mask, repeat",
                        Tuple(repeats),
                        Tuple(&base.shape),
                        base.shape[axis],
                        base.strides[axis],
                        if base.range(axis) == (0, base.shape[axis]) { String::new() } else { format!(" and mask {:?}", base.range(axis)) }
                    ),
                )
            }),
            other => other,
        })
    }

    /// The first axis that `repeats` copies more than once but that cannot
    /// repeat in place: size above 1 with a nonzero stride or a partial mask.
    fn repeat_culprit(&self, repeats: &[usize]) -> Option<usize> {
        (0..self.rank()).find(|&a| {
            repeats[a] > 1
                && self.shape[a] > 1
                && (self.strides[a] != 0 || self.range(a) != (0, self.shape[a]))
        })
    }
}
