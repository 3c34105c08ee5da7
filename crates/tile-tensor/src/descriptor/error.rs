//! The one error type of the `descriptor` module.

use super::StrideOrder;

/// Why a tensor descriptor was refused, or an index into it.
///
/// Messages name the dimension, the rule and the offending values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    /// Rank 0 under a checked layout (CK: "empty tensor dimensions is not allowed").
    #[error(
        "tensor descriptor: no lengths given; a {layout} descriptor needs at least one dimension"
    )]
    NoDimensions {
        /// The declared layout.
        layout: StrideOrder,
    },
    /// Strides given, but not one per dimension.
    #[error(
        "tensor descriptor: {strides} strides for {lengths} lengths; give one stride per dimension, \
         or none (or all unknown) to derive them as {layout}"
    )]
    StrideCount {
        /// The declared layout.
        layout: StrideOrder,
        /// Number of lengths.
        lengths: usize,
        /// Number of strides.
        strides: usize,
    },
    /// A stride that is still unknown (0 or negative) after completion.
    #[error(
        "tensor descriptor: dim {dim} has stride {stride}, but {layout} needs positive strides; \
         unknown strides (0 or negative) are only completed in the last two dims, or in every dim \
         when all strides are unknown"
    )]
    NonPositiveStride {
        /// The declared layout.
        layout: StrideOrder,
        /// The dimension.
        dim: usize,
        /// Its stride as given.
        stride: i64,
    },
    /// A negative stride under [`StrideOrder::Bypass`].
    #[error("tensor descriptor: dim {dim} has stride {stride}, but bypass strides must be 0 or positive")]
    NegativeBypassStride {
        /// The dimension.
        dim: usize,
        /// Its stride as given.
        stride: i64,
    },
    /// The outer matrix dim steps less than one whole inner line.
    #[error(
        "tensor descriptor: {layout}: dim {outer} has stride {outer_stride}, less than length \
         {inner_length} * stride {inner_stride} of dim {inner}, so consecutive {lines} overlap"
    )]
    MatrixOverlap {
        /// The declared layout.
        layout: StrideOrder,
        /// The outer (leading-dimension) dim.
        outer: usize,
        /// Its stride.
        outer_stride: usize,
        /// The inner (unit-stride) dim.
        inner: usize,
        /// Its length.
        inner_length: usize,
        /// Its stride.
        inner_stride: usize,
        /// "rows" or "columns".
        lines: &'static str,
    },
    /// A batch dim steps less than the dims inside it span.
    #[error(
        "tensor descriptor: {layout}: batch dim {dim} has stride {stride}, less than length \
         {next_length} * stride {next_stride} of dim {next}, so consecutive batches overlap"
    )]
    BatchOverlap {
        /// The declared layout.
        layout: StrideOrder,
        /// The batch dim.
        dim: usize,
        /// Its stride.
        stride: usize,
        /// The dim it must step over.
        next: usize,
        /// That dim's length.
        next_length: usize,
        /// That dim's stride.
        next_stride: usize,
    },
    /// A multi-index of the wrong rank.
    #[error("tensor descriptor: index has {got} coordinates for a rank-{rank} descriptor")]
    IndexRank {
        /// The descriptor's rank.
        rank: usize,
        /// Coordinates given.
        got: usize,
    },
    /// A coordinate outside its dimension.
    #[error("tensor descriptor: index {index} is out of range for dim {dim} of length {length}")]
    IndexOutOfRange {
        /// The dimension.
        dim: usize,
        /// The coordinate given.
        index: usize,
        /// The dimension's length.
        length: usize,
    },
    /// A stride, size or byte count does not fit in `usize`.
    #[error("tensor descriptor: arithmetic overflow computing {what}")]
    Overflow {
        /// The quantity that overflowed.
        what: &'static str,
    },
}
