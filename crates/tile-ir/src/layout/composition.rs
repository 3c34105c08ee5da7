//! Functional composition `R = A ∘ B`, `R(i) = A(B(i))`.

use super::coalesce::coalesce_modes;
use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;
use super::tiler::Tiler;

/// `A ∘ B` as one layout: `R(i) = A(B(i))` for every `i` in `0..size(B)`,
/// and `R`'s shape is compatible with `B`'s.
///
/// Composition distributes over the modes of `B`, so take `B = s:d`. With
/// `A` coalesced to flat modes `(s₀,…,sₙ):(d₀,…,dₙ)`, first *divide out*
/// the stride `d` from the shape of `A` from the left (`(6,2) / 3 = (2,2)`,
/// scaling the strides that are skipped), then *mod out* `s` elements
/// (`(2,2) % 4 = (2,2)`). The last mode of `A` absorbs whatever is left.
///
/// Fails when `A ∘ B` is not a layout: a stride divisibility condition
/// (`d` must divide or be a multiple of each extent of `A` it passes,
/// unless the mode ends inside that extent), a shape divisibility
/// condition (the remaining `s` must be a multiple of each extent it
/// spans), or a carry between modes of `B` (their offsets must add up
/// within each extent boundary of `A`, or `A(x + y) ≠ A(x) + A(y)`).
/// Negative strides in `B` are refused.
///
/// ```
/// use tile_ir::layout::{composition, Layout};
/// let a: Layout = "(6,2):(8,2)".parse().unwrap();
/// let b: Layout = "(4,3):(3,1)".parse().unwrap();
/// let r = composition(&a, &b).unwrap();
/// assert_eq!(r.to_string(), "((2,2),3):((24,2),8)");
/// assert_eq!((0..12).map(|i| r.call(i)).collect::<Vec<_>>(),
///            [0, 24, 2, 26, 8, 32, 10, 34, 16, 40, 18, 42]);
/// ```
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout> {
    let lhs = coalesce_modes(a, true);
    let fail =
        |rule, detail| LayoutError::rule("composition", rule, format!("{a} ∘ {b}: {detail}"));
    let result = compose_tree(&lhs, b.shape(), b.stride(), &fail)?;
    check_no_carry(&lhs, b, &fail)?;
    Ok(result)
}

/// Composition distributes over the modes of `B` only if adding their
/// offsets never carries across an extent boundary `p` of `A` (a prefix
/// product of its coalesced extents): for every such `p`,
/// `Σₖ max_c (c·dₖ mod p) < p`. Then `A(Σ xₖ) = Σ A(xₖ)`.
fn check_no_carry(lhs: &[(i64, i64)], b: &Layout, fail: &Fail<'_>) -> Result<()> {
    let modes: Vec<(i64, i64)> = b
        .shape()
        .leaves()
        .into_iter()
        .zip(b.stride().leaves())
        .filter(|&(s, d)| s > 1 && d > 0)
        .collect();
    if modes.len() < 2 {
        return Ok(());
    }
    let mut boundary = 1i64;
    for &(extent, _) in lhs.iter().take(lhs.len().saturating_sub(1)) {
        boundary = boundary.saturating_mul(extent);
        let reach = modes.iter().fold(0i64, |acc, &(s, d)| {
            acc.saturating_add(max_residue(s, d, boundary))
        });
        if reach >= boundary {
            return Err(fail(
                "the right operand's modes carry across an extent boundary of the left operand",
                format!("their offsets modulo {boundary} add up to {reach}"),
            ));
        }
    }
    Ok(())
}

