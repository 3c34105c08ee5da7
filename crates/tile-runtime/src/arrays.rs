//! Tensor arrays as launch arguments: what a launch checks of their
//! tensors as a whole (each tensor is checked as a tensor argument is),
//! and how messages show them.

use tile_ir::interp::HostTensor;
use tile_ir::TensorType;

/// Whether every tensor of an array has the element type and rank of `t`
/// and extents that fit an `i32`, and the array holds at most `i32::MAX`
/// of them.
pub(crate) fn fits<'a>(
    t: &TensorType,
    tensors: impl ExactSizeIterator<Item = &'a HostTensor>,
) -> bool {
    i32::try_from(tensors.len()).is_ok()
        && tensors.into_iter().all(|h| {
            h.dtype() == t.dtype
                && h.shape().len() == t.rank
                && h.shape().iter().all(|&e| i32::try_from(e).is_ok())
        })
}

/// An array as messages show it: `&[tensor<f32, 2>, tensor<f32, 1>]`.
pub(crate) fn describe<'a>(borrow: &str, tensors: impl Iterator<Item = &'a HostTensor>) -> String {
    let types: Vec<String> = tensors
        .map(|h| format!("tensor<{}, {}>", h.dtype(), h.shape().len()))
        .collect();
    format!("{borrow}[{}]", types.join(", "))
}
