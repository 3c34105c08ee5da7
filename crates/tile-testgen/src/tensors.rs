//! Tensor arguments with random layouts: row-major, column-major, permuted,
//! padded strides, reversed axes (negative strides) and non-zero offsets,
//! over a buffer whose every element (the gaps included) holds a random value.

use crate::rng::SplitMix64;
use crate::values::{random_scalar, Place};
use tile_ir::eval::round_f64;
use tile_ir::interp::HostTensor;
use tile_ir::types::TENSOR_ALIGNMENT;
use tile_ir::{DType, Scalar};

/// A tensor of `extents` with a random layout and random contents.
pub(crate) fn random_tensor(
    rng: &mut SplitMix64,
    dtype: DType,
    extents: &[usize],
    special: f64,
) -> HostTensor {
    tensor_of(rng, dtype, extents, |rng| {
        random_scalar(rng, dtype, special, Place::Memory)
    })
}

/// A tensor of `extents` with a random layout whose every buffer element is
/// an integer of magnitude at most `magnitude` (of a float or signed
/// integer `dtype` that holds them exactly).
pub(crate) fn integer_tensor(
    rng: &mut SplitMix64,
    dtype: DType,
    extents: &[usize],
    magnitude: i64,
) -> HostTensor {
    tensor_of(rng, dtype, extents, |rng| {
        let v = rng.range(0, 2 * magnitude as usize) as i64 - magnitude;
        match dtype.is_float() {
            true => round_f64(v as f64, dtype),
            false => Scalar::wrapping_from_i128(dtype, i128::from(v)),
        }
        .unwrap_or(Scalar::zero(dtype))
    })
}

/// A tensor of `extents` with a random layout, its buffer filled by `value`.
fn tensor_of(
    rng: &mut SplitMix64,
    dtype: DType,
    extents: &[usize],
    mut value: impl FnMut(&mut SplitMix64) -> Scalar,
) -> HostTensor {
    let rank = extents.len();
    // Axis order, outermost first; the last axis listed has stride 1.
    let order: Vec<usize> = match rng.range(0, 3) {
        0 | 1 => (0..rank).collect(),
        2 => (0..rank).rev().collect(),
        _ => rng.permutation(rank),
    };
    let padded = rng.chance(0.25);
    let mut strides = vec![0isize; rank];
    let mut span = 1usize;
    for &axis in order.iter().rev() {
        strides[axis] = span as isize;
        let pad = if padded { rng.range(0, 3) } else { 0 };
        span *= extents[axis] + pad;
    }
    let mut offset = if rng.chance(0.3) { rng.range(1, 7) } else { 0 };
    if rng.chance(0.15) {
        // A reversed axis: element 0 sits at the far end of its span.
        let axis = rng.range(0, rank - 1);
        offset += (extents[axis] - 1) * strides[axis].unsigned_abs();
        strides[axis] = -strides[axis];
    }
    let len = offset + span + if padded { rng.range(0, 3) } else { 0 };
    let mut data = vec![0u8; len * dtype.size_bytes()];
    for chunk in data.chunks_exact_mut(dtype.size_bytes()) {
        value(rng).write_le(chunk);
    }
    // Every element lies in the buffer by construction (the reversed axis's
    // reach is added to the offset), so this cannot fail.
    HostTensor::with_strides(dtype, extents, &strides, offset, data)
        .unwrap_or_else(|e| panic!("a generated layout is invalid: {e}"))
}

/// The elements of `t` in a random layout that keeps the alignment promise
/// (`tile_ir::TensorType::misalignment`): contiguous rows, the outer axes
/// in a random order with strides padded by whole 16-byte units and
/// perhaps one reversed, and a start a whole number of units into the
/// buffer, whose gaps hold random values. `t`'s innermost extent is a
/// multiple of 16 bytes.
pub(crate) fn aligned_copy(rng: &mut SplitMix64, t: &HostTensor, special: f64) -> HostTensor {
    let (dtype, extents) = (t.dtype(), t.shape());
    let size = dtype.size_bytes();
    let unit = (TENSOR_ALIGNMENT / size).max(1);
    let inner = extents.len() - 1;
    let mut order: Vec<usize> = rng.permutation(inner);
    order.push(inner);
    let mut strides = vec![0isize; extents.len()];
    let mut span = 1usize;
    for &axis in order.iter().rev() {
        strides[axis] = span as isize;
        let pad = if axis == inner {
            0
        } else {
            unit * rng.range(0, 2)
        };
        span *= extents[axis] + pad;
    }
    let mut offset = unit * rng.range(0, 2);
    if inner > 0 && rng.chance(0.15) {
        let axis = rng.range(0, inner - 1);
        offset += (extents[axis] - 1) * strides[axis].unsigned_abs();
        strides[axis] = -strides[axis];
    }
    let mut data = vec![0u8; (offset + span) * size];
    for chunk in data.chunks_exact_mut(size) {
        random_scalar(rng, dtype, special, Place::Memory).write_le(chunk);
    }
    // Element `i` (row-major) at its offset in the new layout.
    for (i, value) in t.to_scalars().into_iter().enumerate() {
        let mut rest = i;
        let mut at = offset as isize;
        for axis in (0..extents.len()).rev() {
            at += (rest % extents[axis]) as isize * strides[axis];
            rest /= extents[axis];
        }
        value.write_le(&mut data[at as usize * size..]);
    }
    HostTensor::with_strides(dtype, extents, &strides, offset, data)
        .unwrap_or_else(|e| panic!("a generated aligned layout is invalid: {e}"))
}

/// A row-major contiguous tensor with the same dtype, extents and elements.
pub(crate) fn contiguous(t: &HostTensor) -> HostTensor {
    HostTensor::from_scalars(t.dtype(), t.shape(), &t.to_scalars())
        .unwrap_or_else(|e| panic!("copying a tensor failed: {e}"))
}

/// Whether `t` is row-major contiguous over a buffer of exactly its elements.
pub(crate) fn is_contiguous(t: &HostTensor) -> bool {
    t.offset() == 0
        && t.data().len() == t.numel() * t.dtype().size_bytes()
        && contiguous(t).strides() == t.strides()
}

/// A row-major tensor of `extents` holding the elements of `t` at the same
/// indices (`extents` no larger than `t`'s on any axis).
pub(crate) fn cropped(t: &HostTensor, extents: &[usize]) -> HostTensor {
    let mut out = HostTensor::zeros(t.dtype(), extents);
    let mut index = vec![0usize; extents.len()];
    'all: loop {
        if let Some(v) = t.get(&index) {
            // Same dtype, and `index` is inside `extents`.
            let _ = out.set(&index, v);
        }
        for axis in (0..extents.len()).rev() {
            index[axis] += 1;
            if index[axis] < extents[axis] {
                continue 'all;
            }
            index[axis] = 0;
        }
        return out;
    }
}
