//! The thin runtime of `tile`: devices, tensors on them, and kernel launch.
//!
//! A launch checks every argument against the kernel's parameters (count,
//! dtype, rank, and that written tensors are passed mutably) before anything
//! runs, and reports every failure as an [`Error`] naming the kernel, the
//! argument and the device. The CPU device runs a kernel's compiled host code
//! ([`cpu`]) when the kernel has an image this CPU runs, and the tile IR's
//! reference interpreter otherwise; CUDA and HIP devices load the kernels'
//! embedded PTX or HSACO through their drivers (untested on real hardware so
//! far).

mod arrays;
pub mod autotune;
mod copies;
pub mod cpu;
#[cfg(feature = "cudarc")]
pub mod cudarc;
mod device;
mod device_print;
mod discovery;
pub mod driver;
mod driver_names;
mod error;
mod foreign;
mod gpu;
mod grid;
mod grid_axes;
mod kernel;
mod launch;
pub mod meta;
mod stages;
mod stream;
mod tensor;

pub use copies::Download;
pub use device::{Device, DeviceKind};
pub use error::Error;
pub use gpu::{DeviceInfo, Event, GpuArch, GpuTensor, Graph, Owner};
pub use grid::Grid;
pub use grid_axes::UnreadGridAxis;
pub use kernel::{Image, ImageKind, KernelCode, KernelSpec};
pub use launch::{launch, launch_on, LaunchArg};
pub use stream::Stream;
pub use tensor::Tensor;
pub use tile_ir::interp::Element;
