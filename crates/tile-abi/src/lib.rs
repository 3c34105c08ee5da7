//! What the tile compiler and its runtime must agree on, owned by neither.
//!
//! `tile-codegen` writes code that follows these contracts and
//! `tile-runtime` runs it; both depend on this crate and on nothing of each
//! other:
//!
//! * [`status`]: the status record every compiled kernel (GPU or host)
//!   writes when a run-time check fails, and the codes of its failures;
//! * [`device_print`]: the area compiled code appends `device_print!`'s lines
//!   to, and its records;
//! * [`params`]: the kernel ABI of the GPU targets, parameter by parameter,
//!   and the bytes a launch passes;
//! * [`host`]: the symbols, entry point, math table and packet slots of
//!   compiled host code;
//! * [`isa`]: the instruction-set levels host code is compiled for;
//! * [`emulation`]: GPU kernels moved to the host to run on the CPU: the
//!   runtime calls that replace the targets' intrinsics, and the manifest
//!   an emulation image carries;
//! * [`tma`]: the tensor maps of Hopper's bulk tensor copies (boxes, the
//!   map's bytes as a kernel parameter);
//! * [`image`]: the kinds of compiled images a kernel embeds, and
//!   `object` (feature `object`) how a compiled shared object is opened;
//! * [`amd_generic`]: which AMD processors a generic code object runs on;
//! * [`ParamKind`]: what a kernel parameter is, as `#[tile_kernel]`
//!   describes it to the runtime.
//!
//! The hardware as the emulators model it (tensor-core instructions,
//! mbarriers, happens-before) is `tile-hw`'s.
#![warn(missing_docs)]

pub mod amd_generic;
pub mod device_print;
pub mod emulation;
pub mod host;
pub mod image;
pub mod isa;
#[cfg(feature = "object")]
pub mod object;
pub mod params;
pub mod status;
pub mod tma;

pub use host::HostCheck;
pub use image::ImageKind;
pub use isa::HostIsa;
pub use params::Packet;
pub use status::{FaultCode, Status};

/// What a kernel parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A global tensor of `rank` axes; `mutable` for `&mut Tensor<T>`.
    Tensor {
        /// The number of axes.
        rank: usize,
        /// Whether the kernel may write it.
        mutable: bool,
    },
    /// An array of global tensors of `rank` axes (`&[Tensor<T, R>]`);
    /// `mutable` for `&mut [Tensor<T, R>]`.
    Tensors {
        /// The number of axes of each tensor.
        rank: usize,
        /// Whether the kernel may write its tensors.
        mutable: bool,
    },
    /// A scalar passed by value.
    Scalar,
}
