//! Tensor descriptors after Composable Kernel's `HostTensorDescriptor`.
//!
//! A [`TensorDescriptor`] is the lengths and strides (in elements) of a dense
//! tensor in memory, built under a declared [`StrideOrder`]:
//!
//! - no strides, or all strides unknown (0 or negative): strides are derived
//!   packed for the layout ([`TensorDescriptor::packed`]);
//! - some strides unknown: for `RowMajor`/`ColumnMajor` the unknown strides of
//!   the last two dims are completed (the unit-stride dim gets 1, the leading
//!   dim gets the inner length times the inner stride); other dims must be given;
//! - then the strides are checked: all positive, the leading dim steps over a
//!   whole inner line, each batch dim over the dims inside it;
//! - [`StrideOrder::Bypass`] takes any non-negative strides unchecked.
//!
//! `element_size` is the number of elements (the product of the lengths);
//! `element_space_size` is the number of elements the buffer must hold,
//! `1 + Σ (length-1)·stride` over dims of non-zero length.
//!
//! Where this differs from CK (each is tested and listed in `docs/strided-views.md`):
//! CK derives column-major strides by swapping the last two row-major strides,
//! which for a non-square `M x N` matrix gives `(1, N)` and then fails CK's own
//! check; we derive `(1, M)`. CK checks batch dims only against each other; we
//! also check the innermost batch dim against the matrix. Lengths of 0 count as
//! 1 when deriving strides, so empty tensors still get positive strides. The
//! stride count must match the rank for every rank (CK skips all checks at rank 1).

mod error;
mod stride_order;
mod validate;

pub use error::DescriptorError;
pub use stride_order::StrideOrder;

use std::fmt;

/// Lengths and strides of a tensor in memory, validated against a layout when built.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorDescriptor {
    lengths: Vec<usize>,
    strides: Vec<usize>,
}

impl TensorDescriptor {
    /// A packed descriptor: strides derived for `layout`. `StrideOrder::Bypass`
    /// derives nothing and so is refused (it needs explicit strides).
    pub fn packed(lengths: &[usize], layout: StrideOrder) -> Result<Self, DescriptorError> {
        Self::with_strides(lengths, &[], layout)
    }

    /// A descriptor with explicit strides, where 0 or a negative value means
    /// "unknown" (see the [module docs](self) for derivation, completion and checks).
    pub fn with_strides(
        lengths: &[usize],
        strides: &[i64],
        layout: StrideOrder,
    ) -> Result<Self, DescriptorError> {
        let rank = lengths.len();
        let count_error = DescriptorError::StrideCount {
            layout,
            lengths: rank,
            strides: strides.len(),
        };
        if layout == StrideOrder::Bypass {
            if strides.len() != rank {
                return Err(count_error);
            }
            let strides = strides
                .iter()
                .enumerate()
                .map(|(dim, &stride)| {
                    usize::try_from(stride)
                        .map_err(|_| DescriptorError::NegativeBypassStride { dim, stride })
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Self::sized(lengths, strides);
        }
        if rank == 0 {
            return Err(DescriptorError::NoDimensions { layout });
        }
        if strides.iter().all(|&s| s <= 0) {
            return Self::sized(lengths, layout.packed_strides(lengths)?);
        }
        if strides.len() != rank {
            return Err(count_error);
        }
        let mut given = strides.to_vec();
        layout.complete(lengths, &mut given)?;
        let mut positive = Vec::with_capacity(rank);
        for (dim, &stride) in given.iter().enumerate() {
            if stride <= 0 {
                return Err(DescriptorError::NonPositiveStride {
                    layout,
                    dim,
                    stride,
                });
            }
            positive.push(
                usize::try_from(stride)
                    .map_err(|_| DescriptorError::Overflow { what: "a stride" })?,
            );
        }
        validate::check(layout, lengths, &positive)?;
        Self::sized(lengths, positive)
    }

    /// The descriptor, once its element count and element space are known to fit.
    fn sized(lengths: &[usize], strides: Vec<usize>) -> Result<Self, DescriptorError> {
        lengths
            .iter()
            .try_fold(1usize, |acc, &l| acc.checked_mul(l))
            .ok_or(DescriptorError::Overflow {
                what: "the element size",
            })?;
        lengths
            .iter()
            .zip(&strides)
            .filter(|(&l, _)| l > 0)
            .try_fold(1usize, |acc, (&l, &s)| {
                (l - 1).checked_mul(s).and_then(|x| acc.checked_add(x))
            })
            .ok_or(DescriptorError::Overflow {
                what: "the element space size",
            })?;
        Ok(TensorDescriptor {
            lengths: lengths.to_vec(),
            strides,
        })
    }

    /// The length of each dim.
    pub fn lengths(&self) -> &[usize] {
        &self.lengths
    }

    /// The stride of each dim, in elements.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// The number of dims.
    pub fn rank(&self) -> usize {
        self.lengths.len()
    }

    /// The number of elements: the product of the lengths (CK's `GetElementSize`).
    pub fn element_size(&self) -> usize {
        self.lengths.iter().product()
    }

    /// The number of elements the buffer must hold: `1 + Σ (length-1)·stride`
    /// over dims of non-zero length (CK's `GetElementSpaceSize`; 1 even for an
    /// empty tensor, as in CK).
    pub fn element_space_size(&self) -> usize {
        self.lengths
            .iter()
            .zip(&self.strides)
            .filter(|(&l, _)| l > 0)
            .map(|(&l, &s)| (l - 1) * s)
            .sum::<usize>()
            + 1
    }

    /// The buffer size in bytes for elements of `element_bytes` bytes.
    pub fn element_space_bytes(&self, element_bytes: usize) -> Result<usize, DescriptorError> {
        self.element_space_size()
            .checked_mul(element_bytes)
            .ok_or(DescriptorError::Overflow {
                what: "the element space in bytes",
            })
    }

    /// The element offset of a multi-index: `Σ index[i]·stride[i]` (CK's
    /// `GetOffsetFromMultiIndex`), with the rank and each coordinate checked.
    pub fn offset(&self, index: &[usize]) -> Result<usize, DescriptorError> {
        if index.len() != self.rank() {
            return Err(DescriptorError::IndexRank {
                rank: self.rank(),
                got: index.len(),
            });
        }
        for (dim, (&i, &length)) in index.iter().zip(&self.lengths).enumerate() {
            if i >= length {
                return Err(DescriptorError::IndexOutOfRange {
                    dim,
                    index: i,
                    length,
                });
            }
        }
        // Bounded by the element space size, which fits.
        Ok(index.iter().zip(&self.strides).map(|(&i, &s)| i * s).sum())
    }
}

impl fmt::Display for TensorDescriptor {
    /// CK's format: `dim 2, lengths {4, 3}, strides {3, 1}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |xs: &[usize]| {
            xs.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        write!(
            f,
            "dim {}, lengths {{{}}}, strides {{{}}}",
            self.rank(),
            list(&self.lengths),
            list(&self.strides)
        )
    }
}