/// An upper bound of `c·d mod p` over `c` in `0..s`, exact unless the
/// multiples of `d` wrap around `p` without `d` dividing `p`.
fn max_residue(s: i64, d: i64, p: i64) -> i64 {
    if d % p == 0 {
        0
    } else if p % d == 0 {
        (s - 1).min(p / d - 1) * d
    } else {
        let straight = (s - 1).saturating_mul(d);
        if straight < p {
            straight
        } else {
            p - gcd(d, p)
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Composition with a tiler: a layout composes as a 1-D function (see
/// [`composition`]); a tuple `<B₀,B₁,…>` composes mode by mode,
/// `A ∘ <B₀,B₁> = (A₀ ∘ B₀, A₁ ∘ B₁)`, leaving later modes of `A` alone.
///
/// ```
/// use tile_ir::layout::{composition_tiler, Layout};
/// let a: Layout = "(12,(4,8)):(59,(13,1))".parse().unwrap();
/// let r = composition_tiler(&a, &"<3:4, 8:2>".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "(3,(2,4)):(236,(26,1))");
/// let r = composition_tiler(&a, &"(3,8)".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "(3,(4,2)):(59,(13,1))");
/// ```
pub fn composition_tiler(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    match tiler {
        Tiler::Layout(b) => composition(a, b),
        Tiler::Modes(items) => Tiler::by_mode(items, a, "composition", composition_tiler),
    }
}

type Fail<'a> = dyn Fn(&'static str, String) -> LayoutError + 'a;

/// Composes the flat modes `lhs` with the sub-layout `shape:stride` of `B`.
fn compose_tree(
    lhs: &[(i64, i64)],
    shape: &IntTuple,
    stride: &IntTuple,
    fail: &Fail<'_>,
) -> Result<Layout> {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => compose_mode(lhs, *s, *d, fail),
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let parts = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| compose_tree(lhs, s, d, fail));
            Ok(Layout::concat(&parts.collect::<Result<Vec<_>>>()?))
        }
        _ => Err(fail(
            "the right operand's shape and stride are not congruent",
            format!("{shape}:{stride}"),
        )),
    }
}

/// Composes the flat modes `lhs` with the rank-1 layout `s:d`.
fn compose_mode(lhs: &[(i64, i64)], s: i64, d: i64, fail: &Fail<'_>) -> Result<Layout> {
    if d == 0 {
        return Layout::strided(s, 0);
    }
    if d < 0 {
        return Err(fail(
            "negative strides in the right operand are not supported",
            format!("mode {s}:{d}"),
        ));
    }
    let Some((&(_, last_stride), init)) = lhs.split_last() else {
        return Layout::strided(s, 0);
    };
    let mut shapes = Vec::new();
    let mut strides = Vec::new();
    let (mut rest_shape, mut rest_stride) = (s, d);
    for &(cs, cd) in init {
        let next_shape = ceil_div(cs, rest_stride);
        let next_stride = ceil_div(rest_stride, cs);
        if rest_shape == 1 || next_shape == 1 {
            if rest_shape > 1 && rest_stride % cs != 0 {
                return Err(fail(
                    "stride divisibility condition fails",
                    format!(
                        "stride {rest_stride} is neither a divisor nor a multiple of extent {cs}"
                    ),
                ));
            }
            rest_stride = next_stride;
            continue;
        }
        if rest_shape > next_shape {
            if cs % rest_stride != 0 {
                return Err(fail(
                    "stride divisibility condition fails",
                    format!(
                        "stride {rest_stride} is neither a divisor nor a multiple of extent {cs}"
                    ),
                ));
            }
            if rest_shape % next_shape != 0 {
                return Err(fail(
                    "shape divisibility condition fails",
                    format!("{rest_shape} elements do not split into whole runs of {next_shape}"),
                ));
            }
        }
        let new_shape = next_shape.min(rest_shape);
        shapes.push(new_shape);
        strides.push(
            rest_stride
                .checked_mul(cd)
                .ok_or_else(|| fail("overflow", format!("stride {rest_stride}·{cd}")))?,
        );
        rest_shape /= new_shape;
        rest_stride = next_stride;
    }
    let tail_stride = rest_stride
        .checked_mul(last_stride)
        .ok_or_else(|| fail("overflow", format!("stride {rest_stride}·{last_stride}")))?;
    if shapes.is_empty() {
        return Layout::strided(rest_shape, tail_stride);
    }
    if rest_shape != 1 {
        shapes.push(rest_shape);
        strides.push(tail_stride);
    }
    if let ([one_shape], [one_stride]) = (shapes.as_slice(), strides.as_slice()) {
        return Layout::strided(*one_shape, *one_stride);
    }
    Layout::new(IntTuple::flat(&shapes), IntTuple::flat(&strides))
}

/// ⌈a / b⌉ for positive `a` and `b`.
fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}
