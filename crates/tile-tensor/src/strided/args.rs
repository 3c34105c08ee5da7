//! Resolving user arguments: Python-style axes and size lists with `-1`.

use super::checked::product;
use super::StridedViewError;

/// Resolves `axis` in `-rank..rank` to `0..rank`.
pub(crate) fn axis(op: &'static str, axis: isize, rank: usize) -> Result<usize, StridedViewError> {
    bounded(op, axis, rank, rank)
}

/// Resolves an insertion point in `-(rank+1)..=rank` to `0..=rank`.
pub(crate) fn insertion(
    op: &'static str,
    at: isize,
    rank: usize,
) -> Result<usize, StridedViewError> {
    bounded(op, at, rank + 1, rank)
}

/// Resolves `x` in `-n..n` to `0..n`; `rank` is the view's, for the message.
fn bounded(op: &'static str, x: isize, n: usize, rank: usize) -> Result<usize, StridedViewError> {
    let err = StridedViewError::AxisOutOfRange {
        op,
        axis: x,
        rank,
        low: -(n as isize),
        high: n as isize - 1,
    };
    let n_signed = isize::try_from(n).map_err(|_| err.clone())?;
    let resolved = if x < 0 { x + n_signed } else { x };
    if (0..n_signed).contains(&resolved) {
        Ok(resolved as usize)
    } else {
        Err(err)
    }
}

/// Resolves several axes, rejecting repeats.
pub(crate) fn distinct_axes(
    op: &'static str,
    axes: &[isize],
    rank: usize,
) -> Result<Vec<usize>, StridedViewError> {
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let r = axis(op, a, rank)?;
        if seen[r] {
            return Err(StridedViewError::DuplicateAxis {
                op,
                axis: r,
                axes: axes.to_vec(),
            });
        }
        seen[r] = true;
        out.push(r);
    }
    Ok(out)
}

/// Resolves a size list for `total` elements: at most one `-1` (inferred), other
/// entries non-negative, and the product must equal `total`.
pub(crate) fn sizes_for(
    op: &'static str,
    sizes: &[isize],
    total: usize,
) -> Result<Vec<usize>, StridedViewError> {
    let mut inferred = None;
    let mut known = Vec::with_capacity(sizes.len());
    for (position, &size) in sizes.iter().enumerate() {
        match size {
            -1 if inferred.is_some() => {
                return Err(StridedViewError::MultipleInferred {
                    op,
                    sizes: sizes.to_vec(),
                });
            }
            -1 => {
                inferred = Some(position);
                known.push(1);
            }
            s if s < 0 => {
                return Err(StridedViewError::NegativeSize {
                    op,
                    position,
                    size,
                    rule: "only -1 is allowed, meaning 'infer this size'",
                });
            }
            s => known.push(s as usize),
        }
    }
    let known_total = product(op, &known)?;
    let mismatch = || StridedViewError::SizeMismatch {
        op,
        sizes: sizes.to_vec(),
        from: total,
        to: known_total,
    };
    if let Some(position) = inferred {
        if total.checked_rem(known_total) != Some(0) {
            return Err(mismatch());
        }
        known[position] = total / known_total;
    } else if known_total != total {
        return Err(mismatch());
    }
    Ok(known)
}
