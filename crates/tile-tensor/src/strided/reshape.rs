//! `reshape`: merge and split axes without moving data, when one view can say it.
//!
//! Size-1 axes carry no information and are dropped on the way in and added
//! with stride 0 on the way out. The remaining axes of both shapes are cut into
//! the smallest groups with equal products (`(4, 6) -> (2, 2, 2, 3)` groups as
//! `4 -> 2·2` and `6 -> 2·3`). Each old group is merged into one run (inner to
//! outer) and the run is split into the new group's axes:
//!
//! - merging outer axis `o` onto the run `r` works when `o` is masked to a single
//!   coordinate (its step folds into the offset), or when the run is unmasked
//!   and `stride(o) == stride(r)·size(r)` (the axes are one contiguous stride);
//! - splitting a run of stride `s` gives each new axis stride `s·(product of the
//!   new axes inside it)`; the run's valid range must be a box in the new axes
//!   (it stays inside one row of an axis, or covers whole rows).
//!
//! Anything else is not one strided view and is reported as needing a copy.

use super::args::sizes_for;
use super::checked::{add, mul, signed, sub};
use super::fmt::{Ranges, Tuple};
use super::{StridedView, StridedViewError};

/// One non-unit axis of the old view, or several merged ones.
#[derive(Clone, Copy)]
struct Run {
    size: usize,
    stride: isize,
    begin: usize,
    end: usize,
}

impl StridedView {
    /// Gives the view a new shape with the same number of elements, read in
    /// row-major order. One size may be `-1` (inferred). Fails with
    /// [`StridedViewError::NeedsCopy`] when no single strided view has that shape
    /// (for example merging axes whose strides are not contiguous).
    pub fn reshape(&self, sizes: &[isize]) -> Result<StridedView, StridedViewError> {
        let shape = sizes_for("reshape", sizes, self.size())?;
        self.reshape_to("reshape", &shape)
    }

    /// `reshape` to a shape whose product the caller has checked.
    pub(crate) fn reshape_to(
        &self,
        op: &'static str,
        shape: &[usize],
    ) -> Result<StridedView, StridedViewError> {
        if shape == self.shape {
            return Ok(self.clone());
        }
        let rank = shape.len();
        if self.size() == 0 {
            return StridedView::canonical(op, shape.to_vec(), vec![0; rank], 0, None);
        }
        let fail = |reason: String| {
            StridedViewError::needs_copy(
                op,
                &self.shape,
                &self.strides,
                format_args!(
                    "cannot become {} as one strided view: {reason}",
                    Tuple(shape)
                ),
            )
        };
        if self.all_masked() {
            if rank == 0 {
                return Err(fail(
                    "every element is masked out and a rank-0 view has no mask".into(),
                ));
            }
            return StridedView::canonical(
                op,
                shape.to_vec(),
                vec![0; rank],
                0,
                Some(vec![(0, 0); rank]),
            );
        }
        let old: Vec<usize> = (0..self.rank()).filter(|&a| self.shape[a] != 1).collect();
        let new: Vec<usize> = (0..rank).filter(|&a| shape[a] != 1).collect();
        let mut strides = vec![0; rank];
        let mut mask: Vec<(usize, usize)> = shape.iter().map(|&s| (0, s)).collect();
        let mut offset = self.offset;
        let (mut i, mut j) = (0, 0);
        while i < old.len() && j < new.len() {
            let (i0, j0) = (i, j);
            let (mut have, mut want) = (self.shape[old[i]], shape[new[j]]);
            i += 1;
            j += 1;
            // Both shapes hold the same number of elements and every size here
            // is at least 2, so the shorter side always has another axis.
            while have != want {
                if have < want {
                    have *= self.shape[old[i]];
                    i += 1;
                } else {
                    want *= shape[new[j]];
                    j += 1;
                }
            }
            let run = self
                .merge(op, &old[i0..i], &mut offset)
                .map_err(|e| e.or_else(&fail))?;
            split(op, run, &new[j0..j], shape, &mut strides, &mut mask)
                .map_err(|e| e.or_else(&fail))?;
        }
        StridedView::canonical(op, shape.to_vec(), strides, offset, Some(mask))
    }

