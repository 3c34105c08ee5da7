//! The HIP runtime API, as far as `tile-runtime` calls it: devices and
//! their properties (`device.rs`), device and pinned host memory, copies
//! and fills, synchronous and asynchronous (`memory.rs`), code-object
//! modules and their functions, launches (parameters packed through
//! `extra`, or by pointer; `module.rs`), streams and synchronization
//! (`stream.rs`) and events (`event.rs`).
//!
//! The device is a `gfx942` (`TILE_STANDIN_GFX=gfx1100` makes it another)
//! with 1,024 threads and 64 KiB of LDS per workgroup. As HIP does, the
//! runtime initializes itself on first use and device 0 is current until
//! `hipSetDevice` says otherwise. A code object is read as the runtime
//! reads it: its length from its ELF headers, its target, and its kernels'
//! arguments, `.max_flat_workgroup_size` and LDS from the metadata note.
//!
//! Streams, events and the call log ([`crate::calls`]) follow the CUDA
//! stand-in's rules (`hipStreamNonBlocking` is 1; 0, `hipStreamLegacy`
//! and `hipStreamPerThread` are streams too); launches, copies and fills
//! run before the call returns. HIP's graphs are not modelled.
//!
//! The library is ROCm 6's: `hipGetDevicePropertiesR0600` fills
//! `hipDeviceProp_tR0600`, and `hipGetDeviceProperties` ROCm 5's
//! `hipDeviceProp_t`, as ROCm 6 keeps it for programs built against ROCm 5.
//! [`as_rocm5`] makes a copy of the library without the ROCm 6 symbol, as
//! ROCm 5's is.

mod device;
mod event;
mod memory;
mod module;
mod stream;

pub use device::{
    as_rocm5, hipDeviceGet, hipDeviceGetName, hipDeviceTotalMem, hipDriverGetVersion,
    hipGetDeviceCount, hipGetDeviceProperties, hipGetDevicePropertiesR0600, hipInit, hipSetDevice,
};
pub use event::{
    hipEventCreate, hipEventCreateWithFlags, hipEventDestroy, hipEventElapsedTime, hipEventQuery,
    hipEventRecord, hipEventSynchronize,
};
pub use memory::{
    hipFree, hipHostFree, hipHostGetDevicePointer, hipHostMalloc, hipMalloc, hipMemcpy,
    hipMemcpyAsync, hipMemsetAsync, hipMemsetD32Async, hipMemsetD8Async,
};
pub use module::{hipModuleGetFunction, hipModuleLaunchKernel, hipModuleLoadData, hipModuleUnload};
pub use stream::{
    hipDeviceSynchronize, hipStreamCreate, hipStreamCreateWithFlags, hipStreamDestroy,
    hipStreamQuery, hipStreamSynchronize, hipStreamWaitEvent,
};

use crate::calls::{self, CallKind, On};
use crate::driver::{self, Driver, Fault, Limits};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// A HIP call's result.
pub type HipError = c_int;
/// An opaque handle (module, function, stream, event) or a device
/// pointer.
pub type HipPtr = *mut c_void;

/// The codes this stand-in returns, as `hip_runtime_api.h` numbers them.
pub mod code {
    use super::HipError;
    /// The call succeeded.
    pub const SUCCESS: HipError = crate::driver::SUCCESS;
    /// An argument is out of range.
    pub const INVALID_VALUE: HipError = crate::driver::INVALID_VALUE;
    /// An allocation failed.
    pub const OUT_OF_MEMORY: HipError = 2;
    /// A copy direction `hipMemcpyKind` does not have.
    pub const INVALID_MEMCPY_DIRECTION: HipError = 21;
    /// No such device.
    pub const INVALID_DEVICE: HipError = 101;
    /// The image is not a code object the runtime can load.
    pub const INVALID_IMAGE: HipError = 200;
    /// The code object is for another processor.
    pub const NO_BINARY_FOR_GPU: HipError = 209;
    /// A handle the runtime did not hand out; an event without timing, or
    /// never recorded, to `hipEventElapsedTime`.
    pub const INVALID_HANDLE: HipError = 400;
    /// No kernel of that name in the module.
    pub const NOT_FOUND: HipError = 500;
    /// Work is not complete (never, here: work runs at the call).
    pub const NOT_READY: HipError = 600;
    /// A kernel accessed memory outside every allocation.
    pub const ILLEGAL_ADDRESS: HipError = 700;
    /// A kernel's threads never met.
    pub const LAUNCH_TIMEOUT: HipError = 702;
    /// A kernel failed otherwise (a misaligned access among them).
    pub const LAUNCH_FAILURE: HipError = 719;
}

/// The device's limits: its processor's LDS is a block's shared memory.
fn limits() -> Limits {
    let lds = crate::hsaco::lds_bytes(&device_gfx());
    Limits {
        threads: 1024,
        block: [1024, 1024, 1024],
        grid: [i32::MAX as u32, 65_535, 65_535],
        shared: lds,
        shared_optin: lds,
    }
}

static DRIVER: Mutex<Option<Driver>> = Mutex::new(None);

/// The device's processor: `gfx942` unless `TILE_STANDIN_GFX` says.
fn device_gfx() -> String {
    std::env::var("TILE_STANDIN_GFX").unwrap_or_else(|_| "gfx942".into())
}

fn with_driver(f: impl FnOnce(&mut Driver) -> HipError) -> HipError {
    f(driver::lock(&DRIVER).get_or_insert_with(Driver::default))
}

/// Logs a call of `name` ([`crate::calls`]), its stream and serialization
/// read from the runtime's streams.
fn log(name: &'static str, kind: CallKind, on: On) {
    calls::record(
        driver::lock(&DRIVER).get_or_insert_with(Driver::default),
        name,
        kind,
        on,
    );
}

/// The sticky error of a faulted launch, or success.
fn sticky(d: &Driver) -> HipError {
    d.sticky.map_or(code::SUCCESS, fault_code)
}

/// The runtime's code for a faulted launch.
fn fault_code(fault: Fault) -> HipError {
    match fault {
        Fault::IllegalAddress => code::ILLEGAL_ADDRESS,
        Fault::Timeout => code::LAUNCH_TIMEOUT,
        Fault::Misaligned | Fault::Failed => code::LAUNCH_FAILURE,
    }
}
