//! `Layout = Shape:Stride`, a function from coordinates to offsets.

use std::fmt;
use std::str::FromStr;

use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::parse::{parse_all, Cursor};

/// A layout `Shape:Stride`: two congruent int-tuples.
///
/// A 1-D index `i` maps to a natural coordinate colexicographically (the
/// leftmost mode varies fastest), and the coordinate maps to the offset
/// `L(c) = Σ cₖ·dₖ` (the inner product with the stride). Indices past
/// `size()` are absorbed by the last mode, as in CuTe.
///
/// ```
/// use tile_ir::layout::Layout;
/// let l: Layout = "(2,(2,2)):(4,(2,1))".parse().unwrap();
/// assert_eq!((0..8).map(|i| l.call(i)).collect::<Vec<_>>(), [0, 4, 2, 6, 1, 5, 3, 7]);
/// assert_eq!((l.size(), l.cosize(), l.rank(), l.depth()), (8, 8, 2, 2));
/// assert_eq!(l.to_string(), "(2,(2,2)):(4,(2,1))");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: IntTuple,
    stride: IntTuple,
}

impl Layout {
    /// Builds `shape:stride`.
    ///
    /// Fails if the two are not congruent, an extent is below 1, or the size
    /// or the span `Σ |dₖ|·(sₖ-1)` does not fit in an `i64`.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout> {
        if !shape.congruent(&stride) {
            return Err(LayoutError::NotCongruent {
                op: "Layout::new",
                left: shape.to_string(),
                right: stride.to_string(),
            });
        }
        let extents = shape.leaves();
        if extents.iter().any(|&s| s < 1) {
            return Err(LayoutError::rule(
                "Layout::new",
                "every extent must be at least 1",
                format!("shape {shape}"),
            ));
        }
        let size = extents.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s));
        let span = extents
            .iter()
            .zip(stride.leaves())
            .try_fold(0i64, |acc, (&s, d)| {
                acc.checked_add(d.checked_abs()?.checked_mul(s - 1)?)
            });
        if size.is_none() || span.is_none() {
            return Err(LayoutError::Overflow {
                op: "Layout::new",
                detail: format!("the size or span of {shape}:{stride}"),
            });
        }
        Ok(Layout { shape, stride })
    }

    /// The compact column-major layout of `shape` (CuTe's `LayoutLeft`):
    /// strides are the exclusive prefix products, `(4,(2,3))` → `(1,(4,8))`.
    pub fn column_major(shape: IntTuple) -> Result<Layout> {
        let stride = shape.prefix_product(1);
        Layout::new(shape, stride)
    }

    /// The compact row-major layout of `shape` (CuTe's `LayoutRight`):
    /// strides are the exclusive suffix products, `(4,(2,3))` → `(6,(3,1))`.
    pub fn row_major(shape: IntTuple) -> Result<Layout> {
        let stride = shape.suffix_product(1);
        Layout::new(shape, stride)
    }

    /// The rank-1 layout `n:d`.
    pub fn strided(n: i64, d: i64) -> Result<Layout> {
        Layout::new(IntTuple::Int(n), IntTuple::Int(d))
    }

    /// `(l₀, l₁, …)`: the layouts as the modes of one layout (CuTe's
    /// `make_layout(l₀, l₁, …)`). `concat(&[3:1, 4:3])` is `(3,4):(1,3)`.
    pub fn concat(layouts: &[Layout]) -> Layout {
        Layout {
            shape: IntTuple::Tuple(layouts.iter().map(|l| l.shape.clone()).collect()),
            stride: IntTuple::Tuple(layouts.iter().map(|l| l.stride.clone()).collect()),
        }
    }

    /// The shape.
    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    /// The stride.
    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// Number of coordinates, the product of the shape.
    pub fn size(&self) -> i64 {
        self.shape.size()
    }

    /// `L(size-1) + 1`: one past the offset of the last coordinate.
    pub fn cosize(&self) -> i64 {
        self.call(self.size() - 1).saturating_add(1)
    }

    /// Number of top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Nesting depth of the shape.
    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// Mode `i` as a layout (CuTe's `layout<i>`); a rank-1 integral layout
    /// is its own mode 0.
    pub fn mode(&self, i: usize) -> Option<Layout> {
        Some(Layout {
            shape: self.shape.mode(i)?.clone(),
            stride: self.stride.mode(i)?.clone(),
        })
    }

    /// The top-level modes as layouts.
    pub fn modes(&self) -> Vec<Layout> {
        (0..self.rank()).filter_map(|i| self.mode(i)).collect()
    }

    /// The offset of 1-D index `idx`: `crd2idx(idx2crd(idx))`.
    ///
    /// Past `size()` the last mode keeps counting; arithmetic wraps rather
    /// than panics far outside the domain.
    pub fn call(&self, idx: i64) -> i64 {
        offset_of(idx, &self.shape, &self.stride)
    }

    /// The natural (hierarchical) coordinate of 1-D index `idx`.
    pub fn idx2crd(&self, idx: i64) -> IntTuple {
        idx2crd(idx, &self.shape)
    }

    /// The offset of a coordinate: 1-D, by mode, or natural.
    pub fn crd2idx(&self, coord: &IntTuple) -> Result<i64> {
        crd2idx(coord, &self.shape, &self.stride)
    }

    /// The modes at `indices`, as a tuple (CuTe's `select<I…>`):
    /// `select((2,3,5,7):(1,2,6,30), [1,3])` is `(3,7):(2,30)`.
    pub fn select(&self, indices: &[usize]) -> Result<Layout> {
        let modes = indices
            .iter()
            .map(|&i| {
                self.mode(i).ok_or_else(|| {
                    LayoutError::rule(
                        "select",
                        "mode index out of range",
                        format!("mode {i} of {self}"),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Layout::concat(&modes))
    }

    /// The modes `begin..end` as a tuple (CuTe's `take<B,E>`); the range
    /// must be non-empty.
    pub fn take(&self, begin: usize, end: usize) -> Result<Layout> {
        self.check_range("take", begin, end)?;
        self.select(&(begin..end).collect::<Vec<_>>())
    }

    /// Modes `begin..end` gathered into one mode (CuTe's `group<B,E>`):
    /// `group((2,3,5,7):(1,2,6,30), 0, 2)` is `((2,3),5,7):((1,2),6,30)`.
    pub fn group(&self, begin: usize, end: usize) -> Result<Layout> {
        self.check_range("group", begin, end)?;
        let modes = self.modes();
        let mut out = modes[..begin].to_vec();
        out.push(Layout::concat(&modes[begin..end]));
        out.extend_from_slice(&modes[end..]);
        Ok(Layout::concat(&out))
    }

    fn check_range(&self, op: &'static str, begin: usize, end: usize) -> Result<()> {
        if begin < end && end <= self.rank() {
            Ok(())
        } else {
            Err(LayoutError::rule(
                op,
                "mode range must be non-empty and within the rank",
                format!("{begin}..{end} of {self}"),
            ))
        }
    }

    /// The same function with depth at most 1.
    pub fn flatten(&self) -> Layout {
        Layout {
            shape: self.shape.flatten(),
            stride: self.stride.flatten(),
        }
    }

    /// `other` added as a new last mode: `append(3:1, 4:3)` is `(3,4):(1,3)`.
    pub fn append(&self, other: &Layout) -> Layout {
        let mut modes = self.modes();
        modes.push(other.clone());
        Layout::concat(&modes)
    }

    /// `other` added as a new first mode: `prepend(3:1, 4:3)` is `(4,3):(3,1)`.
    pub fn prepend(&self, other: &Layout) -> Layout {
        let mut modes = vec![other.clone()];
        modes.extend(self.modes());
        Layout::concat(&modes)
    }

    /// Mode `i` replaced by `other` (CuTe's `replace<I>`).
    pub fn replace(&self, i: usize, other: &Layout) -> Result<Layout> {
        if i >= self.rank() {
            return Err(LayoutError::rule(
                "replace",
                "mode index out of range",
                format!("mode {i} of {self}"),
            ));
        }
        let mut modes = self.modes();
        modes[i] = other.clone();
        Ok(Layout::concat(&modes))
    }

    /// The modes padded with `1:0` up to `rank` (CuTe's `append<N>`); a
    /// layout of larger rank is returned as its modes unchanged.
    pub(crate) fn padded_modes(&self, rank: usize) -> Vec<Layout> {
        let mut modes = self.modes();
        while modes.len() < rank {
            modes.push(Layout::unit());
        }
        modes
    }

    /// `1:0`, the layout of one element.
    pub(crate) fn unit() -> Layout {
        Layout {
            shape: IntTuple::Int(1),
            stride: IntTuple::Int(0),
        }
    }

    /// Builds from parts already known to be congruent and in range.
    pub(crate) fn from_parts(shape: IntTuple, stride: IntTuple) -> Layout {
        Layout { shape, stride }
    }

    pub(crate) fn parse_from(cursor: &mut Cursor<'_>) -> Result<Layout> {
        let shape = IntTuple::parse_from(cursor)?;
        cursor.expect(":", "`:` between shape and stride")?;
        let stride = IntTuple::parse_from(cursor)?;
        Layout::new(shape, stride)
    }
}

/// The natural coordinate of 1-D index `idx` in `shape`, colexicographic:
/// `c₀ = i mod s₀`, `c₁ = (i / s₀) mod s₁`, …; the last mode takes the rest.
///
/// ```
/// use tile_ir::layout::{idx2crd, IntTuple};
/// let shape: IntTuple = "(3,(2,3))".parse().unwrap();
/// assert_eq!(idx2crd(16, &shape).to_string(), "(1,(1,2))");
/// ```
pub fn idx2crd(idx: i64, shape: &IntTuple) -> IntTuple {
    match shape {
        IntTuple::Int(_) => IntTuple::Int(idx),
        IntTuple::Tuple(modes) => {
            let mut rest = idx;
            let last = modes.len().saturating_sub(1);
            let coords = modes.iter().enumerate().map(|(k, mode)| {
                if k == last {
                    idx2crd(rest, mode)
                } else {
                    let (quotient, remainder) = divmod(rest, mode.size());
                    rest = quotient;
                    idx2crd(remainder, mode)
                }
            });
            IntTuple::Tuple(coords.collect())
        }
    }
}

/// The offset of `coord` under `shape:stride`.
///
/// A coordinate may be natural (congruent to the shape), or have an
/// integer where the shape has a subtree; that integer is a 1-D index into
/// the subtree.
///
/// ```
/// use tile_ir::layout::{crd2idx, IntTuple};
/// let shape: IntTuple = "(3,(2,3))".parse().unwrap();
/// let stride: IntTuple = "(3,(12,1))".parse().unwrap();
/// for c in ["16", "(1,5)", "(1,(1,2))"] {
///     assert_eq!(crd2idx(&c.parse().unwrap(), &shape, &stride).unwrap(), 17);
/// }
/// ```
pub fn crd2idx(coord: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<i64> {
    match (coord, shape, stride) {
        (IntTuple::Int(c), _, _) => Ok(offset_of(*c, shape, stride)),
        (IntTuple::Tuple(cs), IntTuple::Tuple(ss), IntTuple::Tuple(ds)) if cs.len() == ss.len() => {
            let mut total = 0i64;
            for ((c, s), d) in cs.iter().zip(ss).zip(ds) {
                total = total.wrapping_add(crd2idx(c, s, d)?);
            }
            Ok(total)
        }
        _ => Err(LayoutError::rule(
            "crd2idx",
            "a tuple coordinate needs a shape of the same rank",
            format!("coordinate {coord} in shape {shape}"),
        )),
    }
}

/// The offset of a 1-D index within `shape:stride` (the shape and stride
/// are congruent).
fn offset_of(idx: i64, shape: &IntTuple, stride: &IntTuple) -> i64 {
    match (shape, stride) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let mut rest = idx;
            let mut total = 0i64;
            for (k, (s, d)) in ss.iter().zip(ds).enumerate() {
                if k + 1 == ss.len() {
                    total = total.wrapping_add(offset_of(rest, s, d));
                } else {
                    let (quotient, remainder) = divmod(rest, s.size());
                    total = total.wrapping_add(offset_of(remainder, s, d));
                    rest = quotient;
                }
            }
            total
        }
        (_, IntTuple::Int(d)) => idx.wrapping_mul(*d),
        (_, IntTuple::Tuple(_)) => 0,
    }
}

/// Debug output is the text form, so failing tests print `(4,2):(1,4)`.
impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `(a / b, a mod b)`; a divisor below 1 (possible only in shapes that
/// were never validated) keeps everything in the remainder.
fn divmod(a: i64, b: i64) -> (i64, i64) {
    if b < 1 {
        return (0, a);
    }
    (a / b, a % b)
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

impl FromStr for Layout {
    type Err = LayoutError;

    fn from_str(s: &str) -> Result<Self> {
        parse_all(s, Layout::parse_from)
    }
}
