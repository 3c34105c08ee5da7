//! The HIP runtime entry points the runtime calls, bound by name from
//! `libamdhip64` at run time, with the constants of `hip_runtime_api.h`.

use crate::driver::GpuApi;
use crate::error::Error;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// A `hipError_t`: 0 for success.
pub(crate) type HipResult = c_int;
/// An opaque HIP object: a module, function, stream, event or
/// device pointer.
pub(crate) type HipPtr = *mut c_void;

/// `hipMemcpyKind` values.
pub(crate) const HOST_TO_DEVICE: c_int = 1;
pub(crate) const DEVICE_TO_HOST: c_int = 2;
pub(crate) const DEVICE_TO_DEVICE: c_int = 3;
/// `hipStreamCaptureModeRelaxed`.
pub(crate) const CAPTURE_RELAXED: c_int = 2;
/// `hipStreamNonBlocking`.
pub(crate) const STREAM_NON_BLOCKING: c_uint = 1;
/// `hipEventDisableTiming`.
pub(crate) const EVENT_DISABLE_TIMING: c_uint = 2;
/// `hipHostMallocPortable | hipHostMallocMapped`.
pub(crate) const HOST_ALLOC_MAPPED: c_uint = 1 | 2;
/// `hipErrorNotReady`.
pub(crate) const NOT_READY: HipResult = 600;

/// `HIP_LAUNCH_PARAM_*` markers of `hipModuleLaunchKernel`'s `extra`.
pub(crate) const PARAM_BUFFER_POINTER: usize = 1;
pub(crate) const PARAM_BUFFER_SIZE: usize = 2;
pub(crate) const PARAM_END: usize = 3;

/// `hipModuleLaunchKernel(f, grid xyz, block xyz, shared bytes, stream,
/// kernelParams, extra)`.
pub(crate) type LaunchKernel = unsafe extern "C" fn(
    HipPtr,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    HipPtr,
    *mut *mut c_void,
    *mut *mut c_void,
) -> HipResult;

/// The entry points, copied out of the library (valid for the rest of
/// the process: `crate::driver::library` never unloads it).
#[derive(Debug)]
pub(crate) struct Api {
    pub(crate) init: unsafe extern "C" fn(c_uint) -> HipResult,
    pub(crate) set_device: unsafe extern "C" fn(c_int) -> HipResult,
    pub(crate) total_mem: unsafe extern "C" fn(*mut usize, c_int) -> HipResult,
    pub(crate) malloc: unsafe extern "C" fn(*mut HipPtr, usize) -> HipResult,
    pub(crate) free: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) host_malloc: unsafe extern "C" fn(*mut HipPtr, usize, c_uint) -> HipResult,
    pub(crate) host_device_pointer: unsafe extern "C" fn(*mut HipPtr, HipPtr, c_uint) -> HipResult,
    pub(crate) host_free: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) memcpy_async:
        unsafe extern "C" fn(HipPtr, *const c_void, usize, c_int, HipPtr) -> HipResult,
    pub(crate) memset_async: unsafe extern "C" fn(HipPtr, c_int, usize, HipPtr) -> HipResult,
    pub(crate) memset_d32: unsafe extern "C" fn(HipPtr, c_int, usize, HipPtr) -> HipResult,
    pub(crate) load_data: unsafe extern "C" fn(*mut HipPtr, *const c_void) -> HipResult,
    pub(crate) get_function: unsafe extern "C" fn(*mut HipPtr, HipPtr, *const c_char) -> HipResult,
    pub(crate) unload: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) launch: LaunchKernel,
    pub(crate) synchronize: unsafe extern "C" fn() -> HipResult,
    pub(crate) stream_create: unsafe extern "C" fn(*mut HipPtr, c_uint) -> HipResult,
    pub(crate) stream_synchronize: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) stream_destroy: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) stream_wait_event: unsafe extern "C" fn(HipPtr, HipPtr, c_uint) -> HipResult,
    pub(crate) event_create: unsafe extern "C" fn(*mut HipPtr, c_uint) -> HipResult,
    pub(crate) event_record: unsafe extern "C" fn(HipPtr, HipPtr) -> HipResult,
    pub(crate) event_query: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) event_synchronize: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) event_elapsed: unsafe extern "C" fn(*mut f32, HipPtr, HipPtr) -> HipResult,
    pub(crate) event_destroy: unsafe extern "C" fn(HipPtr) -> HipResult,
    /// Graph capture (absent from old drivers).
    pub(crate) graphs: Option<Graphs>,
}

