//! Strided views with masks, after tinygrad's `View`.
//!
//! A [`StridedView`] describes how a logical tensor of some `shape` sits in a flat
//! buffer without copying it:
//!
//! ```text
//! index(c) = offset + Σ c[i] * strides[i]        if begin[i] <= c[i] < end[i] for every i
//!          = None (masked out, reads as padding)  otherwise
//! ```
//!
//! `mask` holds the per-axis `(begin, end)` box of valid coordinates; `None`
//! means every coordinate is valid. Strides and the offset may be negative
//! (flip), zero (expand) or point outside the buffer where the mask hides them
//! (pad). [`StridedView::index`] is the definition every operation is tested against.
//!
//! Movement operations (tinygrad's low-level set) return a new view or an error:
//! [`StridedView::reshape`], [`StridedView::expand`], [`StridedView::permute`], [`StridedView::flip`],
//! [`StridedView::shrink`], [`StridedView::pad`], [`StridedView::stride`]. The high-level operations
//! ([`StridedView::get`], [`StridedView::squeeze`], [`StridedView::unsqueeze`], [`StridedView::transpose`],
//! [`StridedView::flatten`], [`StridedView::unflatten`], [`StridedView::repeat`], [`StridedView::split`],
//! [`StridedView::split_every`], [`StridedView::chunk`]) are built from them. When one
//! strided view cannot express a result (a reshape across non-contiguous axes,
//! a repeat of a strided axis) the operation returns [`StridedViewError::NeedsCopy`].
//!
//! Every view is kept in tinygrad's canonical form: size-1 axes have stride 0,
//! an axis masked to a single coordinate has stride 0 (its offset folded in),
//! a mask that hides nothing is `None`, a view that hides everything has all
//! mask entries `(0, 0)`, strides 0 and offset 0, and an empty view has
//! strides 0, offset 0 and no mask. Two views that are equal as functions are
//! then usually (not always) equal as values; compare with `index` to be sure.

mod args;
mod canonical;
mod checked;
mod error;
mod expand;
mod fmt;
mod index;
mod permute;
mod render;
mod reshape;
mod resize;
mod shape_ops;
mod split;
mod squeeze;
mod stride;

pub use error::StridedViewError;
pub use index::Index;

use checked::{mul, signed};
use fmt::{Ranges, Tuple};

/// A strided, masked view of a flat buffer (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StridedView {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: isize,
    mask: Option<Vec<(usize, usize)>>,
}

impl StridedView {
    /// A row-major view of `shape` starting at offset 0 with no mask (its
    /// positions are `0..size`). Fails only if a size, a stride or the element
    /// count does not fit in `isize`.
    pub fn contiguous(shape: &[usize]) -> Result<StridedView, StridedViewError> {
        let op = "contiguous";
        let mut strides = vec![0isize; shape.len()];
        let mut step: isize = 1;
        for (stride, &size) in strides.iter_mut().zip(shape).rev() {
            *stride = step;
            step = mul(op, "a stride", step, signed(op, "a size", size)?)?;
        }
        StridedView::canonical(op, shape.to_vec(), strides, 0, None)
    }

    /// A view with the given parts, brought into canonical form.
    ///
    /// `strides` and `mask` (if any) must have one entry per axis, and every
    /// mask entry must satisfy `begin <= end <= size`.
    pub fn new(
        shape: &[usize],
        strides: &[isize],
        offset: isize,
        mask: Option<&[(usize, usize)]>,
    ) -> Result<StridedView, StridedViewError> {
        let op = "new";
        let rank = shape.len();
        if strides.len() != rank {
            return Err(StridedViewError::RankMismatch {
                op,
                what: "strides",
                rank,
                expected: rank,
                got: strides.len(),
            });
        }
        if let Some(mask) = mask {
            if mask.len() != rank {
                return Err(StridedViewError::RankMismatch {
                    op,
                    what: "mask entries",
                    rank,
                    expected: rank,
                    got: mask.len(),
                });
            }
            for (axis, (&(begin, end), &size)) in mask.iter().zip(shape).enumerate() {
                if begin > end || end > size {
                    return Err(StridedViewError::BadRange {
                        op,
                        axis,
                        begin,
                        end,
                        size,
                    });
                }
            }
        }
        StridedView::canonical(
            op,
            shape.to_vec(),
            strides.to_vec(),
            offset,
            mask.map(<[_]>::to_vec),
        )
    }

    /// The logical shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The stride of each axis, in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The buffer position of coordinate zero (before masking).
    pub fn offset(&self) -> isize {
        self.offset
    }

    /// The per-axis `(begin, end)` box of valid coordinates, or `None` when all are valid.
    pub fn mask(&self) -> Option<&[(usize, usize)]> {
        self.mask.as_deref()
    }

    /// The number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of logical elements (the product of the shape).
    pub fn size(&self) -> usize {
        // Canonical views have checked that this product fits in `isize`.
        self.shape.iter().product()
    }

    /// The buffer position of coordinate `coords`, or `None` when the
    /// coordinate is masked out. A coordinate of the wrong rank or outside the
    /// shape (or whose position does not fit in `isize`) also gives `None`.
    pub fn index(&self, coords: &[usize]) -> Option<isize> {
        if coords.len() != self.rank() {
            return None;
        }
        let mut position = self.offset;
        for (axis, &c) in coords.iter().enumerate() {
            if c >= self.shape[axis] {
                return None;
            }
            if let Some(mask) = &self.mask {
                let (begin, end) = mask[axis];
                if c < begin || c >= end {
                    return None;
                }
            }
            let step = isize::try_from(c).ok()?.checked_mul(self.strides[axis])?;
            position = position.checked_add(step)?;
        }
        Some(position)
    }

    /// True when the mask hides every coordinate (canonically: all entries `(0, 0)`).
    fn all_masked(&self) -> bool {
        self.mask
            .as_ref()
            .is_some_and(|m| m.iter().any(|&(b, e)| b >= e))
    }

    /// The mask entry of `axis`, `(0, size)` when there is no mask.
    fn range(&self, axis: usize) -> (usize, usize) {
        self.mask
            .as_ref()
            .map_or((0, self.shape[axis]), |m| m[axis])
    }
}

impl std::fmt::Display for StridedView {
    /// `StridedView(shape=(4, 4), strides=(2, 1), offset=-3, mask=((1, 3), (1, 3)))`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StridedView(shape={}, strides={}, offset={}, mask=",
            Tuple(&self.shape),
            Tuple(&self.strides),
            self.offset
        )?;
        match &self.mask {
            Some(mask) => write!(f, "{})", Ranges(mask)),
            None => write!(f, "None)"),
        }
    }
}
