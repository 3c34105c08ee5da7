//! `complement(A, M)`: the ordered layout of the offsets `A` leaves out.

use super::coalesce::{coalesce, from_modes};
use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;

/// The complement `R` of `layout` with respect to the cotarget size `M`:
/// `R` has positive increasing strides, `R`'s image meets `A`'s only at 0,
/// and `(A, R)` is a bijection onto `0..size(A)·size(R)` with
/// `size(A)·size(R) ≥ M`.
///
/// Drop the stride-0 and size-1 modes of `A`, sort the rest by stride
/// `(s₀,…,sₙ):(d₀,…,dₙ)`, and fill the holes between them:
/// `R = (d₀, d₁/(s₀d₀), …, dₙ/(sₙ₋₁dₙ₋₁), ⌈M/(sₙdₙ)⌉) : (1, s₀d₀, …, sₙdₙ)`,
/// coalesced.
///
/// Fails if a stride is negative, or smaller than, or not a multiple of,
/// the span `sₖ₋₁dₖ₋₁` of the smaller-stride modes (the layout overlaps
/// itself or interleaves, so no layout fills its holes).
///
/// ```
/// use tile_ir::layout::{complement, Layout};
/// let a: Layout = "4:2".parse().unwrap();
/// assert_eq!(complement(&a, 24).unwrap().to_string(), "(2,3):(1,8)");
/// let a: Layout = "(2,2):(1,6)".parse().unwrap();
/// assert_eq!(complement(&a, 24).unwrap().to_string(), "(3,2):(2,12)");
/// ```
pub fn complement(layout: &Layout, cotarget: i64) -> Result<Layout> {
    let fail = |rule, detail: String| {
        LayoutError::rule(
            "complement",
            rule,
            format!("complement({layout}, {cotarget}): {detail}"),
        )
    };
    if cotarget < 1 {
        return Err(fail(
            "the cotarget must be at least 1",
            format!("cotarget {cotarget}"),
        ));
    }
    let mut modes: Vec<(i64, i64)> = filter(layout);
    if modes.iter().any(|&(_, d)| d < 0) {
        return Err(fail(
            "strides must be non-negative",
            format!("layout {layout}"),
        ));
    }
    modes.sort_by_key(|&(_, d)| d);
    let mut shapes = Vec::with_capacity(modes.len() + 1);
    let mut strides = vec![1i64];
    let mut span = 1i64;
    for &(s, d) in &modes {
        if d < span {
            return Err(fail(
                "the layout is not injective or its modes interleave",
                format!("stride {d} lies inside the span {span} of the modes with smaller strides"),
            ));
        }
        if d % span != 0 {
            return Err(fail(
                "stride divisibility condition fails",
                format!("stride {d} is not a multiple of the span {span} of the modes with smaller strides"),
            ));
        }
        shapes.push(d / span);
        span = d.checked_mul(s).ok_or_else(|| LayoutError::Overflow {
            op: "complement",
            detail: format!("{s}·{d} in {layout}"),
        })?;
        strides.push(span);
    }
    shapes.push(cotarget / span + i64::from(cotarget % span != 0));
    let full = Layout::new(IntTuple::flat(&shapes), IntTuple::flat(&strides))?;
    Ok(coalesce(&full))
}

/// The flat modes of `layout` without stride-0 or size-1 modes, coalesced
/// (CuTe's `filter`).
pub(crate) fn filter(layout: &Layout) -> Vec<(i64, i64)> {
    let shapes = layout.shape().leaves();
    let strides = layout.stride().leaves();
    let kept: Vec<(i64, i64)> = shapes
        .into_iter()
        .zip(strides)
        .filter(|&(s, d)| s > 1 && d != 0)
        .collect();
    let coalesced = coalesce(&from_modes(&kept));
    let shapes = coalesced.shape().leaves();
    shapes
        .into_iter()
        .zip(coalesced.stride().leaves())
        .filter(|&(s, _)| s > 1)
        .collect()
}