/// The entry points of stream capture and graph launch.
#[derive(Debug)]
pub(crate) struct Graphs {
    pub(crate) begin_capture: unsafe extern "C" fn(HipPtr, c_int) -> HipResult,
    pub(crate) end_capture: unsafe extern "C" fn(HipPtr, *mut HipPtr) -> HipResult,
    pub(crate) instantiate: unsafe extern "C" fn(*mut HipPtr, HipPtr, u64) -> HipResult,
    pub(crate) launch: unsafe extern "C" fn(HipPtr, HipPtr) -> HipResult,
    pub(crate) exec_destroy: unsafe extern "C" fn(HipPtr) -> HipResult,
    pub(crate) destroy: unsafe extern "C" fn(HipPtr) -> HipResult,
}

/// A function pointer of `T` named `name` from `library`, or why not.
fn find<T: Copy>(library: &Library, name: &str) -> Result<T, String> {
    let symbol = format!("{name}\0");
    // SAFETY: every `T` requested (here and in `Properties::find`) is the C
    // signature of `name` in the HIP headers; the pointer is copied out,
    // and the library stays loaded for the rest of the process.
    unsafe { library.get::<T>(symbol.as_bytes()) }
        .map(|found| *found)
        .map_err(|e| format!("{name}: {e}"))
}

/// A function pointer of `T` named `name` from `library`.
pub(crate) fn entry<T: Copy>(library: &Library, name: &str) -> Result<T, Error> {
    find(library, name).map_err(missing)
}

/// The error of a runtime without an entry point.
fn missing(reason: String) -> Error {
    Error::NoDriver {
        api: "HIP",
        tried: GpuApi::Hip.libraries().join(", "),
        reason,
    }
}

impl Api {
    /// Binds every required entry point, or names the first one missing.
    fn bind(library: &Library) -> Result<Api, String> {
        let graphs = (|| {
            Ok::<_, String>(Graphs {
                begin_capture: find(library, "hipStreamBeginCapture")?,
                end_capture: find(library, "hipStreamEndCapture")?,
                instantiate: find(library, "hipGraphInstantiateWithFlags")?,
                launch: find(library, "hipGraphLaunch")?,
                exec_destroy: find(library, "hipGraphExecDestroy")?,
                destroy: find(library, "hipGraphDestroy")?,
            })
        })()
        .ok();
        Ok(Api {
            init: find(library, "hipInit")?,
            set_device: find(library, "hipSetDevice")?,
            total_mem: find(library, "hipDeviceTotalMem")?,
            malloc: find(library, "hipMalloc")?,
            free: find(library, "hipFree")?,
            host_malloc: find(library, "hipHostMalloc")?,
            host_device_pointer: find(library, "hipHostGetDevicePointer")?,
            host_free: find(library, "hipHostFree")?,
            memcpy_async: find(library, "hipMemcpyAsync")?,
            memset_async: find(library, "hipMemsetAsync")?,
            memset_d32: find(library, "hipMemsetD32Async")?,
            load_data: find(library, "hipModuleLoadData")?,
            get_function: find(library, "hipModuleGetFunction")?,
            unload: find(library, "hipModuleUnload")?,
            launch: find(library, "hipModuleLaunchKernel")?,
            synchronize: find(library, "hipDeviceSynchronize")?,
            stream_create: find(library, "hipStreamCreateWithFlags")?,
            stream_synchronize: find(library, "hipStreamSynchronize")?,
            stream_destroy: find(library, "hipStreamDestroy")?,
            stream_wait_event: find(library, "hipStreamWaitEvent")?,
            event_create: find(library, "hipEventCreateWithFlags")?,
            event_record: find(library, "hipEventRecord")?,
            event_query: find(library, "hipEventQuery")?,
            event_synchronize: find(library, "hipEventSynchronize")?,
            event_elapsed: find(library, "hipEventElapsedTime")?,
            event_destroy: find(library, "hipEventDestroy")?,
            graphs,
        })
    }
}

/// The runtime's entry points, bound once per process.
pub(crate) fn api() -> Result<&'static Api, Error> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    let library = crate::driver::library(GpuApi::Hip)?;
    API.get_or_init(|| Api::bind(library))
        .as_ref()
        .map_err(|reason| missing(format!("the runtime lacks an entry point: {reason}")))
}
