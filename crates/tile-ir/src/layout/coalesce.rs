//! `coalesce`: the simplest layout with the same function on its domain.

use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;

/// The layout with the fewest flat modes that equals `layout` as a
/// function on `0..size`.
///
/// Flatten, then combine neighbours from the back: size-1 modes vanish and
/// `s₀:d₀ ++ s₁:s₀·d₀ ⇒ s₀·s₁:d₀`. The result has depth ≤ 1, a single mode is
/// returned as an integral layout and an empty result is `1:0`.
///
/// ```
/// use tile_ir::layout::{coalesce, Layout};
/// let l: Layout = "(2,(1,6)):(1,(6,2))".parse().unwrap();
/// assert_eq!(coalesce(&l).to_string(), "12:1");
/// ```
pub fn coalesce(layout: &Layout) -> Layout {
    from_modes(&coalesce_modes(layout, false))
}

/// [`coalesce`] applied at the leaves of `profile`: a tuple profile
/// coalesces mode by mode (modes past its rank are kept as they are), an
/// integer coalesces the whole (sub)layout.
///
/// ```
/// use tile_ir::layout::{coalesce_by, Layout};
/// let l: Layout = "(2,(1,6)):(1,(6,2))".parse().unwrap();
/// let by_mode = coalesce_by(&l, &"(1,1)".parse().unwrap()).unwrap();
/// assert_eq!(by_mode.to_string(), "(2,6):(1,2)");
/// ```
pub fn coalesce_by(layout: &Layout, profile: &IntTuple) -> Result<Layout> {
    match profile {
        IntTuple::Int(_) => Ok(coalesce(layout)),
        IntTuple::Tuple(items) => {
            if items.len() > layout.rank() {
                return Err(LayoutError::rule(
                    "coalesce",
                    "the profile has more modes than the layout",
                    format!("profile {profile} for {layout}"),
                ));
            }
            let modes = layout.modes();
            let mut out = Vec::with_capacity(modes.len());
            for (k, mode) in modes.iter().enumerate() {
                out.push(match items.get(k) {
                    Some(p) => coalesce_by(mode, p)?,
                    None => mode.clone(),
                });
            }
            Ok(Layout::concat(&out))
        }
    }
}

/// The coalesced flat modes `(shape, stride)` of `layout`, front to back.
///
/// With `keep_extension`, a trailing size-1 mode is treated as size 2 so
/// that the result also agrees with `layout` past its size (where the last
/// mode keeps counting); only the last extent is then meaningless.
pub(crate) fn coalesce_modes(layout: &Layout, keep_extension: bool) -> Vec<(i64, i64)> {
    let shapes = layout.shape().leaves();
    let strides = layout.stride().leaves();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(shapes.len());
    for (k, (&s, &d)) in shapes.iter().zip(&strides).enumerate().rev() {
        let s = if keep_extension && k + 1 == shapes.len() && s == 1 {
            2
        } else {
            s
        };
        match out.last_mut() {
            _ if s == 1 => {}
            Some(front) if s.checked_mul(d) == Some(front.1) => *front = (s * front.0, d),
            _ => out.push((s, d)),
        }
    }
    out.reverse();
    out
}

/// The layout of flat modes: `1:0` if none, integral if one.
pub(crate) fn from_modes(modes: &[(i64, i64)]) -> Layout {
    match modes {
        [] => Layout::from_parts(IntTuple::Int(1), IntTuple::Int(0)),
        [(s, d)] => Layout::from_parts(IntTuple::Int(*s), IntTuple::Int(*d)),
        _ => Layout::from_parts(
            IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.0)).collect()),
            IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.1)).collect()),
        ),
    }
}
