//! How a tensor's elements sit in memory, as libraries for host code: the
//! runtime builds tensors from [`descriptor::TensorDescriptor`]s, and
//! [`strided::StridedView`] computes tinygrad's movement ops on shape,
//! strides, offset and mask without touching data.
//!
//! * [`strided`]: strided views with masks (reshape, expand, permute, flip,
//!   shrink, pad, stride and the high-level ops built from them), each in
//!   canonical form, with a copy reported where one view cannot express the
//!   result;
//! * [`descriptor`]: Composable Kernel's host tensor descriptor: lengths and
//!   strides derived and validated under a declared stride order.
//!
//! Neither is part of the tile IR: kernels see tensors through partition
//! views and layout views (`tile_ir`), and `docs/strided-views.md` says which of
//! these a kernel can use.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod descriptor;
pub mod strided;
