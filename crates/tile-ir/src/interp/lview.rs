//! The layout-view ops: deriving views, and loading and storing through them.
//!
//! A view's element at tile coordinate `J` is at element offset
//! `o = base + Σ_k mode_k(J_k)` from the viewed tensor's element zero (each
//! `J_k` a 1-D index into top-level mode `k`, colexicographic within it).
//! `o` must lie in the tensor's element space `[0, space)`, where `space` is
//! `1 + Σ (e_k - 1)·max(s_k, 0)` for extents `e` and strides `s` (0 for an
//! empty tensor); the element is at buffer offset `tensor.offset() + o`.
//! Unmasked accesses outside it fail with [`Fault::LViewOutside`]; masked
//! loads pad and masked stores skip. A store through a layout that sends two
//! elements to one offset fails with [`Fault::LViewAliasing`].
//!
//! A masked view (an edge tile) also holds a runtime extent per mode: its
//! elements past an extent are not in the view. Masked loads pad them and
//! masked stores skip them; an unmasked access to one fails with
//! [`Fault::LViewPastEdge`]. A swizzled view's element is at
//! `swizzle(base + Σ_k mode_k(J_k))` (a negative offset is left alone: it
//! is outside either way).

use super::memory::{padding_value, tensor_arg, tensor_arg_mut};
use super::tensor::HostTensor;
use super::value::{numel, LView, RtValue, Tile};
use super::{Arg, Fault};
use crate::layout::Layout;
use crate::lview::derive::{
    derive, derived_extent, extrapolated_offset, thread_coordinate, tile_shape, Shift, Start,
};
use crate::lview::LViewOp;

