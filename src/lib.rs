//! `tile`: tile programming for GPUs in Rust.
//!
//! This facade is the crate users depend on. It re-exports the tile IR
//! ([`ir`]) and the runtime: devices, tensors and kernel launch.
//!
//! A kernel, compiled at build time for every specialization in
//! `configs(...)`, and launched on the CPU device:
//!
//! ```
//! use tile::tile_kernel;
//!
//! #[tile_kernel(configs(BLOCK = 1024), num_warps = 4)]
//! fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
//!     let pid = program_id(0);
//!     let (px, py) = (partition_view(x, [BLOCK]), partition_view(y, [BLOCK]));
//!     partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
//! }
//!
//! # fn main() -> Result<(), tile::Error> {
//! let dev = tile::Device::cpu();
//! let x = dev.tensor_from_slice(&[1.0f32; 1500], &[1500])?;
//! let mut out: tile::Tensor<f32> = dev.zeros(&[1500])?;
//! vector_add::<1024>::launch(&dev, [2], (&x, &x, &mut out))?;
//! assert_eq!(out.to_vec()?, vec![2.0; 1500]);
//! assert_eq!(vector_add::<1024>::INFO.num_warps, 4);
//! # Ok(())
//! # }
//! ```

pub use half::{bf16, f16};
pub use tile_ir as ir;
pub use tile_ir::f8::{F8E4M3 as f8e4m3, F8E5M2 as f8e5m2};
pub use tile_ir::mx::{F4E2M1 as f4e2m1, F6E2M3 as f6e2m3, F6E3M2 as f6e3m2, F8E8M0 as f8e8m0};
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
    pub use tile_ir::mx::{F4E2M1 as f4e2m1, F6E2M3 as f6e2m3, F6E3M2 as f6e3m2, F8E8M0 as f8e8m0};
    pub use tile_macros::__tile_kernel_with as tile_kernel_with;
    pub use tile_runtime as runtime;
    pub use tile_runtime::meta;
}
