//! Tilers: the right operand of by-mode composition, divides and products.

use std::fmt;
use std::str::FromStr;

use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;
use super::parse::{parse_all, Cursor};

/// A layout, or a tuple of tilers applied mode by mode, written
/// `<3:4, 8:2>`. A shape is the tiler of stride-1 layouts: `(3,8)` means
/// `<3:1, 8:1>`.
///
/// ```
/// use tile_ir::layout::Tiler;
/// let t: Tiler = "<3:3, (2,4):(1,8)>".parse().unwrap();
/// assert_eq!(t.to_string(), "<3:3,(2,4):(1,8)>");
/// assert_eq!("(3,8)".parse::<Tiler>().unwrap().to_string(), "<3:1,8:1>");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Tiler {
    /// Applied to the whole (sub)layout as a 1-D function.
    Layout(Layout),
    /// Element `k` applies to mode `k`; later modes are left alone.
    Modes(Vec<Tiler>),
}

impl Tiler {
    /// The tiler of a shape: an integer `n` is the layout `n:1`, a tuple is
    /// by-mode.
    pub fn from_shape(shape: &IntTuple) -> Result<Tiler> {
        match shape {
            IntTuple::Int(n) => Ok(Tiler::Layout(Layout::strided(*n, 1)?)),
            IntTuple::Tuple(items) => Ok(Tiler::Modes(
                items.iter().map(Tiler::from_shape).collect::<Result<_>>()?,
            )),
        }
    }

    fn parse_from(cursor: &mut Cursor<'_>) -> Result<Tiler> {
        if cursor.eat("<") {
            let mut items = vec![Tiler::parse_from(cursor)?];
            while cursor.eat(",") {
                items.push(Tiler::parse_from(cursor)?);
            }
            cursor.expect(">", "`,` or `>`")?;
            return Ok(Tiler::Modes(items));
        }
        let shape = IntTuple::parse_from(cursor)?;
        if cursor.eat(":") {
            let stride = IntTuple::parse_from(cursor)?;
            Ok(Tiler::Layout(Layout::new(shape, stride)?))
        } else {
            Tiler::from_shape(&shape)
        }
    }

    /// Checks that a by-mode tiler has no more modes than `layout`.
    pub(crate) fn check_rank(items: &[Tiler], layout: &Layout, op: &'static str) -> Result<()> {
        if items.len() <= layout.rank() {
            Ok(())
        } else {
            Err(LayoutError::rule(
                op,
                "the tiler has more modes than the layout",
                format!("{} modes for {layout}", items.len()),
            ))
        }
    }

    /// Applies `f` to each mode of `layout` and its tiler element, keeping
    /// the modes past the tiler's rank (CuTe's `transform_layout`).
    pub(crate) fn by_mode(
        items: &[Tiler],
        layout: &Layout,
        op: &'static str,
        f: impl Fn(&Layout, &Tiler) -> Result<Layout>,
    ) -> Result<Layout> {
        Tiler::check_rank(items, layout, op)?;
        let modes = layout.modes();
        let mut out = Vec::with_capacity(modes.len());
        for (k, mode) in modes.iter().enumerate() {
            out.push(match items.get(k) {
                Some(t) => f(mode, t)?,
                None => mode.clone(),
            });
        }
        Ok(Layout::concat(&out))
    }
}

impl From<Layout> for Tiler {
    fn from(layout: Layout) -> Self {
        Tiler::Layout(layout)
    }
}

/// Debug output is the text form, so failing tests print `(4,2):(1,4)`.
impl fmt::Debug for Tiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Tiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Layout(l) => write!(f, "{l}"),
            Tiler::Modes(items) => {
                f.write_str("<")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(">")
            }
        }
    }
}

impl FromStr for Tiler {
    type Err = LayoutError;

    fn from_str(s: &str) -> Result<Self> {
        parse_all(s, Tiler::parse_from)
    }
}
