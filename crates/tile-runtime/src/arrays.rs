//! Tensor arrays as launch arguments: what a launch checks of an array as
//! a whole (each of its tensors is checked as a tensor argument is).

/// Whether an array of `count` tensors fits the `i32` count the kernel
/// reads.
pub(crate) fn count_fits(count: usize) -> bool {
    i32::try_from(count).is_ok()
}
