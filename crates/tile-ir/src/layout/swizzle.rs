//! Swizzles (CuTe's `Swizzle<B,M,S>`) and swizzled layouts.

use std::fmt;
use std::str::FromStr;

use super::composition::composition_tiler;
use super::coord::Coord;
use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;
use super::parse::{parse_all, Cursor};
use super::tiler::Tiler;

/// A bit permutation of offsets: `bits` bits starting at bit
/// `base + max(shift, 0)` (the "YYY" mask) are XOR-ed into the bits
/// starting at `base - min(shift, 0)` (the "ZZZ" mask).
///
/// `apply(x) = x ^ ((x & yyy) >> shift)` (a left shift for negative
/// `shift`). The `base` low bits are never touched, and since the YYY bits
/// are not changed, applying twice is the identity.
///
/// ```
/// use tile_ir::layout::Swizzle;
/// let sw = Swizzle::new(2, 0, 2).unwrap();            // Sw<2,0,2>
/// assert_eq!((sw.yyy_mask(), sw.zzz_mask()), (0b1100, 0b0011));
/// assert_eq!((0..8).map(|x| sw.apply(x)).collect::<Vec<_>>(), [0, 1, 2, 3, 5, 4, 7, 6]);
/// assert_eq!(sw.to_string(), "Sw<2,0,2>");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Swizzle {
    bits: u32,
    base: u32,
    shift: i32,
}

impl Swizzle {
    /// `Sw<bits,base,shift>`; fails unless `|shift| ≥ bits` (the masks must
    /// not overlap) and all masks fit in 62 bits.
    pub fn new(bits: u32, base: u32, shift: i32) -> Result<Swizzle> {
        let fail =
            |rule| LayoutError::rule("Swizzle::new", rule, format!("Sw<{bits},{base},{shift}>"));
        if shift.unsigned_abs() < bits {
            return Err(fail("|shift| must be at least bits"));
        }
        if u64::from(bits) + u64::from(base) + u64::from(shift.unsigned_abs()) > 62 {
            return Err(fail("the masks must fit in 62 bits"));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// The number of bits XOR-ed (CuTe's `B`).
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The number of low bits left alone (CuTe's `M`).
    pub fn base(&self) -> u32 {
        self.base
    }

    /// The distance from the YYY bits down to the ZZZ bits (CuTe's `S`).
    pub fn shift(&self) -> i32 {
        self.shift
    }

    /// The source bits, `(2^bits - 1) << (base + max(shift, 0))`.
    pub fn yyy_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base + self.shift.max(0).unsigned_abs())
    }

    /// The target bits, `(2^bits - 1) << (base - min(shift, 0))`.
    pub fn zzz_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base + self.shift.min(0).unsigned_abs())
    }

    /// The swizzled offset `x ^ ((x & yyy) >> shift)`.
    pub fn apply(&self, offset: i64) -> i64 {
        let moved = offset & self.yyy_mask();
        let moved = if self.shift >= 0 {
            moved >> self.shift.unsigned_abs()
        } else {
            moved << self.shift.unsigned_abs()
        };
        offset ^ moved
    }

    fn parse_from(cursor: &mut Cursor<'_>) -> Result<Swizzle> {
        cursor.expect("Sw<", "`Sw<`")?;
        let bits = cursor.int_as("a swizzle bit count in 0..2^32")?;
        cursor.expect(",", "`,`")?;
        let base = cursor.int_as("a swizzle base in 0..2^32")?;
        cursor.expect(",", "`,`")?;
        let shift = cursor.int_as("a swizzle shift that fits in 32 bits")?;
        cursor.expect(">", "`>`")?;
        Swizzle::new(bits, base, shift)
    }
}

/// Debug output is the text form, `Sw<3,4,3>`.
impl fmt::Debug for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

impl FromStr for Swizzle {
    type Err = LayoutError;

    fn from_str(s: &str) -> Result<Self> {
        parse_all(s, Swizzle::parse_from)
    }
}

