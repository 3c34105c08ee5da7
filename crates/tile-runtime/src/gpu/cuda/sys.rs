//! The CUDA driver API entry points the runtime calls, bound by name from
//! the driver library at run time (`crate::driver::library`), so building
//! needs no CUDA and no binding crate whose features could clash with a
//! user's. The signatures, enum values and flags follow `cuda.h`; the
//! `_v2` names are the ones `cuda.h` maps the plain names to since CUDA
//! 3.2 and 4.0.
//!
//! Every required entry point exists in every driver since CUDA 11.4;
//! the graph ones may be absent, and using them then says so, and so may
//! `cuLaunchKernelEx` (CUDA 12.0), without which launches do not overlap.

use crate::driver::GpuApi;
use crate::error::Error;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// A `CUresult`: 0 for success.
pub(crate) type CuResult = c_int;
/// A `CUdevice`: the device's ordinal.
pub(crate) type CuDevice = c_int;
/// A `CUdeviceptr`.
pub(crate) type CuPtr = u64;
/// An opaque driver object: `CUcontext`, `CUmodule`, `CUfunction`,
/// `CUstream`, `CUevent`.
pub(crate) type Handle = *mut c_void;

/// `CU_DEVICE_ATTRIBUTE_*` values read.
pub(crate) mod attribute {
    use std::ffi::c_int;
    /// The SM clock in kHz.
    pub(crate) const CLOCK_RATE_KHZ: c_int = 13;
    /// Streaming multiprocessors.
    pub(crate) const MULTIPROCESSORS: c_int = 16;
    /// The memory clock in kHz.
    pub(crate) const MEMORY_CLOCK_KHZ: c_int = 36;
    /// The memory bus width in bits.
    pub(crate) const MEMORY_BUS_BITS: c_int = 37;
    /// The compute capability's major number.
    pub(crate) const CAPABILITY_MAJOR: c_int = 75;
    /// The compute capability's minor number.
    pub(crate) const CAPABILITY_MINOR: c_int = 76;
    /// The most shared memory a block may opt in to.
    pub(crate) const MAX_SHARED_OPTIN: c_int = 97;
}

