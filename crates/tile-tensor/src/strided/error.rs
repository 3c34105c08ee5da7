//! The one error type of the `view` module.

use super::fmt::Tuple;

/// Why a view operation was refused.
///
/// Every message names the operation, the rule that was broken and the values
/// that broke it, so the text alone says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StridedViewError {
    /// An argument list has the wrong length for the view's rank.
    #[error("{op}: expected {expected} {what} for a rank-{rank} view, got {got}")]
    RankMismatch {
        /// The operation.
        op: &'static str,
        /// What was counted ("strides", "mask entries", "ranges", ...).
        what: &'static str,
        /// The view's rank.
        rank: usize,
        /// How many entries the operation needs.
        expected: usize,
        /// How many entries it got.
        got: usize,
    },
    /// An axis is outside `-rank..rank` (Python-style negative axes count from the end).
    #[error("{op}: axis {axis} is out of range for rank {rank} ({})", allowed(*low, *high))]
    AxisOutOfRange {
        /// The operation.
        op: &'static str,
        /// The axis as given.
        axis: isize,
        /// The rank the axis refers to.
        rank: usize,
        /// Smallest allowed value.
        low: isize,
        /// Largest allowed value.
        high: isize,
    },
    /// The same axis was named twice.
    #[error("{op}: axis {axis} appears more than once in {}", Tuple(axes))]
    DuplicateAxis {
        /// The operation.
        op: &'static str,
        /// The repeated axis, resolved to `0..rank`.
        axis: usize,
        /// All axes as given.
        axes: Vec<isize>,
    },
    /// A permutation does not name every axis exactly once.
    #[error("permute: {} is not a permutation of the {rank} axes", Tuple(order))]
    BadPermutation {
        /// The order as given.
        order: Vec<isize>,
        /// The view's rank.
        rank: usize,
    },
    /// A size is negative where only `-1` (meaning "infer" or "keep") is allowed, or not even that.
    #[error("{op}: size {size} at position {position} is negative ({rule})")]
    NegativeSize {
        /// The operation.
        op: &'static str,
        /// Where in the size list.
        position: usize,
        /// The size as given.
        size: isize,
        /// What negative values are allowed here.
        rule: &'static str,
    },
    /// More than one size asks to be inferred.
    #[error("{op}: only one size may be -1, got {}", Tuple(sizes))]
    MultipleInferred {
        /// The operation.
        op: &'static str,
        /// The sizes as given.
        sizes: Vec<isize>,
    },
    /// Fewer sizes than the view has axes where the sizes align to the right.
    #[error("{op}: got {got} sizes for a rank-{rank} view; need at least {rank}")]
    TooFewSizes {
        /// The operation.
        op: &'static str,
        /// The view's rank.
        rank: usize,
        /// How many sizes were given.
        got: usize,
    },
    /// The new sizes hold a different number of elements than the old ones.
    #[error("{op}: {} holds {to} elements but the view holds {from}", Tuple(sizes))]
    SizeMismatch {
        /// The operation.
        op: &'static str,
        /// The sizes as given.
        sizes: Vec<isize>,
        /// Elements in the view (or in the axis being unflattened).
        from: usize,
        /// Elements the sizes describe (with a `-1` counted as 1).
        to: usize,
    },
    /// `expand` may only grow size-1 dims.
    #[error(
        "expand: axis {axis} has size {size} and cannot become {target}; only size-1 dims expand"
    )]
    ExpandNonUnit {
        /// The axis of the (left-aligned) result.
        axis: usize,
        /// Its current size.
        size: usize,
        /// The requested size.
        target: usize,
    },
    /// A range does not satisfy `0 <= begin <= end <= size`.
    #[error("{op}: axis {axis}: range ({begin}, {end}) is not within 0 <= begin <= end <= {size}")]
    BadRange {
        /// The operation.
        op: &'static str,
        /// The axis.
        axis: usize,
        /// Range start.
        begin: usize,
        /// Range end (exclusive).
        end: usize,
        /// The axis size.
        size: usize,
    },
    /// Negative padding removes more elements than the axis has.
    #[error("pad: axis {axis}: padding ({before}, {after}) removes more than the {size} elements of the axis")]
    PadTooNegative {
        /// The axis.
        axis: usize,
        /// Padding before (negative removes).
        before: isize,
        /// Padding after (negative removes).
        after: isize,
        /// The axis size.
        size: usize,
    },
    /// A step of zero.
    #[error("{op}: axis {axis}: the step must not be 0")]
    ZeroStep {
        /// The operation.
        op: &'static str,
        /// The axis.
        axis: usize,
    },
    /// An integer index outside the axis.
    #[error("getitem: index {index} is out of range for axis {axis} of size {size}")]
    IndexOutOfRange {
        /// The index as given.
        index: isize,
        /// The axis it selects on.
        axis: usize,
        /// The axis size.
        size: usize,
    },
    /// More integer and slice indices than axes.
    #[error("getitem: {count} integer/slice indices for a rank-{rank} view")]
    TooManyIndices {
        /// Number of integer and slice indices.
        count: usize,
        /// The view's rank.
        rank: usize,
    },
    /// More than one `...`.
    #[error("getitem: an index may contain at most one ellipsis, got {count}")]
    MultipleEllipsis {
        /// How many were given.
        count: usize,
    },
    /// `flatten` with `start > end`.
    #[error("flatten: start axis {start} is after end axis {end}")]
    FlattenOrder {
        /// Resolved start axis.
        start: usize,
        /// Resolved end axis.
        end: usize,
    },
    /// Split sizes that do not add up to the axis, or a zero split size or chunk count.
    #[error("{op}: {rule}")]
    BadSplit {
        /// The operation.
        op: &'static str,
        /// The rule and the offending values.
        rule: String,
    },
    /// The result is not expressible as one strided view; the operation needs a copy.
    #[error("{op} needs a copy: {detail}")]
    NeedsCopy {
        /// The operation.
        op: &'static str,
        /// Shapes, strides and the rule that failed.
        detail: String,
    },
    /// A size, stride or offset does not fit in `isize`.
    #[error("{op}: arithmetic overflow computing {what}")]
    Overflow {
        /// The operation.
        op: &'static str,
        /// The quantity that overflowed.
        what: &'static str,
    },
}

/// The allowed range of an axis, for messages.
fn allowed(low: isize, high: isize) -> String {
    if low > high {
        "a rank-0 view has no axes".into()
    } else {
        format!("allowed {low}..={high}")
    }
}

impl StridedViewError {
    /// Builds a [`StridedViewError::NeedsCopy`] whose detail starts with the view's shape and strides.
    pub(crate) fn needs_copy(
        op: &'static str,
        shape: &[usize],
        strides: &[isize],
        rest: impl std::fmt::Display,
    ) -> Self {
        StridedViewError::NeedsCopy {
            op,
            detail: format!("{} with strides {} {rest}", Tuple(shape), Tuple(strides)),
        }
    }
}