/// `swizzle ∘ offset ∘ layout`: `C(i) = swizzle(offset + layout(i))`,
/// CuTe's `ComposedLayout` with a swizzle outside, written
/// `Sw<3,4,3> o 0 o (8,64):(64,1)`.
///
/// ```
/// use tile_ir::layout::ComposedLayout;
/// let c: ComposedLayout = "Sw<1,0,2> o 0 o (2,4):(4,1)".parse().unwrap();
/// assert_eq!((0..8).map(|i| c.call(i)).collect::<Vec<_>>(), [0, 5, 1, 4, 2, 7, 3, 6]);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ComposedLayout {
    swizzle: Swizzle,
    offset: i64,
    layout: Layout,
}

impl ComposedLayout {
    /// `swizzle ∘ offset ∘ layout`.
    pub fn new(swizzle: Swizzle, offset: i64, layout: Layout) -> ComposedLayout {
        ComposedLayout {
            swizzle,
            offset,
            layout,
        }
    }

    /// The outer swizzle.
    pub fn swizzle(&self) -> Swizzle {
        self.swizzle
    }

    /// The offset added before swizzling.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The inner layout (the domain).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The size of the domain, that of the inner layout.
    pub fn size(&self) -> i64 {
        self.layout.size()
    }

    /// `swizzle(offset + layout(idx))`.
    pub fn call(&self, idx: i64) -> i64 {
        self.swizzle
            .apply(self.offset.wrapping_add(self.layout.call(idx)))
    }

    /// `swizzle(offset + layout(coord))` for any coordinate form
    /// [`Layout::crd2idx`] accepts.
    pub fn crd2idx(&self, coord: &IntTuple) -> Result<i64> {
        Ok(self
            .swizzle
            .apply(self.offset.wrapping_add(self.layout.crd2idx(coord)?)))
    }

    /// Slices the inner layout; the offset of the fixed modes moves inside
    /// the swizzle, `swizzle ∘ (offset + L(c_fixed)) ∘ slice(L, c)`.
    ///
    /// ```
    /// use tile_ir::layout::ComposedLayout;
    /// let c: ComposedLayout = "Sw<3,0,3> o 0 o (8,8):(8,1)".parse().unwrap();
    /// let row = c.slice(&"(5,_)".parse().unwrap()).unwrap();
    /// assert_eq!(row.to_string(), "Sw<3,0,3> o 40 o 8:1");
    /// assert_eq!(row.call(2), c.crd2idx(&"(5,2)".parse().unwrap()).unwrap());
    /// ```
    pub fn slice(&self, coord: &Coord) -> Result<ComposedLayout> {
        let (layout, offset) = self.layout.slice_and_offset(coord)?;
        let offset = self
            .offset
            .checked_add(offset)
            .ok_or_else(|| LayoutError::Overflow {
                op: "ComposedLayout::slice",
                detail: format!("offset of {coord} in {self}"),
            })?;
        Ok(ComposedLayout::new(self.swizzle, offset, layout))
    }

    /// `(swizzle ∘ offset ∘ L) ∘ T = swizzle ∘ offset ∘ (L ∘ T)`: tiling
    /// happens in the inner layout, the swizzle stays outside.
    ///
    /// ```
    /// use tile_ir::layout::ComposedLayout;
    /// let c: ComposedLayout = "Sw<1,0,2> o 0 o (2,4):(4,1)".parse().unwrap();
    /// let t = c.compose(&"<2:1, 2:2>".parse().unwrap()).unwrap();
    /// assert_eq!(t.to_string(), "Sw<1,0,2> o 0 o (2,2):(4,2)");
    /// ```
    pub fn compose(&self, tiler: &Tiler) -> Result<ComposedLayout> {
        Ok(ComposedLayout::new(
            self.swizzle,
            self.offset,
            composition_tiler(&self.layout, tiler)?,
        ))
    }
}

/// Debug output is the text form, so failing tests print `(4,2):(1,4)`.
impl fmt::Debug for ComposedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ComposedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
    }
}

impl FromStr for ComposedLayout {
    type Err = LayoutError;

    fn from_str(s: &str) -> Result<Self> {
        parse_all(s, |cursor| {
            let swizzle = Swizzle::parse_from(cursor)?;
            cursor.expect("o", "`o` after the swizzle")?;
            let offset = cursor.int()?;
            cursor.expect("o", "`o` after the offset")?;
            let layout = Layout::parse_from(cursor)?;
            Ok(ComposedLayout::new(swizzle, offset, layout))
        })
    }
}
