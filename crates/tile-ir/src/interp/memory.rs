//! `dim`, `partition_view`, and the loads and stores of partitions.
//!
//! Per the reference (`partition_view`), a partition index `I` must satisfy
//! `0 <= i_k` and `i_k * S_k < e_k` on every axis (`S` the tile shape, `e`
//! the extents of the view: the tensor's, or its window's); element `J` of
//! the tile maps to the tensor element `p(I, J) = o + I * S + J` (`o` the
//! window's offsets, 0 without one). An unmasked access needs every
//! `p(I, J)` inside the view; a masked one pads (loads) or skips (stores)
//! the elements outside. A window at a negative offset or of a negative
//! extent is a fault where the view is made.
//! Where the reference says "undefined behavior" the interpreter reports a
//! [`Fault`]: an index outside the index space (even for masked forms), an
//! unmasked partially out-of-bounds partition, and two elements of one
//! access that share an address (a non-injective tensor span).

use super::tensor::HostTensor;
use super::value::{numel, PartitionView, RtValue, TensorRef, Tile};
use super::{Arg, Fault};
use crate::dtype::DType;
use crate::ops::{OpKind, Padding};
use crate::scalar::Scalar;

/// Runs `dim`, `get_tensor`, `num_tensors`, `partition_view`, `load` or
/// `load_masked`.
pub(super) fn read(kind: &OpKind, operands: &[RtValue], args: &[Arg]) -> Result<RtValue, Fault> {
    match kind {
        OpKind::GetTensor => {
            let [RtValue::Tensors(arg), index] = operands else {
                return Err(Fault::Type(
                    "get_tensor takes a tensor array and an index".into(),
                ));
            };
            let count = tensor_array(*arg, args)?.len();
            let index = index.integer("a tensor index")?;
            match usize::try_from(index).ok().filter(|&i| i < count) {
                Some(element) => Ok(RtValue::Tensor(TensorRef {
                    arg: *arg,
                    element: Some(element),
                })),
                None => Err(Fault::TensorIndex { index, count }),
            }
        }
        OpKind::NumTensors => {
            let [RtValue::Tensors(arg)] = operands else {
                return Err(Fault::Type("num_tensors takes a tensor array".into()));
            };
            // Arguments were checked to hold at most i32::MAX tensors.
            let count = tensor_array(*arg, args)?.len();
            Ok(RtValue::Scalar(Scalar::I32(
                i32::try_from(count).unwrap_or(i32::MAX),
            )))
        }
        OpKind::Dim { axis } => {
            let t = tensor_operand(operands, args)?;
            let extent = t.shape().get(*axis).ok_or_else(|| {
                Fault::Type(format!(
                    "axis {axis} of a tensor of rank {}",
                    t.shape().len()
                ))
            })?;
            // Arguments were checked to have extents that fit i32.
            Ok(RtValue::Scalar(Scalar::I32(
                i32::try_from(*extent).unwrap_or(i32::MAX),
            )))
        }
        OpKind::PartitionView { shape } => {
            let t = tensor_operand(operands, args)?;
            if shape.rank() != t.shape().len() {
                return Err(Fault::Type(format!(
                    "a partition shape {shape} for a tensor of rank {}",
                    t.shape().len()
                )));
            }
            numel(shape.dims())?;
            let (arg, window) = match operands {
                [RtValue::Tensor(arg), window @ ..] => (*arg, window),
                _ => return Err(Fault::Type("partition_view takes a tensor".into())),
            };
            let (origin, extents) = window_of(t.shape(), window)?;
            Ok(RtValue::PartitionView(PartitionView {
                arg,
                tile: shape.dims().to_vec(),
                dtype: t.dtype(),
                origin,
                extents,
            }))
        }
        OpKind::Load | OpKind::LoadMasked { .. } => {
            let (view, indices) = view_and_indices(operands.first(), operands.get(1..))?;
            let t = view_tensor(&view, args)?;
            let padding = match kind {
                OpKind::LoadMasked { padding } => Some(padding_value(*padding, view.dtype)?),
                _ => None,
            };
            let places = partition(&view, &indices, t, padding.is_some())?;
            let data = places
                .iter()
                .map(|place| match (place, padding) {
                    (Some(at), _) => t.read(*at).ok_or_else(|| {
                        Fault::Type(format!("element offset {at} outside the buffer"))
                    }),
                    (None, Some(pad)) => Ok(pad),
                    (None, None) => {
                        Err(Fault::Type("an unmasked element outside the tensor".into()))
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(RtValue::Tile(Tile {
                shape: view.tile.clone(),
                dtype: view.dtype,
                data,
            }))
        }
        other => Err(Fault::Type(format!(
            "`{}` does not read memory",
            other.name()
        ))),
    }
}

/// Runs `store` or `store_masked`.
pub(super) fn store(kind: &OpKind, operands: &[RtValue], args: &mut [Arg]) -> Result<(), Fault> {
    let Some((value, rest)) = operands.split_first() else {
        return Err(Fault::Type(
            "a store needs a tile, a view and indices".into(),
        ));
    };
    let value = value.tile("the stored value")?;
    let (view, indices) = view_and_indices(rest.first(), rest.get(1..))?;
    if value.shape != view.tile || value.dtype != view.dtype {
        return Err(Fault::Type(format!(
            "a tile {:?} of {} stored to a view of tile {:?} of {}",
            value.shape, value.dtype, view.tile, view.dtype
        )));
    }
    let masked = matches!(kind, OpKind::StoreMasked);
    let places = partition(&view, &indices, view_tensor(&view, args)?, masked)?;
    let t = tensor_arg_mut(view.arg, args)?;
    for (place, &element) in places.iter().zip(&value.data) {
        if let Some(at) = place {
            t.write(*at, element)
                .ok_or_else(|| Fault::Type(format!("element offset {at} outside the buffer")))?;
        }
    }
    Ok(())
}

/// The buffer element offset of each tile element `J` (row-major) of the
/// partition at `index`, or `None` for an element outside the tensor (only
/// when `masked`).
fn partition(
    view: &PartitionView,
    index: &[i128],
    t: &HostTensor,
    masked: bool,
) -> Result<Vec<Option<usize>>, Fault> {
    let extents = &view.extents;
    let tile = &view.tile;
    if index.len() != tile.len() || t.shape().len() != tile.len() || extents.len() != tile.len() {
        return Err(Fault::Type(format!(
            "{} partition indices for a view of tile {tile:?} over a tensor of rank {}",
            index.len(),
            extents.len()
        )));
    }
    let inside = index
        .iter()
        .zip(tile)
        .zip(extents)
        .all(|((&i, &s), &e)| i >= 0 && i * (s as i128) < (e as i128));
    if !inside {
        return Err(Fault::IndexSpace {
            index: index.to_vec(),
            tile: tile.clone(),
            extents: extents.to_vec(),
        });
    }
    // Inside the index space, each i_k * S_k < e_k fits usize; the tensor
    // coordinate of window coordinate c is the window's origin plus c.
    let origin: Vec<usize> = index
        .iter()
        .zip(tile)
        .zip(&view.origin)
        .map(|((&i, &s), &o)| o + i as usize * s)
        .collect();
    let count = numel(tile)?;
    let mut places = Vec::with_capacity(count);
    // The tensor coordinate p(I, J), advanced as a row-major odometer over J.
    let mut element = origin.clone();
    for _ in 0..count {
        let in_window = element
            .iter()
            .zip(&view.origin)
            .zip(extents)
            .all(|((&c, &o), &e)| c - o < e);
        let place = if in_window {
            t.element_offset(&element)
        } else {
            None
        };
        if place.is_none() && !masked {
            return Err(Fault::PartialPartition {
                index: index.to_vec(),
                tile: tile.clone(),
                extents: extents.to_vec(),
                element,
            });
        }
        places.push(place);
        for axis in (0..tile.len()).rev() {
            element[axis] += 1;
            if element[axis] < origin[axis] + tile[axis] {
                break;
            }
            element[axis] = origin[axis];
        }
    }
    check_injective(&places, tile, &origin)?;
    Ok(places)
}

/// Fails when two elements of one access share a buffer offset.
fn check_injective(
    places: &[Option<usize>],
    tile: &[usize],
    origin: &[usize],
) -> Result<(), Fault> {
    let mut taken: Vec<(usize, usize)> = places
        .iter()
        .enumerate()
        .filter_map(|(linear, place)| place.map(|at| (at, linear)))
        .collect();
    taken.sort_unstable();
    let coordinate = |linear: usize| -> Vec<usize> {
        Tile::unravel(linear, tile)
            .iter()
            .zip(origin)
            .map(|(j, o)| j + o)
            .collect()
    };
    match taken.windows(2).find(|w| w[0].0 == w[1].0) {
        Some(w) => Err(Fault::Aliasing {
            first: coordinate(w[0].1.min(w[1].1)),
            second: coordinate(w[0].1.max(w[1].1)),
        }),
        None => Ok(()),
    }
}

/// The view operand and the integer partition indices that follow it.
fn view_and_indices(
    view: Option<&RtValue>,
    rest: Option<&[RtValue]>,
) -> Result<(PartitionView, Vec<i128>), Fault> {
    let Some(RtValue::PartitionView(view)) = view else {
        return Err(Fault::Type("expected a partition view operand".into()));
    };
    let indices = rest
        .unwrap_or_default()
        .iter()
        .map(|v| v.integer("a partition index"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((view.clone(), indices))
}

fn tensor_operand<'a>(operands: &[RtValue], args: &'a [Arg]) -> Result<&'a HostTensor, Fault> {
    match operands.first() {
        Some(RtValue::Tensor(arg)) => tensor_arg(*arg, args),
        _ => Err(Fault::Type("expected a tensor operand".into())),
    }
}

/// The origin and extents of a view's window of a tensor of `shape`:
/// `window` holds nothing (the whole tensor), the offsets, or the offsets
/// then the extents; the window's extent along axis `k` is
/// `min(shape_k − o_k, n_k)`, 0 where the offset passes the end.
fn window_of(shape: &[usize], window: &[RtValue]) -> Result<(Vec<usize>, Vec<usize>), Fault> {
    let rank = shape.len();
    if window.is_empty() {
        return Ok((vec![0; rank], shape.to_vec()));
    }
    let values = window
        .iter()
        .map(|v| {
            v.scalar("a window offset or extent")?
                .to_i128()
                .ok_or_else(|| {
                    Fault::Type("a window offset or extent that is not an integer".into())
                })
        })
        .collect::<Result<Vec<i128>, Fault>>()?;
    let (offsets, limits) = values.split_at(rank.min(values.len()));
    if offsets.len() != rank || !(limits.is_empty() || limits.len() == rank) {
        return Err(Fault::Type(format!(
            "{} window operands for a tensor of rank {rank}",
            values.len()
        )));
    }
    if values.iter().any(|&v| v < 0) {
        return Err(Fault::ViewWindow {
            offsets: offsets.to_vec(),
            extents: (!limits.is_empty()).then(|| limits.to_vec()),
        });
    }
    let extents = (0..rank)
        .map(|k| {
            let room = (shape[k] as i128 - offsets[k]).max(0);
            let limit = limits.get(k).copied().unwrap_or(room);
            room.min(limit) as usize
        })
        .collect();
    // An offset past the end starts an empty window; where it starts does
    // not matter then.
    let origin = (0..rank)
        .map(|k| offsets[k].min(shape[k] as i128) as usize)
        .collect();
    Ok((origin, extents))
}

fn view_tensor<'a>(view: &PartitionView, args: &'a [Arg]) -> Result<&'a HostTensor, Fault> {
    let t = tensor_arg(view.arg, args)?;
    if t.dtype() != view.dtype {
        return Err(Fault::Type(format!(
            "a view of {} over a tensor of {}",
            view.dtype,
            t.dtype()
        )));
    }
    Ok(t)
}

/// The tensor `r` names among `args`.
pub(super) fn tensor_arg(r: TensorRef, args: &[Arg]) -> Result<&HostTensor, Fault> {
    match (args.get(r.arg), r.element) {
        (Some(Arg::Tensor(t)), None) => Ok(t),
        (Some(Arg::Tensors(ts)), Some(e)) if e < ts.len() => Ok(&ts[e]),
        _ => Err(Fault::Type(format!("{r} is not a tensor"))),
    }
}

/// The tensor `r` names among `args`, to write.
pub(super) fn tensor_arg_mut(r: TensorRef, args: &mut [Arg]) -> Result<&mut HostTensor, Fault> {
    match (args.get_mut(r.arg), r.element) {
        (Some(Arg::Tensor(t)), None) => Ok(t),
        (Some(Arg::Tensors(ts)), Some(e)) if e < ts.len() => Ok(&mut ts[e]),
        _ => Err(Fault::Type(format!("{r} is not a tensor"))),
    }
}

/// The tensors of tensor-array argument `arg`.
fn tensor_array(arg: usize, args: &[Arg]) -> Result<&[HostTensor], Fault> {
    match args.get(arg) {
        Some(Arg::Tensors(ts)) => Ok(ts),
        _ => Err(Fault::Type(format!("argument {arg} is not a tensor array"))),
    }
}

/// The value of a masked load's elements outside the tensor
/// ([`Padding::value`]), or a [`Fault::Type`] when the padding does not exist
/// in `dtype`.
pub(super) fn padding_value(padding: Padding, dtype: DType) -> Result<Scalar, Fault> {
    padding
        .value(dtype)
        .ok_or_else(|| Fault::Type(format!("padding {padding:?} for a view of {dtype}")))
}
