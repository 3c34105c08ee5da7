//! A dense reference for views: an n-d array of "which buffer position does
//! this element read" (`None` for padding), with every movement op written the
//! obvious way, by copying. Tests apply an op to a `StridedView` and to its `Dense`
//! image and require the two to agree at every coordinate.

#![allow(dead_code)] // each test crate uses a different part of the reference

use tile_tensor::strided::{Index, StridedView};

/// A dense n-d array of buffer positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dense {
    pub shape: Vec<usize>,
    pub data: Vec<Option<isize>>,
}

/// Every coordinate of `shape` in row-major order.
fn coords(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut all = vec![vec![]];
    for &n in shape {
        let mut next = Vec::new();
        for prefix in &all {
            for i in 0..n {
                let mut c = prefix.clone();
                c.push(i);
                next.push(c);
            }
        }
        all = next;
    }
    all
}

impl Dense {
    /// The image of a view: `view.index(c)` at every coordinate.
    pub fn of(view: &StridedView) -> Dense {
        Dense::from_fn(view.shape(), |c| view.index(c))
    }

    /// An array filled from a function of the coordinate.
    pub fn from_fn(shape: &[usize], mut f: impl FnMut(&[usize]) -> Option<isize>) -> Dense {
        let data = coords(shape).iter().map(|c| f(c)).collect();
        Dense {
            shape: shape.to_vec(),
            data,
        }
    }

    /// The element at `c`.
    pub fn at(&self, c: &[usize]) -> Option<isize> {
        assert_eq!(c.len(), self.shape.len(), "coordinate rank");
        let mut flat = 0;
        for (&x, &n) in c.iter().zip(&self.shape) {
            assert!(x < n, "coordinate {c:?} outside {:?}", self.shape);
            flat = flat * n + x;
        }
        self.data[flat]
    }

    pub fn reshape(&self, shape: &[usize]) -> Dense {
        assert_eq!(shape.iter().product::<usize>(), self.data.len());
        Dense {
            shape: shape.to_vec(),
            data: self.data.clone(),
        }
    }

    /// Right-aligned broadcast.
    pub fn expand(&self, shape: &[usize]) -> Dense {
        let lead = shape.len() - self.shape.len();
        Dense::from_fn(shape, |c| {
            let src: Vec<usize> = self
                .shape
                .iter()
                .enumerate()
                .map(|(i, &n)| if n == 1 { 0 } else { c[lead + i] })
                .collect();
            self.at(&src)
        })
    }

    pub fn permute(&self, order: &[usize]) -> Dense {
        let shape: Vec<usize> = order.iter().map(|&a| self.shape[a]).collect();
        Dense::from_fn(&shape, |c| {
            let mut src = vec![0; c.len()];
            for (i, &a) in order.iter().enumerate() {
                src[a] = c[i];
            }
            self.at(&src)
        })
    }

    pub fn flip(&self, axes: &[usize]) -> Dense {
        Dense::from_fn(&self.shape, |c| {
            let src: Vec<usize> = c
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    if axes.contains(&i) {
                        self.shape[i] - 1 - x
                    } else {
                        x
                    }
                })
                .collect();
            self.at(&src)
        })
    }

    pub fn shrink(&self, ranges: &[(usize, usize)]) -> Dense {
        let shape: Vec<usize> = ranges.iter().map(|&(b, e)| e - b).collect();
        Dense::from_fn(&shape, |c| {
            let src: Vec<usize> = c.iter().zip(ranges).map(|(&x, &(b, _))| x + b).collect();
            self.at(&src)
        })
    }

    /// Padding with `None`; negative amounts drop elements.
    pub fn pad(&self, padding: &[(isize, isize)]) -> Dense {
        let shape: Vec<usize> = self
            .shape
            .iter()
            .zip(padding)
            .map(|(&n, &(b, e))| (n as isize + b + e) as usize)
            .collect();
        Dense::from_fn(&shape, |c| {
            let mut src = Vec::new();
            for ((&x, &(b, _)), &n) in c.iter().zip(padding).zip(&self.shape) {
                let s = x as isize - b;
                if s < 0 || s >= n as isize {
                    return None;
                }
                src.push(s as usize);
            }
            self.at(&src)
        })
    }

    /// Every |m|-th element, from the far end for negative m.
    pub fn stride(&self, steps: &[isize]) -> Dense {
        let shape: Vec<usize> = self
            .shape
            .iter()
            .zip(steps)
            .map(|(&n, &m)| n.div_ceil(m.unsigned_abs()))
            .collect();
        Dense::from_fn(&shape, |c| {
            let src: Vec<usize> = c
                .iter()
                .zip(steps)
                .zip(&self.shape)
                .map(|((&x, &m), &n)| {
                    if m > 0 {
                        x * m as usize
                    } else {
                        n - 1 - x * m.unsigned_abs()
                    }
                })
                .collect();
            self.at(&src)
        })
    }

    /// Python basic indexing, written from the language reference.
    pub fn get(&self, indices: &[Index]) -> Dense {
        let consumed = indices
            .iter()
            .filter(|i| matches!(i, Index::At(_) | Index::Slice { .. }))
            .count();
        let mut full = Vec::new();
        let mut saw_ellipsis = false;
        for i in indices {
            if matches!(i, Index::Ellipsis) {
                saw_ellipsis = true;
                full.extend(std::iter::repeat_n(
                    Index::full(),
                    self.shape.len() - consumed,
                ));
            } else {
                full.push(*i);
            }
        }
        if !saw_ellipsis {
            full.extend(std::iter::repeat_n(
                Index::full(),
                self.shape.len() - consumed,
            ));
        }
        // Each output axis either walks a list of source coordinates of one
        // source axis, or is a new size-1 axis; picked source axes stay fixed.
        enum Out {
            Axis(Vec<usize>),
            New,
        }
        let mut outs: Vec<(Out, Option<usize>)> = Vec::new(); // (output axis, its source axis)
        let mut fixed: Vec<Option<usize>> = Vec::new();
        let mut axis = 0;
        for i in full {
            match i {
                Index::NewAxis => outs.push((Out::New, None)),
                Index::At(k) => {
                    let n = self.shape[axis] as isize;
                    fixed.push(Some((if k < 0 { k + n } else { k }) as usize));
                    axis += 1;
                }
                Index::Slice { start, stop, step } => {
                    outs.push((
                        Out::Axis(python_slice(self.shape[axis], start, stop, step)),
                        Some(axis),
                    ));
                    fixed.push(None);
                    axis += 1;
                }
                Index::Ellipsis => unreachable!(),
            }
        }
        let shape: Vec<usize> = outs
            .iter()
            .map(|(o, _)| if let Out::Axis(v) = o { v.len() } else { 1 })
            .collect();
        Dense::from_fn(&shape, |c| {
            let mut src: Vec<usize> = fixed.iter().map(|f| f.unwrap_or(0)).collect();
            for ((o, a), &x) in outs.iter().zip(c) {
                if let (Out::Axis(v), Some(a)) = (o, a) {
                    src[*a] = v[x];
                }
            }
            self.at(&src)
        })
    }

    /// Tiles right-aligned.
    pub fn repeat(&self, repeats: &[usize]) -> Dense {
        let lead = repeats.len() - self.shape.len();
        let shape: Vec<usize> = repeats
            .iter()
            .enumerate()
            .map(|(i, &r)| r * if i < lead { 1 } else { self.shape[i - lead] })
            .collect();
        Dense::from_fn(&shape, |c| {
            let src: Vec<usize> = self
                .shape
                .iter()
                .enumerate()
                .map(|(i, &n)| c[lead + i] % n)
                .collect();
            self.at(&src)
        })
    }
}

