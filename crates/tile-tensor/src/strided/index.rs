//! `get`: Python/tinygrad basic indexing with integers, slices, `None` and `...`.

use super::{StridedView, StridedViewError};

/// One entry of an index expression, as in `t[1, 0:2, None, ..., ::-1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// Selects one coordinate and removes the axis; negative counts from the end.
    At(isize),
    /// `start:stop:step` with Python's defaults, negative bounds and clamping.
    Slice {
        /// First coordinate (`None`: the start in the step's direction).
        start: Option<isize>,
        /// Coordinate to stop before (`None`: run to the end in the step's direction).
        stop: Option<isize>,
        /// Distance between kept coordinates (`None`: 1); must not be 0.
        step: Option<isize>,
    },
    /// `None` in Python: inserts a new size-1 axis.
    NewAxis,
    /// `...`: as many full slices as needed to index every axis.
    Ellipsis,
}

impl Index {
    /// `:`, the whole axis.
    pub fn full() -> Index {
        Index::Slice {
            start: None,
            stop: None,
            step: None,
        }
    }

    /// `start:stop`.
    pub fn range(start: isize, stop: isize) -> Index {
        Index::Slice {
            start: Some(start),
            stop: Some(stop),
            step: None,
        }
    }
}

/// What one index entry does to the axes, after resolving it.
enum Action {
    /// Keep coordinate `.0` of the next axis and drop the axis.
    Pick(usize),
    /// Keep `count` coordinates from `first` in steps of `step` of the next axis.
    Take {
        first: usize,
        count: usize,
        step: isize,
    },
    /// Insert a new size-1 axis.
    Insert,
}

impl StridedView {
    /// Indexes like `tensor[indices]` in Python (no tensor indices): integers
    /// pick a coordinate and drop the axis, slices keep a strided range, `NewAxis`
    /// adds a size-1 axis, one `Ellipsis` stands for the full slices that make
    /// the integers and slices cover every axis; missing trailing entries are
    /// full slices. Out-of-range integers are errors; slice bounds clamp.
    pub fn get(&self, indices: &[Index]) -> Result<StridedView, StridedViewError> {
        let op = "getitem";
        let rank = self.rank();
        let ellipses = indices
            .iter()
            .filter(|i| matches!(i, Index::Ellipsis))
            .count();
        if ellipses > 1 {
            return Err(StridedViewError::MultipleEllipsis { count: ellipses });
        }
        let count = indices
            .iter()
            .filter(|i| matches!(i, Index::At(_) | Index::Slice { .. }))
            .count();
        if count > rank {
            return Err(StridedViewError::TooManyIndices { count, rank });
        }
        let mut expanded = Vec::with_capacity(indices.len() + rank);
        for index in indices {
            match index {
                Index::Ellipsis => {
                    expanded.extend(std::iter::repeat_n(Index::full(), rank - count))
                }
                other => expanded.push(*other),
            }
        }
        if ellipses == 0 {
            expanded.extend(std::iter::repeat_n(Index::full(), rank - count));
        }

        let mut actions = Vec::with_capacity(expanded.len());
        let mut next_axis = 0;
        for index in expanded {
            let action = match index {
                Index::NewAxis => Action::Insert,
                Index::At(i) => Action::Pick(pick(i, next_axis, self.shape[next_axis])?),
                Index::Slice { start, stop, step } => {
                    take(start, stop, step, next_axis, self.shape[next_axis])?
                }
                Index::Ellipsis => continue,
            };
            if !matches!(action, Action::Insert) {
                next_axis += 1;
            }
            actions.push(action);
        }

        let mut ranges = Vec::with_capacity(rank);
        let mut steps = Vec::with_capacity(rank);
        for action in &actions {
            match *action {
                Action::Pick(i) => {
                    ranges.push((i, i + 1));
                    steps.push(1);
                }
                Action::Take { first, count, step } => {
                    ranges.push(span(first, count, step));
                    steps.push(step);
                }
                Action::Insert => {}
            }
        }
        let mut view = self.shrink(&ranges)?.stepped(op, &steps)?;

        let picked: Vec<usize> = actions
            .iter()
            .filter(|a| !matches!(a, Action::Insert))
            .enumerate()
            .filter_map(|(axis, a)| matches!(a, Action::Pick(_)).then_some(axis))
            .collect();
        view = view.drop_units(op, &picked)?;
        let mut out_axis = 0;
        for action in &actions {
            match action {
                Action::Pick(_) => {}
                Action::Take { .. } => out_axis += 1,
                Action::Insert => {
                    view = view.insert_unit(out_axis);
                    out_axis += 1;
                }
            }
        }
        Ok(view)
    }
}

/// Resolves an integer index on an axis of `size`.
fn pick(index: isize, axis: usize, size: usize) -> Result<usize, StridedViewError> {
    let err = StridedViewError::IndexOutOfRange { index, axis, size };
    let n = isize::try_from(size).map_err(|_| err.clone())?;
    let i = if index < 0 { index + n } else { index };
    if (0..n).contains(&i) {
        Ok(i as usize)
    } else {
        Err(err)
    }
}

/// Resolves a slice on an axis of `size` the way Python's `slice.indices` does.
fn take(
    start: Option<isize>,
    stop: Option<isize>,
    step: Option<isize>,
    axis: usize,
    size: usize,
) -> Result<Action, StridedViewError> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(StridedViewError::ZeroStep {
            op: "getitem",
            axis,
        });
    }
    let n = isize::try_from(size).map_err(|_| StridedViewError::Overflow {
        op: "getitem",
        what: "a size",
    })?;
    let (low, high) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let clamp = |x: isize| {
        if x < 0 {
            x.saturating_add(n).max(low)
        } else {
            x.min(high)
        }
    };
    let first = start.map_or(if step > 0 { low } else { high }, clamp);
    let last = stop.map_or(if step > 0 { high } else { low }, clamp);
    let distance = if step > 0 { last - first } else { first - last };
    let count = if distance > 0 {
        distance.unsigned_abs().div_ceil(step.unsigned_abs())
    } else {
        0
    };
    // With count == 0, `first` may be -1 or n; the range is empty either way.
    let first = if count == 0 { 0 } else { first as usize };
    Ok(Action::Take { first, count, step })
}

/// The range of coordinates a slice touches, lowest to highest, to shrink to
/// before striding.
fn span(first: usize, count: usize, step: isize) -> (usize, usize) {
    if count == 0 {
        return (0, 0);
    }
    let reach = (count - 1) * step.unsigned_abs();
    if step > 0 {
        (first, first + reach + 1)
    } else {
        (first - reach, first + 1)
    }
}