/// `CU_JIT_ERROR_LOG_BUFFER`.
pub(crate) const JIT_ERROR_LOG_BUFFER: c_int = 5;
/// `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`.
pub(crate) const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
pub(crate) const FUNC_MAX_DYNAMIC_SHARED: c_int = 8;
/// `CU_STREAM_CAPTURE_MODE_RELAXED`: other threads' calls are not
/// restricted while a stream captures.
pub(crate) const CAPTURE_RELAXED: c_int = 2;
/// `CU_STREAM_NON_BLOCKING`: a stream that does not synchronize with the
/// legacy default stream.
pub(crate) const STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_DISABLE_TIMING`.
pub(crate) const EVENT_DISABLE_TIMING: c_uint = 2;
/// `CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP`: pinned memory
/// of every context, mapped into the device's address space.
pub(crate) const HOST_ALLOC_MAPPED: c_uint = 1 | 2;
/// `CUDA_ERROR_NOT_READY`: queued work has not finished.
pub(crate) const NOT_READY: CuResult = 600;

/// `cuLaunchKernel(f, grid xyz, block xyz, shared bytes, stream, params,
/// extra)`.
pub(crate) type LaunchKernel = unsafe extern "C" fn(
    Handle,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    Handle,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CuResult;

/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: the launch
/// may start before the one before it on its stream has finished, and
/// waits for it at `griddepcontrol.wait` (programmatic dependent launch).
pub(crate) const ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: u32 = 6;

/// `CUlaunchAttribute`: an id, padding to 8 bytes, a 64-byte value union.
#[repr(C)]
pub(crate) struct LaunchAttribute {
    pub(crate) id: u32,
    pub(crate) pad: [u8; 4],
    /// `CUlaunchAttributeValue`; an `int` flag in its first 4 bytes.
    pub(crate) value: [u64; 8],
}

/// `CUlaunchConfig`.
#[repr(C)]
pub(crate) struct LaunchConfig {
    pub(crate) grid: [c_uint; 3],
    pub(crate) block: [c_uint; 3],
    pub(crate) shared: c_uint,
    pub(crate) stream: Handle,
    pub(crate) attrs: *mut LaunchAttribute,
    pub(crate) num_attrs: c_uint,
}

/// `cuLaunchKernelEx(config, f, params, extra)` (CUDA 12.0).
pub(crate) type LaunchKernelEx = unsafe extern "C" fn(
    *const LaunchConfig,
    Handle,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CuResult;

/// `cuModuleLoadDataEx(module, image, options, option kinds, values)`.
pub(crate) type ModuleLoadDataEx = unsafe extern "C" fn(
    *mut Handle,
    *const c_void,
    c_uint,
    *mut c_int,
    *mut *mut c_void,
) -> CuResult;

/// The entry points, copied out of the library (valid for the rest of the
/// process: `crate::driver::library` never unloads it).
#[derive(Debug)]
pub(crate) struct Api {
    pub(crate) init: unsafe extern "C" fn(c_uint) -> CuResult,
    pub(crate) device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub(crate) device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    pub(crate) device_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    pub(crate) device_attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    pub(crate) device_total_mem: unsafe extern "C" fn(*mut usize, CuDevice) -> CuResult,
    pub(crate) primary_retain: unsafe extern "C" fn(*mut Handle, CuDevice) -> CuResult,
    pub(crate) primary_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    pub(crate) ctx_set_current: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) ctx_get_current: unsafe extern "C" fn(*mut Handle) -> CuResult,
    pub(crate) ctx_get_device: unsafe extern "C" fn(*mut CuDevice) -> CuResult,
    pub(crate) ctx_synchronize: unsafe extern "C" fn() -> CuResult,
    pub(crate) mem_alloc: unsafe extern "C" fn(*mut CuPtr, usize) -> CuResult,
    pub(crate) mem_free: unsafe extern "C" fn(CuPtr) -> CuResult,
    pub(crate) host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CuResult,
    pub(crate) host_free: unsafe extern "C" fn(*mut c_void) -> CuResult,
    pub(crate) host_device_pointer:
        unsafe extern "C" fn(*mut CuPtr, *mut c_void, c_uint) -> CuResult,
    pub(crate) copy_htod: unsafe extern "C" fn(CuPtr, *const c_void, usize, Handle) -> CuResult,
    pub(crate) copy_dtoh: unsafe extern "C" fn(*mut c_void, CuPtr, usize, Handle) -> CuResult,
    pub(crate) copy_dtod: unsafe extern "C" fn(CuPtr, CuPtr, usize, Handle) -> CuResult,
    pub(crate) memset_d8: unsafe extern "C" fn(CuPtr, u8, usize, Handle) -> CuResult,
    pub(crate) memset_d32: unsafe extern "C" fn(CuPtr, c_uint, usize, Handle) -> CuResult,
    pub(crate) module_load: ModuleLoadDataEx,
    pub(crate) module_function:
        unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult,
    pub(crate) module_unload: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) function_attribute: unsafe extern "C" fn(Handle, c_int, c_int) -> CuResult,
    pub(crate) stream_create: unsafe extern "C" fn(*mut Handle, c_uint) -> CuResult,
    pub(crate) stream_destroy: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) stream_synchronize: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) stream_wait_event: unsafe extern "C" fn(Handle, Handle, c_uint) -> CuResult,
    pub(crate) event_create: unsafe extern "C" fn(*mut Handle, c_uint) -> CuResult,
    pub(crate) event_record: unsafe extern "C" fn(Handle, Handle) -> CuResult,
    pub(crate) event_query: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) event_synchronize: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) event_elapsed: unsafe extern "C" fn(*mut f32, Handle, Handle) -> CuResult,
    pub(crate) event_destroy: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) launch_kernel: LaunchKernel,
    /// Launches with attributes (CUDA 12.0+), for programmatic dependent
    /// launch.
    pub(crate) launch_kernel_ex: Option<LaunchKernelEx>,
    /// Graph capture (absent from old drivers).
    pub(crate) graphs: Option<Graphs>,
}

/// The entry points of stream capture and graph launch.
#[derive(Debug)]
pub(crate) struct Graphs {
    pub(crate) begin_capture: unsafe extern "C" fn(Handle, c_int) -> CuResult,
    pub(crate) end_capture: unsafe extern "C" fn(Handle, *mut Handle) -> CuResult,
    pub(crate) instantiate: unsafe extern "C" fn(*mut Handle, Handle, u64) -> CuResult,
    pub(crate) launch: unsafe extern "C" fn(Handle, Handle) -> CuResult,
    pub(crate) exec_destroy: unsafe extern "C" fn(Handle) -> CuResult,
    pub(crate) destroy: unsafe extern "C" fn(Handle) -> CuResult,
}

