//! Int-tuples: an integer or a tuple of int-tuples, the stuff shapes,
//! strides and coordinates are made of.

use std::fmt;
use std::str::FromStr;

use super::error::{LayoutError, Result};
use super::parse::{parse_all, Cursor};

/// An integer or a tuple of int-tuples, e.g. `(4,(2,3))`.
///
/// Integers are `i64` so that strides may be zero or negative. A bare `n`
/// and the one-element tuple `(n)` are different values: the first has
/// depth 0, the second depth 1.
///
/// ```
/// use tile_ir::layout::IntTuple;
/// let t: IntTuple = "(4,(2,3))".parse().unwrap();
/// assert_eq!((t.rank(), t.depth(), t.size()), (2, 2, 24));
/// assert_eq!(t.flatten().to_string(), "(4,2,3)");
/// assert_ne!("5".parse::<IntTuple>().unwrap(), "(5)".parse().unwrap());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum IntTuple {
    /// A leaf.
    Int(i64),
    /// A tuple of int-tuples (possibly empty).
    Tuple(Vec<IntTuple>),
}

impl From<i64> for IntTuple {
    fn from(n: i64) -> Self {
        IntTuple::Int(n)
    }
}

impl From<Vec<IntTuple>> for IntTuple {
    fn from(items: Vec<IntTuple>) -> Self {
        IntTuple::Tuple(items)
    }
}

impl IntTuple {
    /// A flat tuple of the given integers, e.g. `(2,3)`.
    pub fn flat(values: &[i64]) -> Self {
        IntTuple::Tuple(values.iter().map(|&v| IntTuple::Int(v)).collect())
    }

    /// The integer, if this is a leaf.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            IntTuple::Int(n) => Some(*n),
            IntTuple::Tuple(_) => None,
        }
    }

    /// The top-level modes: the elements of a tuple, or the leaf itself.
    pub fn modes(&self) -> &[IntTuple] {
        match self {
            IntTuple::Int(_) => std::slice::from_ref(self),
            IntTuple::Tuple(items) => items,
        }
    }

    /// Mode `i` (see [`IntTuple::modes`]).
    pub fn mode(&self, i: usize) -> Option<&IntTuple> {
        self.modes().get(i)
    }

    /// Number of top-level modes: 1 for a leaf, the length for a tuple.
    pub fn rank(&self) -> usize {
        self.modes().len()
    }

    /// Nesting depth: 0 for a leaf, 1 + the deepest element for a tuple.
    pub fn depth(&self) -> usize {
        match self {
            IntTuple::Int(_) => 0,
            IntTuple::Tuple(items) => 1 + items.iter().map(IntTuple::depth).max().unwrap_or(0),
        }
    }

    /// Product of the leaves (1 for the empty tuple); saturates at `i64`'s bounds.
    pub fn size(&self) -> i64 {
        self.leaves().into_iter().fold(1, i64::saturating_mul)
    }

    /// The leaves in order, left to right.
    pub fn leaves(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves(&self, out: &mut Vec<i64>) {
        match self {
            IntTuple::Int(n) => out.push(*n),
            IntTuple::Tuple(items) => items.iter().for_each(|t| t.collect_leaves(out)),
        }
    }

    /// A leaf stays a leaf; a tuple becomes the flat tuple of its leaves.
    pub fn flatten(&self) -> IntTuple {
        match self {
            IntTuple::Int(_) => self.clone(),
            IntTuple::Tuple(_) => IntTuple::flat(&self.leaves()),
        }
    }

    /// Same tree: leaves where `other` has leaves, tuples of equal rank elsewhere.
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// `self ≼ other`: sizes agree and every leaf of `self` stands for a
    /// subtree of `other` of the same size, so coordinates of `self` are
    /// coordinates of `other`.
    pub fn compatible(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(a), _) => *a == other.size(),
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            (IntTuple::Tuple(_), IntTuple::Int(_)) => false,
        }
    }

    /// Exclusive prefix products of the leaves, left to right, starting at
    /// `init`: the column-major (LayoutLeft) strides of a shape.
    /// `(2,(3,4))` gives `(1,(2,6))`.
    pub fn prefix_product(&self, init: i64) -> IntTuple {
        let mut acc = init;
        self.map_leaves(&mut |s| {
            let here = acc;
            acc = acc.saturating_mul(s);
            here
        })
    }

    /// Exclusive suffix products of the leaves, right to left: the row-major
    /// (LayoutRight) strides of a shape. `(2,(3,4))` gives `(12,(4,1))`.
    pub fn suffix_product(&self, init: i64) -> IntTuple {
        let leaves = self.leaves();
        let mut strides = vec![0; leaves.len()];
        let mut acc = init;
        for (i, s) in leaves.iter().enumerate().rev() {
            strides[i] = acc;
            acc = acc.saturating_mul(*s);
        }
        self.with_leaves(&strides)
    }

    /// Σ aᵢ·bᵢ over the leaves of two congruent int-tuples.
    pub fn inner_product(&self, other: &IntTuple) -> Result<i64> {
        if !self.congruent(other) {
            return Err(LayoutError::NotCongruent {
                op: "inner_product",
                left: self.to_string(),
                right: other.to_string(),
            });
        }
        self.leaves()
            .iter()
            .zip(other.leaves())
            .try_fold(0i64, |acc, (a, b)| acc.checked_add(a.checked_mul(b)?))
            .ok_or_else(|| LayoutError::Overflow {
                op: "inner_product",
                detail: format!("{self} · {other}"),
            })
    }

    /// The same tree with every leaf replaced by `f(leaf)`, left to right.
    pub fn map_leaves(&self, f: &mut impl FnMut(i64) -> i64) -> IntTuple {
        match self {
            IntTuple::Int(n) => IntTuple::Int(f(*n)),
            IntTuple::Tuple(items) => {
                IntTuple::Tuple(items.iter().map(|t| t.map_leaves(f)).collect())
            }
        }
    }

    /// The same tree with the leaves taken from `leaves` in order.
    ///
    /// `leaves` must hold at least as many values as `self` has leaves.
    pub(crate) fn with_leaves(&self, leaves: &[i64]) -> IntTuple {
        let mut next = leaves.iter().copied();
        self.map_leaves(&mut |old| next.next().unwrap_or(old))
    }

    pub(crate) fn parse_from(cursor: &mut Cursor<'_>) -> Result<IntTuple> {
        if cursor.looking_at("(") {
            Ok(IntTuple::Tuple(cursor.tuple(IntTuple::parse_from)?))
        } else {
            Ok(IntTuple::Int(cursor.int()?))
        }
    }
}

