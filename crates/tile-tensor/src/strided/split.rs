//! `split`, `split_every` and `chunk`: cut one axis into consecutive pieces.

use super::args::axis;
use super::fmt::Tuple;
use super::{StridedView, StridedViewError};

impl StridedView {
    /// Cuts axis `dim` into consecutive pieces of the given sizes, which must
    /// add up to the axis size.
    pub fn split(&self, sizes: &[usize], dim: isize) -> Result<Vec<StridedView>, StridedViewError> {
        let op = "split";
        let a = axis(op, dim, self.rank())?;
        let total = sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s));
        if total != Some(self.shape[a]) {
            return Err(StridedViewError::BadSplit {
                op,
                rule: format!(
                    "sizes {} must add up to the size {} of axis {a}",
                    Tuple(sizes),
                    self.shape[a]
                ),
            });
        }
        let mut ranges: Vec<(usize, usize)> = self.shape.iter().map(|&s| (0, s)).collect();
        let mut begin = 0;
        sizes
            .iter()
            .map(|&s| {
                ranges[a] = (begin, begin + s);
                begin += s;
                self.shrink(&ranges)
            })
            .collect()
    }

    /// Cuts axis `dim` into pieces of `size` coordinates; the last piece may be
    /// smaller. An empty axis gives one empty piece. `size` must be positive.
    pub fn split_every(
        &self,
        size: usize,
        dim: isize,
    ) -> Result<Vec<StridedView>, StridedViewError> {
        let op = "split";
        let a = axis(op, dim, self.rank())?;
        if size == 0 {
            return Err(StridedViewError::BadSplit {
                op,
                rule: "the piece size must be positive, got 0".into(),
            });
        }
        let n = self.shape[a];
        let sizes: Vec<usize> = if n == 0 {
            vec![0]
        } else {
            (0..n).step_by(size).map(|i| size.min(n - i)).collect()
        };
        self.split(&sizes, dim)
    }

    /// Cuts axis `dim` into at most `chunks` pieces of `ceil(size / chunks)`
    /// coordinates (the last may be smaller, and there may be fewer pieces, as
    /// in tinygrad). An empty axis gives `chunks` empty pieces.
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<StridedView>, StridedViewError> {
        let op = "chunk";
        let a = axis(op, dim, self.rank())?;
        if chunks == 0 {
            return Err(StridedViewError::BadSplit {
                op,
                rule: "the number of chunks must be positive, got 0".into(),
            });
        }
        let n = self.shape[a];
        if n == 0 {
            return self.split(&vec![0; chunks], dim);
        }
        self.split_every(n.div_ceil(chunks), dim)
    }
}