/// Runs a layout-view op: the derived view or loaded tile, or `None` after a
/// store.
pub(super) fn run(
    op: &LViewOp,
    operands: &[RtValue],
    args: &mut [Arg],
) -> Result<Option<RtValue>, Fault> {
    match op {
        LViewOp::Make { layout } => {
            let [RtValue::Tensor(arg)] = operands else {
                return Err(Fault::Type("layout_view takes one tensor".into()));
            };
            let t = tensor_arg(*arg, args)?;
            Ok(Some(RtValue::LView(LView {
                arg: *arg,
                dtype: t.dtype(),
                layout: layout.clone(),
                base: 0,
                extents: None,
                swizzle: None,
            })))
        }
        LViewOp::Load | LViewOp::LoadMasked { .. } => {
            let view = view_operand(operands.first())?;
            let t = viewed(view, args)?;
            let padding = match op {
                LViewOp::LoadMasked { padding } => Some(padding_value(*padding, view.dtype)?),
                _ => None,
            };
            let shape = tile_shape(&view.layout).map_err(Fault::Type)?;
            let places = places(view, t, &shape.0, padding.is_none())?;
            let mut next = places.iter();
            let tile = Tile::build(shape.0.clone(), view.dtype, |_| {
                match (next.next().copied().flatten(), padding) {
                    (Some(at), _) => t.read(at).ok_or_else(|| {
                        Fault::Type(format!("element offset {at} outside the buffer"))
                    }),
                    (None, Some(pad)) => Ok(pad),
                    (None, None) => Err(Fault::Type("an unmasked element outside".into())),
                }
            })?;
            Ok(Some(RtValue::Tile(tile)))
        }
        LViewOp::Store | LViewOp::StoreMasked => {
            let [value, view] = operands else {
                return Err(Fault::Type("a store takes a tile and a layout view".into()));
            };
            let value = value.tile("the stored value")?;
            let view = view_operand(Some(view))?;
            let shape = tile_shape(&view.layout).map_err(Fault::Type)?;
            if value.shape != shape.0 || value.dtype != view.dtype {
                return Err(Fault::Type(format!(
                    "a tile {:?} of {} stored to a layout view {} of {}",
                    value.shape, value.dtype, view.layout, view.dtype
                )));
            }
            let masked = matches!(op, LViewOp::StoreMasked);
            let places = places(view, viewed(view, args)?, &shape.0, !masked)?;
            check_injective(&places, &shape.0, view)?;
            let t = tensor_arg_mut(view.arg, args)?;
            for (place, &element) in places.iter().zip(&value.data) {
                if let Some(at) = place {
                    t.write(*at, element).ok_or_else(|| {
                        Fault::Type(format!("element offset {at} outside the buffer"))
                    })?;
                }
            }
            Ok(None)
        }
        _ => {
            let view = view_operand(operands.first())?;
            let derived = derive(op, &view.layout).map_err(Fault::Type)?;
            let indices = operands
                .get(1..)
                .unwrap_or_default()
                .iter()
                .map(|v| v.integer("an index operand"))
                .collect::<Result<Vec<_>, _>>()?;
            let coordinate = match (&derived.shift, &indices[..]) {
                (Shift::Thread { threads, .. }, &[tid]) => thread_coordinate(threads, tid),
                (Shift::Thread { .. }, _) => {
                    return Err(Fault::Type("distribute takes one thread id".into()))
                }
                _ => Vec::new(),
            };
            let shift = match &derived.shift {
                Shift::None => 0,
                Shift::Static(n) => i128::from(*n),
                Shift::Indexed(layout) => at_coordinate(layout, &indices)?,
                Shift::Thread { tile, .. } => at_coordinate(tile, &coordinate)?,
            };
            let extents = if view.extents.is_some() || derived.edge {
                let maps = derived
                    .modes
                    .as_ref()
                    .ok_or_else(|| Fault::Type(format!("{} of a masked layout view", op.name())))?;
                let operand = extents_of(view);
                let sizes: Vec<i64> = derived.layout.modes().iter().map(Layout::size).collect();
                let extents = maps
                    .iter()
                    .zip(sizes)
                    .map(|(map, size)| {
                        let start = match map.start {
                            Start::Static(n) => i128::from(n),
                            Start::Index { operand, scale } => indices
                                .get(operand)
                                .map_or(0, |&i| i.saturating_mul(i128::from(scale))),
                            Start::Thread { mode } => coordinate.get(mode).copied().unwrap_or(0),
                        };
                        let extent = operand.get(map.source).copied().unwrap_or(0);
                        derived_extent(extent, start, map.step, size)
                    })
                    .collect();
                Some(extents)
            } else {
                None
            };
            let swizzle = match op {
                LViewOp::Swizzle { swizzle } => Some(*swizzle),
                _ => view.swizzle,
            };
            Ok(Some(RtValue::LView(LView {
                arg: view.arg,
                dtype: view.dtype,
                layout: derived.layout,
                base: view.base.saturating_add(shift),
                extents,
                swizzle,
            })))
        }
    }
}

/// A view's extent along each mode: its runtime extents if masked, else
/// the mode sizes.
fn extents_of(view: &LView) -> Vec<i128> {
    match &view.extents {
        Some(e) => e.clone(),
        None => view
            .layout
            .modes()
            .iter()
            .map(|m| i128::from(m.size()))
            .collect(),
    }
}

/// `layout((c0, c1, ...))`: one 1-D index per top-level mode, in `i128`
/// (an index past a mode's size extrapolates along its last sub-mode, as in
/// CuTe).
fn at_coordinate(layout: &Layout, coordinate: &[i128]) -> Result<i128, Fault> {
    let modes = layout.modes();
    if modes.len() != coordinate.len() {
        return Err(Fault::Type(format!(
            "{} index(es) for the {} mode(s) of {layout}",
            coordinate.len(),
            modes.len()
        )));
    }
    Ok(modes.iter().zip(coordinate).fold(0i128, |acc, (m, &c)| {
        acc.saturating_add(extrapolated_offset(m, c))
    }))
}

