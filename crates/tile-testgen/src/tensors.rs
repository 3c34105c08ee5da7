//! Tensor arguments with random layouts: row-major, column-major, permuted,
//! padded strides, reversed axes (negative strides) and non-zero offsets,
//! over a buffer whose every element (the gaps included) holds a random value.

use crate::rng::SplitMix64;
use crate::values::{random_scalar, Place};
use tile_ir::interp::HostTensor;
use tile_ir::DType;

/// A tensor of `extents` with a random layout and random contents.
pub(crate) fn random_tensor(
    rng: &mut SplitMix64,
    dtype: DType,
    extents: &[usize],
    special: f64,
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
        random_scalar(rng, dtype, special, Place::Memory).write_le(chunk);
    }
    // Every element lies in the buffer by construction (the reversed axis's
    // reach is added to the offset), so this cannot fail.
    HostTensor::with_strides(dtype, extents, &strides, offset, data)
        .unwrap_or_else(|e| panic!("a generated layout is invalid: {e}"))
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
