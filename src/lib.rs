//! `tile`: tile programming for GPUs in Rust.
//!
//! This facade is the crate users depend on. It re-exports the tile IR
//! ([`ir`]) and the runtime: devices, tensors and kernel launch.

pub use half::{bf16, f16};
pub use tile_ir as ir;
pub use tile_ir::f8::{F8E4M3 as f8e4m3, F8E5M2 as f8e5m2};
pub use tile_macros::{tile_fn, tile_kernel};
pub use tile_runtime as runtime;
pub use tile_runtime::autotune;
pub use tile_runtime::meta;
pub use tile_runtime::{
    launch, launch_on, Device, DeviceInfo, DeviceKind, Element, Error, Event, GpuArch, Graph, Grid,
    Image, ImageKind, KernelCode, KernelSpec, LaunchArg, Owner, Stream, Tensor,
};
pub use tile_tensor::descriptor::{StrideOrder, TensorDescriptor};

/// Paths used by the code `#[tile_kernel]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use half;
    pub use half::{bf16, f16};
    pub use tile_abi as abi;
    pub use tile_ir as ir;
    pub use tile_ir::f8::{F8E4M3 as f8e4m3, F8E5M2 as f8e5m2};
    pub use tile_macros::__tile_kernel_with as tile_kernel_with;
    pub use tile_runtime as runtime;
    pub use tile_runtime::meta;
}