impl Dense {
    /// Whether one strided view with a mask reads exactly these positions:
    /// the valid coordinates must fill their bounding box, and the positions
    /// must be affine on it (differences along each axis are constant). This
    /// decides the question directly, so it can judge `NeedsCopy` answers.
    pub fn expressible(&self) -> bool {
        let rank = self.shape.len();
        let valid: Vec<Vec<usize>> = coords(&self.shape)
            .into_iter()
            .filter(|c| self.at(c).is_some())
            .collect();
        let Some(first) = valid.first() else {
            // Nothing valid: an all-masked view, which needs at least one axis
            // (or no elements at all).
            return rank > 0 || self.data.is_empty();
        };
        let mut low = first.clone();
        let mut high = first.clone();
        for c in &valid {
            for i in 0..rank {
                low[i] = low[i].min(c[i]);
                high[i] = high[i].max(c[i]);
            }
        }
        let boxed: usize = (0..rank).map(|i| high[i] - low[i] + 1).product();
        if boxed != valid.len() {
            return false;
        }
        let base = self.at(&low).unwrap_or_default();
        let strides: Vec<isize> = (0..rank)
            .map(|i| {
                if high[i] == low[i] {
                    return 0;
                }
                let mut next = low.clone();
                next[i] += 1;
                self.at(&next).unwrap_or_default() - base
            })
            .collect();
        valid.iter().all(|c| {
            let predicted: isize = base
                + (0..rank)
                    .map(|i| (c[i] - low[i]) as isize * strides[i])
                    .sum::<isize>();
            self.at(c) == Some(predicted)
        })
    }
}

/// The coordinates a Python slice selects on an axis of size `n`.
pub fn python_slice(
    n: usize,
    start: Option<isize>,
    stop: Option<isize>,
    step: Option<isize>,
) -> Vec<usize> {
    let n = n as isize;
    let step = step.unwrap_or(1);
    assert_ne!(step, 0);
    // CPython's PySlice_AdjustIndices.
    let adjust = |x: isize| -> isize {
        let mut x = x;
        if x < 0 {
            x += n;
            if x < 0 {
                x = if step < 0 { -1 } else { 0 };
            }
        } else if x >= n {
            x = if step < 0 { n - 1 } else { n };
        }
        x
    };
    let start = match start {
        None => {
            if step < 0 {
                n - 1
            } else {
                0
            }
        }
        Some(s) => adjust(s),
    };
    let stop = match stop {
        None => {
            if step < 0 {
                -1
            } else {
                n
            }
        }
        Some(s) => adjust(s),
    };
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i as usize);
        i += step;
    }
    out
}

/// The positions of a view in row-major order, `fill` where masked.
pub fn values(view: &StridedView, fill: isize) -> Vec<isize> {
    Dense::of(view)
        .data
        .iter()
        .map(|x| x.unwrap_or(fill))
        .collect()
}

/// `Tensor.arange(n).reshape(shape)`: a contiguous view, whose positions are the values.
pub fn arange(shape: &[usize]) -> StridedView {
    StridedView::contiguous(shape).expect("contiguous view")
}
