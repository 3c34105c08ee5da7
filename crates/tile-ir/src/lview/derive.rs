//! The layout of each derived view, computed with the layout algebra, how
//! the derived view's runtime base moves, and where its indices fall in the
//! operand's (which gives a masked view's extents).
//!
//! One function, [`fn@derive`], serves both the typing rules (which keep the
//! layout) and the interpreter (which also applies the [`Shift`]), so the
//! two cannot disagree.

use super::LViewOp;
use crate::layout::{coalesce, composition, zipped_divide, IntTuple, Layout, Tiler};
use crate::types::Shape;

/// How a derived view's base offset moves at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shift {
    /// It stays.
    None,
    /// By a constant number of elements.
    Static(i64),
    /// By `layout((i0, i1, ...))`: the op's index operands, one per mode of
    /// `layout`, each a 1-D index into its mode.
    Indexed(Layout),
    /// By `tile((c0, c1, ...))` with thread coordinate
    /// `c_k = (tid / threads.stride_k) mod threads.shape_k` (Mojo's
    /// `distribute`).
    Thread {
        /// The thread layout (every mode integral, stride at least 1).
        threads: Layout,
        /// The layout of one thread tile of the operand view.
        tile: Layout,
    },
}

/// Where the 1-D indices of one mode of a derived view fall in the
/// operand's: index `j` is index `start + step·j` of operand mode `source`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModeMap {
    /// The operand's mode.
    pub source: usize,
    /// The operand index of the mode's index 0.
    pub start: Start,
    /// The operand indices between consecutive indices (at least 1).
    pub step: i64,
}

/// The start of a [`ModeMap`], known when compiling or at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// A constant.
    Static(i64),
    /// Index operand `operand` of the op times `scale`.
    Index {
        /// Which index operand (0 for the first after the view).
        operand: usize,
        /// Its factor.
        scale: i64,
    },
    /// The thread coordinate along mode `mode` of `distribute`'s thread
    /// layout.
    Thread {
        /// The thread layout's mode.
        mode: usize,
    },
}

/// A derived view: its layout, the move of its base and how its modes map
/// to the operand's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derived {
    /// The derived view's layout.
    pub layout: Layout,
    /// How its base differs from the operand's.
    pub shift: Shift,
    /// Per mode of the derived view, where its indices fall in the
    /// operand's; `None` for the ops that regroup elements across modes
    /// (`vectorize`, `reshape`, `compose`, `coalesce`), which a masked view
    /// therefore does not take.
    pub modes: Option<Vec<ModeMap>>,
    /// Whether a tile extent does not divide its mode (an edge tile), so the
    /// derived view is masked even when the operand is not.
    pub edge: bool,
}

/// The extent of a derived mode whose [`ModeMap`] has `start` and `step`,
/// from the operand mode's extent: `⌈(extent − start) / step⌉`, clamped to
/// `[0, size]` for the derived mode's `size`.
pub fn derived_extent(extent: i128, start: i128, step: i64, size: i64) -> i128 {
    let step = i128::from(step.max(1));
    let rest = extent.saturating_sub(start).max(0);
    rest.saturating_add(step - 1)
        .div_euclid(step)
        .min(i128::from(size))
}

/// The thread coordinate of thread `tid` in the thread layout `threads` of
/// `distribute` (every mode integral): `(tid / stride_k) mod shape_k`,
/// Euclidean.
pub fn thread_coordinate(threads: &Layout, tid: i128) -> Vec<i128> {
    threads
        .modes()
        .iter()
        .map(|m| {
            let n = i128::from(m.shape().as_int().unwrap_or(1).max(1));
            let d = i128::from(m.stride().as_int().unwrap_or(1).max(1));
            tid.div_euclid(d).rem_euclid(n)
        })
        .collect()
}

/// The shape of the tile a view of `layout` loads and stores: the size of
/// each top-level mode. Fails when a size does not fit a `usize`.
pub fn tile_shape(layout: &Layout) -> Result<Shape, String> {
    layout
        .modes()
        .iter()
        .map(|m| usize::try_from(m.size()).map_err(|_| format!("mode {m} is too large")))
        .collect::<Result<Vec<_>, _>>()
        .map(Shape)
}