/// The size of `t`'s element space: one past the largest offset its extents
/// and non-negative strides reach from element zero (0 when it is empty).
fn element_space(t: &HostTensor) -> i128 {
    if t.shape().contains(&0) {
        return 0;
    }
    t.shape()
        .iter()
        .zip(t.strides())
        .fold(1i128, |acc, (&e, &s)| {
            acc + (e as i128 - 1) * (s.max(0) as i128)
        })
}

/// The buffer offset of every tile element of `view` (row-major over
/// `shape`), `None` past the view's extents or outside the element space.
/// With `strict` these are faults instead: first a view not whole along its
/// first short mode (at its first element past the extent there), then the
/// first element outside the element space.
fn places(
    view: &LView,
    t: &HostTensor,
    shape: &[usize],
    strict: bool,
) -> Result<Vec<Option<usize>>, Fault> {
    // Checked first: the layout of unverified IR may be too large to tabulate.
    let count = numel(shape)?;
    let space = element_space(t);
    let modes = view.layout.modes();
    let tables: Vec<Vec<i128>> = modes
        .iter()
        .zip(shape)
        .map(|(m, &n)| (0..n).map(|j| extrapolated_offset(m, j as i128)).collect())
        .collect();
    let extents = extents_of(view);
    if strict {
        let short = shape
            .iter()
            .zip(&extents)
            .position(|(&n, &extent)| extent < n as i128);
        if let Some(mode) = short {
            let mut coordinate = vec![0; shape.len()];
            coordinate[mode] = usize::try_from(extents[mode]).unwrap_or(0);
            return Err(Fault::LViewPastEdge {
                coordinate,
                layout: view.layout.to_string(),
                mode,
                extent: extents[mode],
            });
        }
    }
    let mut out = Vec::with_capacity(count);
    for linear in 0..count {
        let index = Tile::unravel(linear, shape);
        if index.iter().zip(&extents).any(|(&j, &e)| j as i128 >= e) {
            out.push(None);
            continue;
        }
        let offset = index
            .iter()
            .zip(&tables)
            .fold(view.base, |acc, (&j, table)| acc.saturating_add(table[j]));
        let offset = match (view.swizzle, i64::try_from(offset)) {
            (Some(sw), Ok(o)) if o >= 0 => i128::from(sw.apply(o)),
            _ => offset,
        };
        if (0..space).contains(&offset) {
            out.push(usize::try_from(offset + t.offset() as i128).ok());
        } else if strict {
            return Err(Fault::LViewOutside {
                coordinate: index,
                layout: view.layout.to_string(),
                base: view.base,
                offset,
                space,
            });
        } else {
            out.push(None);
        }
    }
    Ok(out)
}

/// Fails when two elements of a store share an offset.
fn check_injective(places: &[Option<usize>], shape: &[usize], view: &LView) -> Result<(), Fault> {
    let mut taken: Vec<(usize, usize)> = places
        .iter()
        .enumerate()
        .filter_map(|(linear, place)| place.map(|at| (at, linear)))
        .collect();
    taken.sort_unstable();
    match taken.windows(2).find(|w| w[0].0 == w[1].0) {
        Some(w) => Err(Fault::LViewAliasing {
            first: Tile::unravel(w[0].1.min(w[1].1), shape),
            second: Tile::unravel(w[0].1.max(w[1].1), shape),
            layout: view.layout.to_string(),
            offset: w[0].0 as i128,
        }),
        None => Ok(()),
    }
}

fn view_operand(value: Option<&RtValue>) -> Result<&LView, Fault> {
    match value {
        Some(RtValue::LView(v)) => Ok(v),
        _ => Err(Fault::Type("expected a layout view operand".into())),
    }
}

/// The tensor a view reads, checked to have the view's dtype.
fn viewed<'a>(view: &LView, args: &'a [Arg]) -> Result<&'a HostTensor, Fault> {
    let t = tensor_arg(view.arg, args)?;
    if t.dtype() != view.dtype {
        return Err(Fault::Type(format!(
            "a layout view of {} over a tensor of {}",
            view.dtype,
            t.dtype()
        )));
    }
    Ok(t)
}
