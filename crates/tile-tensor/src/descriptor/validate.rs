//! The stride rules of a checked layout (CK's `ValidateStrides`).

use super::{DescriptorError, StrideOrder};

/// Checks positive `strides` against `layout`:
///
/// 1. the outer matrix dim steps at least one whole inner line:
///    `stride[outer] >= length[inner] * stride[inner]`;
/// 2. each batch dim steps at least over the dim inside it:
///    `stride[b] >= length[next] * stride[next]`, where `next` is the next batch
///    dim, or the outer matrix dim for the innermost batch dim.
///
/// Rank-1 descriptors have nothing to check.
pub(crate) fn check(
    layout: StrideOrder,
    lengths: &[usize],
    strides: &[usize],
) -> Result<(), DescriptorError> {
    let Some((inner, outer)) = layout.matrix_dims(lengths.len()) else {
        return Ok(());
    };
    let covers = |dim: usize, next: usize| {
        strides[dim] as u128 >= lengths[next] as u128 * strides[next] as u128
    };
    if !covers(outer, inner) {
        return Err(DescriptorError::MatrixOverlap {
            layout,
            outer,
            outer_stride: strides[outer],
            inner,
            inner_length: lengths[inner],
            inner_stride: strides[inner],
            lines: if layout == StrideOrder::RowMajor {
                "rows"
            } else {
                "columns"
            },
        });
    }
    let batches = lengths.len() - 2;
    for dim in 0..batches {
        let next = if dim + 1 < batches { dim + 1 } else { outer };
        if !covers(dim, next) {
            return Err(DescriptorError::BatchOverlap {
                layout,
                dim,
                stride: strides[dim],
                next,
                next_length: lengths[next],
                next_stride: strides[next],
            });
        }
    }
    Ok(())
}
