//! Checked arithmetic for offsets and strides: overflow is an error, never a panic.

use super::StridedViewError;

/// `a * b`, or an overflow error naming `op` and `what`.
pub(crate) fn mul(
    op: &'static str,
    what: &'static str,
    a: isize,
    b: isize,
) -> Result<isize, StridedViewError> {
    a.checked_mul(b)
        .ok_or(StridedViewError::Overflow { op, what })
}

/// `a + b`, or an overflow error naming `op` and `what`.
pub(crate) fn add(
    op: &'static str,
    what: &'static str,
    a: isize,
    b: isize,
) -> Result<isize, StridedViewError> {
    a.checked_add(b)
        .ok_or(StridedViewError::Overflow { op, what })
}

/// `a - b`, or an overflow error naming `op` and `what`.
pub(crate) fn sub(
    op: &'static str,
    what: &'static str,
    a: isize,
    b: isize,
) -> Result<isize, StridedViewError> {
    a.checked_sub(b)
        .ok_or(StridedViewError::Overflow { op, what })
}

/// `x` as `isize`, or an overflow error naming `op` and `what`.
pub(crate) fn signed(
    op: &'static str,
    what: &'static str,
    x: usize,
) -> Result<isize, StridedViewError> {
    isize::try_from(x).map_err(|_| StridedViewError::Overflow { op, what })
}

/// The product of `sizes` if it fits in `isize`.
pub(crate) fn product(op: &'static str, sizes: &[usize]) -> Result<usize, StridedViewError> {
    let total = sizes
        .iter()
        .try_fold(1usize, |acc, &s| acc.checked_mul(s))
        .ok_or(StridedViewError::Overflow {
            op,
            what: "the number of elements",
        })?;
    signed(op, "the number of elements", total)?;
    Ok(total)
}