    /// Merges the old axes `axes` (outer to inner) into one run, folding the
    /// steps of single-coordinate axes into `offset`.
    fn merge(&self, op: &'static str, axes: &[usize], offset: &mut isize) -> Result<Run, Failure> {
        let axis_run = |a: usize| {
            let (begin, end) = self.range(a);
            Run {
                size: self.shape[a],
                stride: self.strides[a],
                begin,
                end,
            }
        };
        let Some((&innermost, outers)) = axes.split_last() else {
            return Err(Failure::Reason("no axes to merge".into()));
        };
        let mut run = axis_run(innermost);
        for &a in outers.iter().rev() {
            let outer = axis_run(a);
            let span = mul(op, "a stride", run.stride, signed(op, "a size", run.size)?)?;
            let size = outer.size * run.size;
            if outer.end - outer.begin == 1 {
                let shift = mul(
                    op,
                    "the offset",
                    signed(op, "a mask bound", outer.begin)?,
                    sub(op, "a stride", outer.stride, span)?,
                )?;
                *offset = add(op, "the offset", *offset, shift)?;
                let base = outer.begin * run.size;
                run = Run {
                    size,
                    stride: run.stride,
                    begin: base + run.begin,
                    end: base + run.end,
                };
            } else if run.begin != 0 || run.end != run.size {
                return Err(Failure::Reason(format!(
                    "the mask {} keeps part of {} in several coordinates of axis {a}, which is not one range",
                    Ranges(self.mask.as_deref().unwrap_or_default()),
                    axes_after(a, innermost)
                )));
            } else if outer.stride != span {
                return Err(Failure::Reason(format!(
                    "axis {a} has stride {} but {} needs stride {} * {} = {span} to continue it",
                    outer.stride,
                    axes_after(a, innermost),
                    run.stride,
                    run.size
                )));
            } else {
                run = Run {
                    size,
                    stride: run.stride,
                    begin: outer.begin * run.size,
                    end: outer.end * run.size,
                };
            }
        }
        Ok(run)
    }
}

/// Names the axes `outer+1..=innermost` for a message.
fn axes_after(outer: usize, innermost: usize) -> String {
    if outer + 1 == innermost {
        format!("axis {innermost}")
    } else {
        format!("axes {}..={innermost}", outer + 1)
    }
}

/// Splits `run` into the new axes `axes` (outer to inner) of `shape`.
fn split(
    op: &'static str,
    run: Run,
    axes: &[usize],
    shape: &[usize],
    strides: &mut [isize],
    mask: &mut [(usize, usize)],
) -> Result<(), Failure> {
    let (mut begin, mut end) = (run.begin, run.end);
    let mut inside = run.size;
    for &a in axes {
        inside /= shape[a];
        strides[a] = mul(op, "a stride", run.stride, signed(op, "a size", inside)?)?;
        if begin / inside == (end - 1) / inside {
            mask[a] = (begin / inside, begin / inside + 1);
            begin %= inside;
            end = (end - 1) % inside + 1;
        } else if begin.checked_rem(inside) == Some(0) && end.checked_rem(inside) == Some(0) {
            mask[a] = (begin / inside, end / inside);
            begin = 0;
            end = inside;
        } else {
            let sizes: Vec<usize> = axes.iter().map(|&x| shape[x]).collect();
            return Err(Failure::Reason(format!(
                "the valid range {}..{} of the merged axes is not a box in the new axes {}",
                run.begin,
                run.end,
                Tuple(&sizes)
            )));
        }
    }
    Ok(())
}

/// A merge or split failure: a reason to wrap into `NeedsCopy`, or a hard error.
enum Failure {
    Reason(String),
    Error(StridedViewError),
}

impl From<StridedViewError> for Failure {
    fn from(e: StridedViewError) -> Self {
        Failure::Error(e)
    }
}

impl Failure {
    /// The final error: reasons become `wrap(reason)`, hard errors pass through.
    fn or_else(self, wrap: &impl Fn(String) -> StridedViewError) -> StridedViewError {
        match self {
            Failure::Reason(r) => wrap(r),
            Failure::Error(e) => e,
        }
    }
}