/// A function pointer of type `T` named `name` in `library`; `T` must be
/// `name`'s C signature in `cuda.h`.
fn entry<T: Copy>(library: &Library, name: &str) -> Result<T, String> {
    let symbol = format!("{name}\0");
    // SAFETY: every `T` requested below is the C signature of `name` in
    // `cuda.h`; the pointer is copied out, and the library stays loaded for
    // the rest of the process.
    unsafe { library.get::<T>(symbol.as_bytes()) }
        .map(|found| *found)
        .map_err(|e| format!("{name}: {e}"))
}

impl Api {
    /// Binds every required entry point, or names the first one missing.
    fn bind(library: &Library) -> Result<Api, String> {
        let graphs = (|| {
            Ok::<_, String>(Graphs {
                begin_capture: entry(library, "cuStreamBeginCapture_v2")?,
                end_capture: entry(library, "cuStreamEndCapture")?,
                instantiate: entry(library, "cuGraphInstantiateWithFlags")?,
                launch: entry(library, "cuGraphLaunch")?,
                exec_destroy: entry(library, "cuGraphExecDestroy")?,
                destroy: entry(library, "cuGraphDestroy")?,
            })
        })()
        .ok();
        Ok(Api {
            init: entry(library, "cuInit")?,
            device_count: entry(library, "cuDeviceGetCount")?,
            device_get: entry(library, "cuDeviceGet")?,
            device_name: entry(library, "cuDeviceGetName")?,
            device_attribute: entry(library, "cuDeviceGetAttribute")?,
            device_total_mem: entry(library, "cuDeviceTotalMem_v2")?,
            primary_retain: entry(library, "cuDevicePrimaryCtxRetain")?,
            primary_release: entry(library, "cuDevicePrimaryCtxRelease_v2")?,
            ctx_set_current: entry(library, "cuCtxSetCurrent")?,
            ctx_get_current: entry(library, "cuCtxGetCurrent")?,
            ctx_get_device: entry(library, "cuCtxGetDevice")?,
            ctx_synchronize: entry(library, "cuCtxSynchronize")?,
            mem_alloc: entry(library, "cuMemAlloc_v2")?,
            mem_free: entry(library, "cuMemFree_v2")?,
            host_alloc: entry(library, "cuMemHostAlloc")?,
            host_free: entry(library, "cuMemFreeHost")?,
            host_device_pointer: entry(library, "cuMemHostGetDevicePointer_v2")?,
            copy_htod: entry(library, "cuMemcpyHtoDAsync_v2")?,
            copy_dtoh: entry(library, "cuMemcpyDtoHAsync_v2")?,
            copy_dtod: entry(library, "cuMemcpyDtoDAsync_v2")?,
            memset_d8: entry(library, "cuMemsetD8Async")?,
            memset_d32: entry(library, "cuMemsetD32Async")?,
            module_load: entry(library, "cuModuleLoadDataEx")?,
            module_function: entry(library, "cuModuleGetFunction")?,
            module_unload: entry(library, "cuModuleUnload")?,
            function_attribute: entry(library, "cuFuncSetAttribute")?,
            stream_create: entry(library, "cuStreamCreate")?,
            stream_destroy: entry(library, "cuStreamDestroy_v2")?,
            stream_synchronize: entry(library, "cuStreamSynchronize")?,
            stream_wait_event: entry(library, "cuStreamWaitEvent")?,
            event_create: entry(library, "cuEventCreate")?,
            event_record: entry(library, "cuEventRecord")?,
            event_query: entry(library, "cuEventQuery")?,
            event_synchronize: entry(library, "cuEventSynchronize")?,
            event_elapsed: entry(library, "cuEventElapsedTime")?,
            event_destroy: entry(library, "cuEventDestroy_v2")?,
            launch_kernel: entry(library, "cuLaunchKernel")?,
            launch_kernel_ex: entry(library, "cuLaunchKernelEx").ok(),
            graphs,
        })
    }
}

/// The driver's entry points, bound once per process; without a driver, or
/// with one missing a required entry point, [`Error::NoDriver`] saying
/// which.
pub(crate) fn api() -> Result<&'static Api, Error> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    let library = crate::driver::library(GpuApi::Cuda)?;
    API.get_or_init(|| Api::bind(library))
        .as_ref()
        .map_err(|reason| Error::NoDriver {
            api: "CUDA",
            tried: GpuApi::Cuda.libraries().join(", "),
            reason: format!("the driver lacks an entry point the runtime needs: {reason}"),
        })
}
