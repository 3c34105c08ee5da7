//! Right and left inverses of layouts.

use super::coalesce::{coalesce, coalesce_modes};
use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;

/// The largest compact `R` with `L(R(i)) = i` for `i` in `0..size(R)`.
///
/// Coalesce `L`, then chain modes by stride: start from stride 1, take the
/// mode with that stride, continue with stride `sₖ·dₖ`. Each taken mode
/// contributes its extent with the stride it has in `L`'s index space
/// (the prefix product of the extents before it). No stride-1 mode gives
/// `1:0`.
///
/// ```
/// use tile_ir::layout::{right_inverse, Layout};
/// let l: Layout = "(4,2):(2,1)".parse().unwrap();
/// let r = right_inverse(&l).unwrap();
/// assert_eq!(r.to_string(), "(2,4):(4,1)");
/// assert!((0..r.size()).all(|i| l.call(r.call(i)) == i));
/// ```
pub fn right_inverse(layout: &Layout) -> Result<Layout> {
    let modes = coalesce_modes(layout, false);
    let prefix = prefix_products(&modes);
    let mut order: Vec<usize> = (0..modes.len()).collect();
    order.sort_by_key(|&k| modes[k].1);
    let mut shapes = vec![1i64];
    let mut strides = vec![0i64];
    let mut want = 1i64;
    for k in order {
        let (s, d) = modes[k];
        if d == want {
            shapes.push(s);
            strides.push(prefix[k]);
            want = s.saturating_mul(d);
        }
    }
    Ok(coalesce(&Layout::new(
        IntTuple::flat(&shapes),
        IntTuple::flat(&strides),
    )?))
}

/// A layout `R` with `R(L(i)) = i` for every `i` in `0..size(L)` when `L`
/// is injective (in general `L(R(L(i))) = L(i)`), defined on
/// `0..cosize(L)` and beyond.
///
/// Coalesce `L` and sort its modes by stride `d₀ ≤ d₁ ≤ …`; skip stride-0
/// modes. Offset `x` of `L` is then read as digits in the mixed radix
/// `(d₀, d₁/d₀, d₂/d₁, …, sₙ)`, and digit `k+1` is scaled by the index
/// stride (prefix product) of mode `k`. Fails unless each stride divides
/// the next (the left-inverse divisibility condition) or a stride is
/// negative. For a layout that is not surjective this is CuTe's
/// quasi-inverse, e.g. `(4,5):(1,5)` gives `(5,5):(1,4)`.
///
/// ```
/// use tile_ir::layout::{left_inverse, Layout};
/// let l: Layout = "(4,5):(1,5)".parse().unwrap();
/// let r = left_inverse(&l).unwrap();
/// assert_eq!(r.to_string(), "(5,5):(1,4)");
/// assert!((0..l.size()).all(|i| r.call(l.call(i)) == i));
/// ```
pub fn left_inverse(layout: &Layout) -> Result<Layout> {
    let modes = coalesce_modes(layout, false);
    if modes.iter().any(|&(_, d)| d < 0) {
        return Err(LayoutError::rule(
            "left_inverse",
            "strides must be non-negative",
            format!("{layout}"),
        ));
    }
    let prefix = prefix_products(&modes);
    let mut order: Vec<usize> = (0..modes.len()).collect();
    order.sort_by_key(|&k| modes[k].1);
    let mut shapes = Vec::with_capacity(modes.len() + 1);
    let mut strides = vec![0i64];
    let mut covered = 1i64;
    for &k in &order {
        let d = modes[k].1;
        if d == 0 {
            continue;
        }
        if d % covered != 0 {
            return Err(LayoutError::rule(
                "left_inverse",
                "left inverse divisibility condition fails",
                format!(
                    "stride {d} of {layout} is not a multiple of the previous stride {covered}"
                ),
            ));
        }
        shapes.push(d / covered);
        strides.push(prefix[k]);
        covered = d;
    }
    shapes.push(order.last().map_or(1, |&k| modes[k].0));
    Ok(coalesce(&Layout::new(
        IntTuple::flat(&shapes),
        IntTuple::flat(&strides),
    )?))
}

/// Exclusive prefix products of the extents of flat modes.
fn prefix_products(modes: &[(i64, i64)]) -> Vec<i64> {
    let mut acc = 1i64;
    modes
        .iter()
        .map(|&(s, _)| {
            let here = acc;
            acc = acc.saturating_mul(s);
            here
        })
        .collect()
}
