//! Coordinates with free modes, and slicing a layout with them.

use std::fmt;
use std::str::FromStr;

use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::{crd2idx, Layout};
use super::parse::{parse_all, Cursor};

/// A coordinate whose modes may be left free, like CuTe's `_`:
/// `(_,2)` fixes mode 1 to 2 and keeps mode 0.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Coord {
    /// A free mode, written `_`: kept by [`Layout::slice`].
    Free,
    /// A fixed coordinate (1-D within its mode).
    Int(i64),
    /// A tuple of coordinates.
    Tuple(Vec<Coord>),
}

impl Coord {
    fn parse_from(cursor: &mut Cursor<'_>) -> Result<Coord> {
        if cursor.looking_at("(") {
            return Ok(Coord::Tuple(cursor.tuple(Coord::parse_from)?));
        }
        if cursor.eat_free() {
            Ok(Coord::Free)
        } else {
            Ok(Coord::Int(cursor.int()?))
        }
    }

    /// The coordinate with every free mode set to 0.
    fn zero_free(&self) -> IntTuple {
        match self {
            Coord::Free => IntTuple::Int(0),
            Coord::Int(n) => IntTuple::Int(*n),
            Coord::Tuple(items) => IntTuple::Tuple(items.iter().map(Coord::zero_free).collect()),
        }
    }
}

impl Layout {
    /// The sublayout of the free modes of `coord` (CuTe's `slice`).
    ///
    /// Every free mode keeps its sub-layout; the kept sub-layouts form the
    /// modes of the result, left to right, and a single one is returned
    /// unwrapped. A fully fixed coordinate leaves the rank-0 layout `():()`.
    ///
    /// ```
    /// use tile_ir::layout::Layout;
    /// let l: Layout = "((2,3),4):((1,2),6)".parse().unwrap();
    /// assert_eq!(l.slice(&"(_,2)".parse().unwrap()).unwrap().to_string(), "(2,3):(1,2)");
    /// assert_eq!(l.slice(&"((_,1),_)".parse().unwrap()).unwrap().to_string(), "(2,4):(1,6)");
    /// ```
    pub fn slice(&self, coord: &Coord) -> Result<Layout> {
        if let Coord::Free = coord {
            return Ok(self.clone());
        }
        let mut kept = Vec::new();
        collect_free(coord, self, &mut kept)?;
        Ok(match <[Layout; 1]>::try_from(kept) {
            Ok([one]) => one,
            Err(kept) => Layout::concat(&kept),
        })
    }

    /// [`Layout::slice`] together with the offset of `coord` with its free
    /// modes at 0, so that `L(c) = offset + slice(c)(free part of c)`.
    pub fn slice_and_offset(&self, coord: &Coord) -> Result<(Layout, i64)> {
        let sliced = self.slice(coord)?;
        let offset = crd2idx(&coord.zero_free(), self.shape(), self.stride())?;
        Ok((sliced, offset))
    }
}

fn collect_free(coord: &Coord, layout: &Layout, kept: &mut Vec<Layout>) -> Result<()> {
    match coord {
        Coord::Free => kept.push(layout.clone()),
        Coord::Int(_) => {}
        Coord::Tuple(items) => {
            if layout.shape().as_int().is_some() || items.len() != layout.rank() {
                return Err(LayoutError::rule(
                    "slice",
                    "a tuple coordinate needs a layout of the same rank",
                    format!("coordinate {coord} for {layout}"),
                ));
            }
            for (item, mode) in items.iter().zip(layout.modes()) {
                collect_free(item, &mode, kept)?;
            }
        }
    }
    Ok(())
}

/// Debug output is the text form, so failing tests print `(4,2):(1,4)`.
impl fmt::Debug for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Coord::Free => f.write_str("_"),
            Coord::Int(n) => write!(f, "{n}"),
            Coord::Tuple(items) => {
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

impl FromStr for Coord {
    type Err = LayoutError;

    fn from_str(s: &str) -> Result<Self> {
        parse_all(s, Coord::parse_from)
    }
}
