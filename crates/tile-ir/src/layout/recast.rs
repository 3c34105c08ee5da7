//! Changing the element granularity of a layout: upcast, downcast, recast.

use super::error::{LayoutError, Result};
use super::int_tuple::shape_div_int;
use super::layout::Layout;

/// The layout in units of `factor` old elements: every `factor`
/// consecutive offsets become one.
///
/// Per leaf mode `s:d`: `d = 0` stays, otherwise
/// `s:d ↦ shape_div(s, shape_div(factor, |d|)) : shape_div(d, factor)`.
/// So a stride-1 mode shrinks by `factor` and other strides are divided
/// by it. Fails if a `shape_div` does not divide evenly either way.
///
/// ```
/// use tile_ir::layout::{upcast, Layout};
/// let l = Layout::row_major("(4,8)".parse().unwrap()).unwrap();
/// assert_eq!(upcast(&l, 2).unwrap().to_string(), "(4,4):(4,1)");
/// ```
pub fn upcast(layout: &Layout, factor: i64) -> Result<Layout> {
    check_factor("upcast", layout, factor)?;
    let shapes = layout.shape().leaves();
    let strides = layout.stride().leaves();
    let mut new_shapes = Vec::with_capacity(shapes.len());
    let mut new_strides = Vec::with_capacity(strides.len());
    for (&s, &d) in shapes.iter().zip(&strides) {
        let (s2, d2) = if d == 0 {
            (s, 0)
        } else {
            let fail = |e: LayoutError| {
                LayoutError::rule(
                    "upcast",
                    "shape_div condition fails",
                    format!("mode {s}:{d} of {layout} by {factor}: {e}"),
                )
            };
            let stride = shape_div_int(d, factor).map_err(fail)?;
            let per = shape_div_int(factor, d.abs()).map_err(fail)?;
            (shape_div_int(s, per).map_err(fail)?, stride)
        };
        new_shapes.push(s2);
        new_strides.push(d2);
    }
    Layout::new(
        layout.shape().with_leaves(&new_shapes),
        layout.stride().with_leaves(&new_strides),
    )
}

/// The layout in units of `1/factor` old elements: each element splits
/// into `factor` consecutive ones.
///
/// Per leaf mode `s:d`: a stride `±1` mode grows, `s:±1 ↦ s·factor:±1`;
/// any other stride is multiplied, `s:d ↦ s:d·factor`. Fails if no mode
/// has stride ±1 (the new sub-elements would not be adjacent).
///
/// ```
/// use tile_ir::layout::{downcast, Layout};
/// let l: Layout = "(4,4):(4,1)".parse().unwrap();
/// assert_eq!(downcast(&l, 2).unwrap().to_string(), "(4,8):(8,1)");
/// ```
pub fn downcast(layout: &Layout, factor: i64) -> Result<Layout> {
    check_factor("downcast", layout, factor)?;
    let strides = layout.stride().leaves();
    if !strides.iter().any(|d| d.abs() == 1) {
        return Err(LayoutError::rule(
            "downcast",
            "a mode with stride 1 is needed so the new elements are adjacent",
            format!("{layout}"),
        ));
    }
    let overflow = || LayoutError::Overflow {
        op: "downcast",
        detail: format!("{layout} by {factor}"),
    };
    let mut new_shapes = layout.shape().leaves();
    let mut new_strides = strides;
    for (s, d) in new_shapes.iter_mut().zip(new_strides.iter_mut()) {
        if d.abs() == 1 {
            *s = s.checked_mul(factor).ok_or_else(overflow)?;
        } else {
            *d = d.checked_mul(factor).ok_or_else(overflow)?;
        }
    }
    Layout::new(
        layout.shape().with_leaves(&new_shapes),
        layout.stride().with_leaves(&new_strides),
    )
}

/// The layout of elements of `old_bits` bits reinterpreted as elements of
/// `new_bits` bits: with `new/old = p/q` in lowest terms, this is
/// `downcast(upcast(layout, p), q)` (either step skipped when its factor
/// is 1).
///
/// ```
/// use tile_ir::layout::{recast, Layout};
/// let l = Layout::row_major("(4,8)".parse().unwrap()).unwrap();
/// assert_eq!(recast(&l, 16, 32).unwrap().to_string(), "(4,4):(4,1)");
/// assert_eq!(recast(&l, 16, 8).unwrap().to_string(), "(4,16):(16,1)");
/// ```
pub fn recast(layout: &Layout, old_bits: u32, new_bits: u32) -> Result<Layout> {
    if old_bits == 0 || new_bits == 0 {
        return Err(LayoutError::rule(
            "recast",
            "element widths must be positive",
            format!("{old_bits} to {new_bits} bits for {layout}"),
        ));
    }
    let g = gcd(old_bits, new_bits);
    let (up, down) = (i64::from(new_bits / g), i64::from(old_bits / g));
    let mut out = layout.clone();
    if up != 1 {
        out = upcast(&out, up)?;
    }
    if down != 1 {
        out = downcast(&out, down)?;
    }
    Ok(out)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn check_factor(op: &'static str, layout: &Layout, factor: i64) -> Result<()> {
    if factor >= 1 {
        Ok(())
    } else {
        Err(LayoutError::rule(
            op,
            "the factor must be at least 1",
            format!("factor {factor} for {layout}"),
        ))
    }
}
