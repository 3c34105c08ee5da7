//! Devices, tensors and kernel launch (work in progress).
