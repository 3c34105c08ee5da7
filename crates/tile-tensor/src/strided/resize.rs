//! `shrink` and `pad`: cut axes to a range, or grow them with masked padding.

use super::checked::{add, mul, signed, sub};
use super::{StridedView, StridedViewError};

impl StridedView {
    /// Keeps coordinates `begin..end` of each axis: the offset moves by
    /// `Σ begin·stride` and the mask is cut to the new range.
    ///
    /// Each range must satisfy `0 <= begin <= end <= size`.
    pub fn shrink(&self, ranges: &[(usize, usize)]) -> Result<StridedView, StridedViewError> {
        let op = "shrink";
        let rank = self.rank();
        if ranges.len() != rank {
            return Err(StridedViewError::RankMismatch {
                op,
                what: "ranges",
                rank,
                expected: rank,
                got: ranges.len(),
            });
        }
        let mut offset = self.offset;
        for (axis, (&(begin, end), &size)) in ranges.iter().zip(&self.shape).enumerate() {
            if begin > end || end > size {
                return Err(StridedViewError::BadRange {
                    op,
                    axis,
                    begin,
                    end,
                    size,
                });
            }
            let step = mul(
                op,
                "the offset",
                signed(op, "a range bound", begin)?,
                self.strides[axis],
            )?;
            offset = add(op, "the offset", offset, step)?;
        }
        let shape = ranges.iter().map(|&(b, e)| e - b).collect();
        let mask = self.mask.as_ref().map(|mask| {
            mask.iter()
                .zip(ranges)
                .map(|(&(mb, me), &(b, e))| {
                    let clamp = |x: usize| x.saturating_sub(b).min(e - b);
                    (clamp(mb), clamp(me))
                })
                .collect()
        });
        StridedView::canonical(op, shape, self.strides.clone(), offset, mask)
    }

    /// Adds `before` masked coordinates in front of each axis and `after`
    /// behind it: the offset moves by `-Σ before·stride` and the mask marks the
    /// original coordinates valid.
    ///
    /// Negative amounts remove coordinates instead, as in tinygrad's
    /// `Tensor.pad` (`(0, -1)` drops the last one); they may not remove more
    /// than the axis holds.
    pub fn pad(&self, padding: &[(isize, isize)]) -> Result<StridedView, StridedViewError> {
        let op = "pad";
        let rank = self.rank();
        if padding.len() != rank {
            return Err(StridedViewError::RankMismatch {
                op,
                what: "padding pairs",
                rank,
                expected: rank,
                got: padding.len(),
            });
        }
        let mut cuts = Vec::with_capacity(rank);
        for (axis, (&(before, after), &size)) in padding.iter().zip(&self.shape).enumerate() {
            let cut_before = before.min(0).unsigned_abs();
            let cut_after = after.min(0).unsigned_abs();
            match cut_before.checked_add(cut_after) {
                Some(cut) if cut <= size => cuts.push((cut_before, size - cut_after)),
                _ => {
                    return Err(StridedViewError::PadTooNegative {
                        axis,
                        before,
                        after,
                        size,
                    })
                }
            }
        }
        let base = if padding.iter().any(|&(b, e)| b < 0 || e < 0) {
            self.shrink(&cuts)?
        } else {
            self.clone()
        };
        if padding.iter().all(|&(b, e)| b <= 0 && e <= 0) {
            return Ok(base);
        }
        let mut offset = base.offset;
        let mut shape = Vec::with_capacity(rank);
        let mut mask = Vec::with_capacity(rank);
        for (axis, &(before, after)) in padding.iter().enumerate() {
            let (grow_before, grow_after) =
                (before.max(0).unsigned_abs(), after.max(0).unsigned_abs());
            let step = mul(
                op,
                "the offset",
                signed(op, "a padding", grow_before)?,
                base.strides[axis],
            )?;
            offset = sub(op, "the offset", offset, step)?;
            let size = base.shape[axis];
            let grown = size
                .checked_add(grow_before)
                .and_then(|s| s.checked_add(grow_after))
                .ok_or(StridedViewError::Overflow { op, what: "a size" })?;
            shape.push(grown);
            let (b, e) = base.range(axis);
            mask.push((b + grow_before, e + grow_before));
        }
        StridedView::canonical(op, shape, base.strides.clone(), offset, Some(mask))
    }
}