/// The view derived by `op` (a view-deriving op: not `layout_view`, a load or
/// a store) from a view of `layout`, or the broken rule.
pub fn derive(op: &LViewOp, layout: &Layout) -> Result<Derived, String> {
    let regroup = |layout: Layout| {
        Ok(Derived {
            layout,
            shift: Shift::None,
            modes: None,
            edge: false,
        })
    };
    match op {
        LViewOp::Tile { shape } => {
            let (tile, rest, edge) = divide(layout, shape, true)?;
            let modes = shape
                .iter()
                .enumerate()
                .map(|(k, &t)| ModeMap {
                    source: k,
                    start: Start::Index {
                        operand: k,
                        scale: i64::try_from(t).unwrap_or(i64::MAX),
                    },
                    step: 1,
                })
                .collect();
            Ok(Derived {
                layout: tile,
                shift: Shift::Indexed(step_whole_modes(rest, layout, shape)?),
                modes: Some(modes),
                edge,
            })
        }
        LViewOp::Split { axis, parts } => split(layout, *axis, *parts),
        LViewOp::Vectorize { shape } => {
            let (tile, rest, _) = divide(layout, shape, false)?;
            let mut modes = rest.modes();
            modes.extend(tile.modes());
            regroup(Layout::concat(&modes))
        }
        LViewOp::Slice { ranges } => slice(layout, ranges),
        LViewOp::Transpose { perm } => {
            check_perm(perm, layout)?;
            Ok(Derived {
                layout: layout.select(perm).map_err(|e| e.to_string())?,
                shift: Shift::None,
                modes: Some(
                    perm.iter()
                        .map(|&source| ModeMap {
                            source,
                            start: Start::Static(0),
                            step: 1,
                        })
                        .collect(),
                ),
                edge: false,
            })
        }
        LViewOp::Reshape { shape } => regroup(reshape(layout, shape)?),
        LViewOp::Compose { layout: rhs } => {
            regroup(composition(layout, rhs).map_err(|e| e.to_string())?)
        }
        LViewOp::Coalesce => regroup(coalesce(layout)),
        LViewOp::Distribute { threads } => distribute(layout, threads),
        // The swizzle is the view's, outside its layout (the rules and the
        // accesses apply it): the layout and every index stay.
        LViewOp::Swizzle { .. } => Ok(Derived {
            layout: layout.clone(),
            shift: Shift::None,
            modes: Some(
                (0..layout.rank())
                    .map(|source| ModeMap {
                        source,
                        start: Start::Static(0),
                        step: 1,
                    })
                    .collect(),
            ),
            edge: false,
        }),
        LViewOp::Make { .. }
        | LViewOp::Load
        | LViewOp::LoadMasked { .. }
        | LViewOp::Store
        | LViewOp::StoreMasked => Err(format!("{} does not derive a view", op.name())),
    }
}

/// `zipped_divide` by one extent per mode: the tile layout, the rest layout
/// (each with one mode per mode of `layout`) and whether an extent does not
/// divide its mode. Each extent must divide its mode, unless `edges`
/// allows edge tiles: then a mode it does not divide must be of one stride
/// `n:d`, and is divided as `⌈n/t⌉·t : d`, its last tile reaching past it.
fn divide(
    layout: &Layout,
    extents: &[usize],
    edges: bool,
) -> Result<(Layout, Layout, bool), String> {
    if extents.len() != layout.rank() {
        return Err(format!(
            "{} extent(s) for the {} mode(s) of {layout}",
            extents.len(),
            layout.rank()
        ));
    }
    let mut tilers = Vec::with_capacity(extents.len());
    let mut modes = Vec::with_capacity(extents.len());
    let mut edge = false;
    for (k, (&t, mode)) in extents.iter().zip(layout.modes()).enumerate() {
        let t = i64::try_from(t).unwrap_or(i64::MAX);
        let size = mode.size();
        if t < 1 || (size % t != 0 && !edges) {
            return Err(format!(
                "mode {k} of {layout} has size {size}, which the extent {t} does not divide"
            ));
        }
        if size % t == 0 {
            modes.push(mode);
        } else {
            let flat = coalesce(&mode);
            let Some(d) = flat
                .stride()
                .as_int()
                .filter(|_| flat.shape().as_int().is_some())
            else {
                return Err(format!(
                    "mode {k} of {layout} is {mode}, which the extent {t} does not divide: an edge tile needs a mode of one stride"
                ));
            };
            let padded = size.saturating_add(t - 1) / t * t;
            modes.push(Layout::strided(padded, d).map_err(|e| e.to_string())?);
            edge = true;
        }
        tilers.push(Tiler::Layout(
            Layout::strided(t, 1).map_err(|e| e.to_string())?,
        ));
    }
    let padded = Layout::concat(&modes);
    let zipped = zipped_divide(&padded, &Tiler::Modes(tilers)).map_err(|e| e.to_string())?;
    match (zipped.mode(0), zipped.mode(1)) {
        (Some(tile), Some(rest)) => Ok((tile, rest, edge)),
        _ => Err(format!("zipped_divide of {layout} gave {zipped}")),
    }
}