/// `a / b` for shapes, CuTe's `shape_div`.
///
/// For integers: `a / b` if `b` divides `a`, else `sign(a·b)` if `a`
/// divides `b` (that is ⌈a/b⌉ for positive operands); any other pair is an
/// error. A tuple divided by an integer folds left to right,
/// `(a₀,a₁,…) / b = (a₀ / b, a₁ / (b / a₀), …)`; an integer divided by a
/// tuple divides by the tuple's size; two tuples divide mode by mode.
///
/// ```
/// use tile_ir::layout::{shape_div, IntTuple};
/// let s: IntTuple = "(3,6,2,8)".parse().unwrap();
/// assert_eq!(shape_div(&s, &IntTuple::Int(72)).unwrap().to_string(), "(1,1,1,4)");
/// assert_eq!(shape_div(&s, &IntTuple::Int(9)).unwrap().to_string(), "(1,2,2,8)");
/// assert!(shape_div(&IntTuple::Int(6), &IntTuple::Int(4)).is_err());
/// ```
pub fn shape_div(a: &IntTuple, b: &IntTuple) -> Result<IntTuple> {
    match (a, b) {
        (IntTuple::Int(x), IntTuple::Int(y)) => Ok(IntTuple::Int(shape_div_int(*x, *y)?)),
        (IntTuple::Int(x), IntTuple::Tuple(_)) => Ok(IntTuple::Int(shape_div_int(*x, b.size())?)),
        (IntTuple::Tuple(xs), IntTuple::Tuple(ys)) => {
            if xs.len() != ys.len() {
                return Err(LayoutError::NotCongruent {
                    op: "shape_div",
                    left: a.to_string(),
                    right: b.to_string(),
                });
            }
            let items = xs.iter().zip(ys).map(|(x, y)| shape_div(x, y));
            Ok(IntTuple::Tuple(items.collect::<Result<_>>()?))
        }
        (IntTuple::Tuple(xs), IntTuple::Int(_)) => {
            let mut rest = b.clone();
            let mut items = Vec::with_capacity(xs.len());
            for x in xs {
                items.push(shape_div(x, &rest)?);
                rest = shape_div(&rest, x)?;
            }
            Ok(IntTuple::Tuple(items))
        }
    }
}

/// [`shape_div`] on integers.
pub(crate) fn shape_div_int(a: i64, b: i64) -> Result<i64> {
    if let (Some(0), Some(quotient)) = (a.checked_rem(b), a.checked_div(b)) {
        Ok(quotient)
    } else if b != 0 && b.checked_rem(a) == Some(0) {
        Ok(a.signum() * b.signum())
    } else {
        Err(LayoutError::ShapeDiv { a, b })
    }
}

/// Debug output is the text form, so failing tests print `(4,2):(1,4)`.
impl fmt::Debug for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(n) => write!(f, "{n}"),
            IntTuple::Tuple(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl FromStr for IntTuple {
    type Err = LayoutError;

    fn from_str(s: &str) -> Result<Self> {
        parse_all(s, IntTuple::parse_from)
    }
}