/// The tile grid `rest` of `divide(layout, extents)` with every mode the
/// tile covers whole (size one, which the layout algebra strides by 0, as
/// CuTe does) stepping to the next tile instead: index `i` of such a mode
/// moves the base as index `i·t` of the operand's mode, extrapolated past
/// its size like any tile index past the grid. So a tile coordinate past
/// the grid never aliases tile 0: it lies past the operand's elements,
/// where a masked access skips and an unmasked one fails.
fn step_whole_modes(rest: Layout, layout: &Layout, extents: &[usize]) -> Result<Layout, String> {
    let modes = rest
        .modes()
        .into_iter()
        .zip(layout.modes())
        .zip(extents)
        .map(|((r, mode), &t)| {
            if r.size() != 1 {
                return Ok(r);
            }
            let next = extrapolated_offset(&mode, i128::try_from(t).unwrap_or(i128::MAX));
            let next = i64::try_from(next).map_err(|_| format!("mode {mode} is too large"))?;
            Layout::strided(1, next).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Layout::concat(&modes))
}

/// The offset of 1-D index `idx` along `mode`, colexicographic over its
/// leaves with the last taking the rest: an index past the mode's size
/// extrapolates along its last leaf, as in CuTe.
pub fn extrapolated_offset(mode: &Layout, idx: i128) -> i128 {
    let shape = mode.shape().leaves();
    let stride = mode.stride().leaves();
    let mut rest = idx;
    let mut total = 0i128;
    for (l, (&s, &d)) in shape.iter().zip(&stride).enumerate() {
        let c = if l + 1 == shape.len() {
            rest
        } else {
            let s = i128::from(s.max(1));
            let c = rest.rem_euclid(s);
            rest = rest.div_euclid(s);
            c
        };
        total = total.saturating_add(c.saturating_mul(i128::from(d)));
    }
    total
}

/// Part `index` of `parts` along mode `axis`: a tile whose extent is the
/// mode's size over `parts` on that mode and the whole mode elsewhere.
fn split(layout: &Layout, axis: usize, parts: usize) -> Result<Derived, String> {
    if axis >= layout.rank() {
        return Err(format!(
            "axis {axis} is out of range for the {} mode(s) of {layout}",
            layout.rank()
        ));
    }
    let sizes: Vec<i64> = layout.modes().iter().map(Layout::size).collect();
    let parts_i = i64::try_from(parts).unwrap_or(i64::MAX);
    if parts_i < 1 || sizes[axis] % parts_i != 0 {
        return Err(format!(
            "mode {axis} of {layout} has size {}, which {parts} parts do not divide",
            sizes[axis]
        ));
    }
    let extents: Vec<usize> = sizes
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let s = if k == axis { s / parts_i } else { s };
            usize::try_from(s).unwrap_or(usize::MAX)
        })
        .collect();
    let (tile, rest, _) = divide(layout, &extents, false)?;
    let rest = step_whole_modes(rest, layout, &extents)?;
    let part = rest.select(&[axis]).map_err(|e| e.to_string())?;
    let modes = extents
        .iter()
        .enumerate()
        .map(|(k, &e)| ModeMap {
            source: k,
            start: if k == axis {
                Start::Index {
                    operand: 0,
                    scale: i64::try_from(e).unwrap_or(i64::MAX),
                }
            } else {
                Start::Static(0)
            },
            step: 1,
        })
        .collect();
    Ok(Derived {
        layout: tile,
        shift: Shift::Indexed(part),
        modes: Some(modes),
        edge: false,
    })
}

/// The range `s:e` of each mode: a mode keeps its layout for the whole range
/// and otherwise must coalesce to one stride `n:d`, becoming `(e-s):d` with
/// the base moved by `s·d`.
fn slice(layout: &Layout, ranges: &[(usize, usize)]) -> Result<Derived, String> {
    if ranges.len() != layout.rank() {
        return Err(format!(
            "{} range(s) for the {} mode(s) of {layout}",
            ranges.len(),
            layout.rank()
        ));
    }
    let mut modes = Vec::with_capacity(ranges.len());
    let mut maps = Vec::with_capacity(ranges.len());
    let mut offset = 0i64;
    for (k, (&(s, e), mode)) in ranges.iter().zip(layout.modes()).enumerate() {
        let size = mode.size();
        let (s, e) = (
            i64::try_from(s).unwrap_or(i64::MAX),
            i64::try_from(e).unwrap_or(i64::MAX),
        );
        if s >= e || e > size {
            return Err(format!(
                "range {s}:{e} of mode {k} (size {size}) must satisfy start < stop <= size"
            ));
        }
        maps.push(ModeMap {
            source: k,
            start: Start::Static(s),
            step: 1,
        });
        if s == 0 && e == size {
            modes.push(mode);
            continue;
        }
        let flat = coalesce(&mode);
        let (Some(_), Some(d)) = (flat.shape().as_int(), flat.stride().as_int()) else {
            return Err(format!(
                "mode {k} of {layout} is {mode}, which is not one stride: only its whole range 0:{size} is one layout"
            ));
        };
        offset += s * d;
        modes.push(Layout::strided(e - s, d).map_err(|e| e.to_string())?);
    }
    Ok(Derived {
        layout: Layout::concat(&modes),
        shift: Shift::Static(offset),
        modes: Some(maps),
        edge: false,
    })
}

fn check_perm(perm: &[usize], layout: &Layout) -> Result<(), String> {
    let rank = layout.rank();
    let mut seen = vec![false; rank];
    let valid = perm.len() == rank
        && perm
            .iter()
            .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{perm:?} is not a permutation of the {rank} mode(s) of {layout}"
        ))
    }
}

/// `composition(reverse(L), row_major(shape))`: reversing the modes makes the
/// 1-D index of `L` row-major over its modes, and the row-major layout of
/// `shape` maps each new coordinate to that index.
fn reshape(layout: &Layout, shape: &Shape) -> Result<Layout, String> {
    let size = layout.size();
    let wanted = shape
        .dims()
        .iter()
        .try_fold(1i64, |acc, &d| acc.checked_mul(i64::try_from(d).ok()?));
    if shape.rank() == 0 || wanted != Some(size) {
        return Err(format!(
            "reshape keeps the number of elements: {layout} has {size}, {shape} has {}",
            shape.numel()
        ));
    }
    let reversed: Vec<usize> = (0..layout.rank()).rev().collect();
    let reversed = layout.select(&reversed).map_err(|e| e.to_string())?;
    let dims: Vec<i64> = shape.dims().iter().map(|&d| d as i64).collect();
    let target = Layout::row_major(IntTuple::flat(&dims)).map_err(|e| e.to_string())?;
    let result = composition(&reversed, &target).map_err(|e| {
        format!("{layout} read in row-major order as {shape} is not one layout: {e}")
    })?;
    if tile_shape(&result)? != *shape {
        return Err(format!(
            "{layout} read in row-major order as {shape} is not one layout: composition gave {result}"
        ));
    }
    Ok(result)
}

/// Mojo's `distribute`: divide each mode by the thread layout's extent on
/// that mode; thread `tid` gets the rest layout at the tile coordinate of its
/// thread coordinate.
fn distribute(layout: &Layout, threads: &Layout) -> Result<Derived, String> {
    if threads.rank() != layout.rank() {
        return Err(format!(
            "the thread layout {threads} has {} mode(s), the view {layout} has {}",
            threads.rank(),
            layout.rank()
        ));
    }
    let mut extents = Vec::with_capacity(threads.rank());
    for (k, mode) in threads.modes().iter().enumerate() {
        match (mode.shape().as_int(), mode.stride().as_int()) {
            (Some(n), Some(d)) if d >= 1 => extents.push(usize::try_from(n).unwrap_or(0)),
            _ => {
                return Err(format!(
                    "mode {k} of the thread layout {threads} must be one extent with a stride of at least 1, found {mode}"
                ))
            }
        }
    }
    let (tile, rest, _) = divide(layout, &extents, false)?;
    let modes = extents
        .iter()
        .enumerate()
        .map(|(k, &n)| ModeMap {
            source: k,
            start: Start::Thread { mode: k },
            step: i64::try_from(n).unwrap_or(i64::MAX),
        })
        .collect();
    Ok(Derived {
        layout: rest,
        shift: Shift::Thread {
            threads: threads.clone(),
            tile,
        },
        modes: Some(modes),
        edge: false,
    })
}
