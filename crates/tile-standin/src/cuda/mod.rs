//! The CUDA driver API, as far as `tile-runtime` calls it through its own
//! bindings: initialization, the device and its attributes, the primary
//! context, device and pinned host memory (`memory.rs`, `host.rs`), copies
//! and fills, synchronous and asynchronous, PTX modules and their
//! functions (`module.rs`), streams (`stream.rs`), events (`event.rs`),
//! launches and synchronization, stream capture and graphs (`graph.rs`),
//! and the TMA's tensor maps (`tensor_map.rs`).
//!
//! Handles are numbers the stand-in hands out; a call with one it did not
//! hand out, or already took back, fails with `CUDA_ERROR_INVALID_HANDLE`
//! instead of touching memory. Besides its own, every call taking a stream
//! takes 0 (the legacy NULL stream), `CU_STREAM_LEGACY` (1) and
//! `CU_STREAM_PER_THREAD` (2). Launches, copies and fills run on the
//! calling thread before the call returns, asynchronous ones included, so
//! streams are always idle and recorded events complete; a fault inside a
//! launch becomes the context's sticky error, returned by the next
//! synchronization, copy or launch, as on hardware. Every call is logged
//! ([`crate::calls`]).
//!
//! The device is an `sm_80` (`TILE_STANDIN_SM=90` makes it an `sm_90`) with
//! the limits of the real one: 1,024 threads and 48 KiB of shared memory
//! per block, grids of 2^31 - 1 × 65,535 × 65,535 blocks; its clocks and
//! memory bus are an A100's (an H100's as an `sm_90`), with 16 GiB of
//! memory and unified addressing.

mod event;
mod graph;
mod host;
mod launch_ex;
mod memory;
mod module;
mod stream;
mod tensor_map;

pub use event::{
    cuEventCreate, cuEventDestroy_v2, cuEventElapsedTime, cuEventQuery, cuEventRecord,
    cuEventSynchronize,
};
pub use graph::{
    cuGraphDestroy, cuGraphExecDestroy, cuGraphInstantiateWithFlags, cuGraphLaunch,
    cuStreamBeginCapture_v2, cuStreamEndCapture, cuStreamIsCapturing,
};
pub use host::{cuMemFreeHost, cuMemHostAlloc, cuMemHostGetDevicePointer_v2};
pub use launch_ex::{cuLaunchKernelEx, LaunchAttribute, LaunchConfig};
pub use memory::{
    cuMemAlloc_v2, cuMemFree_v2, cuMemcpyDtoDAsync_v2, cuMemcpyDtoD_v2, cuMemcpyDtoHAsync_v2,
    cuMemcpyDtoH_v2, cuMemcpyHtoDAsync_v2, cuMemcpyHtoD_v2, cuMemsetD32Async, cuMemsetD8Async,
    cuMemsetD8_v2,
};
pub use module::{
    cuFuncSetAttribute, cuLaunchKernel, cuModuleGetFunction, cuModuleLoadDataEx, cuModuleUnload,
};
pub use stream::{
    cuStreamCreate, cuStreamDestroy_v2, cuStreamQuery, cuStreamSynchronize, cuStreamWaitEvent,
};
pub use tensor_map::cuTensorMapEncodeTiled;

use crate::calls::{self, CallKind, On};
use crate::capture::Use;
use crate::driver::{self, put, put_str, Driver, Fault, Limits};
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

/// A driver call's result.
pub type CUresult = c_int;
/// A device ordinal.
pub type CUdevice = c_int;
/// A device address.
pub type CUdeviceptr = u64;
/// An opaque handle (context, module, function, stream, event, graph).
pub type Handle = *mut c_void;

/// The codes this stand-in returns, as `cuda.h` numbers them.
pub mod code {
    use super::CUresult;
    /// The call succeeded.
    pub const SUCCESS: CUresult = crate::driver::SUCCESS;
    /// An argument is out of range.
    pub const INVALID_VALUE: CUresult = crate::driver::INVALID_VALUE;
    /// An allocation failed.
    pub const OUT_OF_MEMORY: CUresult = 2;
    /// `cuInit` has not been called.
    pub const NOT_INITIALIZED: CUresult = 3;
    /// No such device.
    pub const INVALID_DEVICE: CUresult = 101;
    /// The image is not one the driver can load.
    pub const INVALID_IMAGE: CUresult = 200;
    /// No context is current on the calling thread.
    pub const INVALID_CONTEXT: CUresult = 201;
    /// The PTX JIT rejected the PTX.
    pub const INVALID_PTX: CUresult = 218;
    /// A handle the driver did not hand out; an event without timing, or
    /// never recorded, to `cuEventElapsedTime`.
    pub const INVALID_HANDLE: CUresult = 400;
    /// The stream is not in the state the call needs: ending a capture
    /// that is not open, beginning one twice.
    pub const ILLEGAL_STATE: CUresult = crate::capture::ILLEGAL_STATE;
    /// No kernel of that name in the module.
    pub const NOT_FOUND: CUresult = 500;
    /// Work is not complete (never, here: work runs at the call).
    pub const NOT_READY: CUresult = 600;
    /// A kernel accessed memory outside every allocation.
    pub const ILLEGAL_ADDRESS: CUresult = 700;
    /// A kernel's threads never met (on hardware: the watchdog).
    pub const LAUNCH_TIMEOUT: CUresult = 702;
    /// A kernel's access was not aligned for its instruction.
    pub const MISALIGNED_ADDRESS: CUresult = 716;
    /// A kernel failed otherwise.
    pub const LAUNCH_FAILED: CUresult = 719;
    /// The call is not permitted while the stream, or some stream,
    /// captures.
    pub const STREAM_CAPTURE_UNSUPPORTED: CUresult = crate::capture::UNSUPPORTED;
    /// An earlier error invalidated the stream's capture.
    pub const STREAM_CAPTURE_INVALIDATED: CUresult = crate::capture::INVALIDATED;
    /// The call would merge two captures.
    pub const STREAM_CAPTURE_MERGE: CUresult = crate::capture::MERGE;
    /// The capture did not begin on this stream.
    pub const STREAM_CAPTURE_UNMATCHED: CUresult = crate::capture::UNMATCHED;
    /// A stream that joined the capture has work not joined back.
    pub const STREAM_CAPTURE_UNJOINED: CUresult = crate::capture::UNJOINED;
    /// A capture would depend on work outside it.
    pub const STREAM_CAPTURE_ISOLATION: CUresult = crate::capture::ISOLATION;
    /// The legacy stream would depend on a capturing blocking stream.
    pub const STREAM_CAPTURE_IMPLICIT: CUresult = crate::capture::IMPLICIT;
    /// The event was last recorded in a capture still open.
    pub const CAPTURED_EVENT: CUresult = crate::capture::CAPTURED_EVENT;
    /// A capture not begun `RELAXED` ended on another thread.
    pub const STREAM_CAPTURE_WRONG_THREAD: CUresult = crate::capture::WRONG_THREAD;
}

/// The device's limits: 1,024 threads and 48 KiB of shared memory per
/// block, grids of 2^31 - 1 × 65,535 × 65,535 blocks.
const LIMITS: Limits = Limits {
    threads: 1024,
    block: [1024, 1024, 64],
    grid: [i32::MAX as u32, 65_535, 65_535],
    shared: tile_abi::image::NVIDIA_STATIC_SHARED,
    shared_optin: 0,
};

/// The device's limits: [`LIMITS`] with the shared memory a block may opt
/// in to on its architecture (`TILE_STANDIN_SM`).
pub(super) fn limits() -> Limits {
    let shared_optin = match device_sm() {
        80 | 87 => 163 * 1024,
        86 | 89 | 120 | 121 => 99 * 1024,
        90 | 100 | 103 => 227 * 1024,
        _ => 64 * 1024,
    };
    Limits {
        shared_optin,
        ..LIMITS
    }
}

/// The device's compute capability: `sm_80` unless `TILE_STANDIN_SM` says.
pub(super) fn device_sm() -> u32 {
    std::env::var("TILE_STANDIN_SM")
        .ok()
        .and_then(|s| s.trim_start_matches("sm_").parse().ok())
        .unwrap_or(80)
}

static INITIALIZED: AtomicBool = AtomicBool::new(false);
/// References to the primary context (`cuDevicePrimaryCtxRetain`).
static RETAINED: AtomicU32 = AtomicU32::new(0);
static DRIVER: Mutex<Option<Driver>> = Mutex::new(None);

thread_local! {
    /// Whether the primary context is current on this thread.
    static CURRENT: Cell<bool> = const { Cell::new(false) };
}

/// The address of the primary context's handle.
fn context_handle() -> Handle {
    static CONTEXT: u8 = 0;
    std::ptr::addr_of!(CONTEXT).cast_mut().cast()
}

/// Runs `f` on the driver's state once `cuInit` has run; with a context
/// current on this thread if `needs_context`.
fn with_driver(needs_context: bool, f: impl FnOnce(&mut Driver) -> CUresult) -> CUresult {
    if !INITIALIZED.load(Ordering::Acquire) {
        return code::NOT_INITIALIZED;
    }
    if needs_context && !CURRENT.with(Cell::get) {
        return code::INVALID_CONTEXT;
    }
    f(driver::lock(&DRIVER).get_or_insert_with(Driver::default))
}

/// Logs a call of `name` ([`crate::calls`]), its stream and serialization
/// read from the driver's streams.
fn log(name: &'static str, kind: CallKind, on: On) {
    calls::record(
        driver::lock(&DRIVER).get_or_insert_with(Driver::default),
        name,
        kind,
        on,
    );
}

/// The sticky error of a faulted launch, or success.
fn sticky(d: &Driver) -> CUresult {
    d.sticky.map_or(code::SUCCESS, fault_code)
}

/// `cuInit`: flags must be 0.
///
/// # Safety
///
/// None: safe to call with any value.
#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CUresult {
    log("cuInit", CallKind::Other, On::Nothing);
    if flags != 0 {
        return code::INVALID_VALUE;
    }
    INITIALIZED.store(true, Ordering::Release);
    code::SUCCESS
}

/// The driver version reported: CUDA 12.8's.
const DRIVER_VERSION: c_int = 12080;
/// The device memory reported: 16 GiB.
const TOTAL_MEMORY: usize = 16 << 30;

/// `cuDriverGetVersion`: 12080 (CUDA 12.8); needs no `cuInit`.
///
/// # Safety
///
/// `version` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CUresult {
    log("cuDriverGetVersion", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    unsafe { put(version, DRIVER_VERSION) }
}

/// `cuDeviceGetCount`: one device.
///
/// # Safety
///
/// `count` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
    log("cuDeviceGetCount", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    with_driver(false, |_| unsafe { put(count, 1) })
}

/// `cuDeviceGet`: device 0 only.
///
/// # Safety
///
/// `device` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CUresult {
    log("cuDeviceGet", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        if ordinal != 0 {
            return code::INVALID_DEVICE;
        }
        // SAFETY: the caller's contract.
        unsafe { put(device, 0) }
    })
}

/// `cuDeviceGetName`: `tile stand-in (sm_80)`, truncated to `len` bytes
/// with its NUL.
///
/// # Safety
///
/// `name` is null or valid for writes of `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(
    name: *mut c_char,
    len: c_int,
    device: CUdevice,
) -> CUresult {
    log("cuDeviceGetName", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        let text = format!("tile stand-in (sm_{})", device_sm());
        // SAFETY: `name` holds `len` bytes (the caller's contract).
        unsafe { put_str(name.cast(), usize::try_from(len).unwrap_or(0), &text) }
    })
}

/// `cuDeviceTotalMem_v2`: 16 GiB.
///
/// # Safety
///
/// `bytes` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: CUdevice) -> CUresult {
    log("cuDeviceTotalMem_v2", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        // SAFETY: the caller's contract.
        unsafe { put(bytes, TOTAL_MEMORY) }
    })
}

/// The streaming multiprocessors the stand-in reports.
const MULTIPROCESSORS: c_int = 2;

/// `cuDeviceGetAttribute` for the attributes a launch depends on, the
/// clocks and memory bus (an A100's, an H100's as an `sm_90`), and host
/// memory mapping and unified addressing (both supported).
///
/// # Safety
///
/// `value` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    value: *mut c_int,
    attribute: c_int,
    device: CUdevice,
) -> CUresult {
    log("cuDeviceGetAttribute", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        let sm = device_sm() as c_int;
        let hopper = sm >= 90;
        let v = match attribute {
            1 => LIMITS.threads as c_int,
            2..=4 => LIMITS.block[(attribute - 2) as usize] as c_int,
            5..=7 => LIMITS.grid[(attribute - 5) as usize] as c_int,
            8 => LIMITS.shared as c_int,
            97 => limits().shared_optin as c_int,
            10 => 32,
            16 => MULTIPROCESSORS,
            // CLOCK_RATE and MEMORY_CLOCK_RATE, in kHz.
            13 if hopper => 1_980_000,
            13 => 1_410_000,
            36 if hopper => 2_619_000,
            36 => 1_215_000,
            // GLOBAL_MEMORY_BUS_WIDTH, in bits.
            37 => 5120,
            // CAN_MAP_HOST_MEMORY, UNIFIED_ADDRESSING.
            19 | 41 => 1,
            // MEMORY_POOLS_SUPPORTED: no stream-ordered allocator (so a
            // library allocating through the driver uses cuMemAlloc).
            115 => 0,
            75 => sm / 10,
            76 => sm % 10,
            _ => return code::INVALID_VALUE,
        };
        // SAFETY: the caller's contract.
        unsafe { put(value, v) }
    })
}

/// `cuDevicePrimaryCtxRetain`.
///
/// # Safety
///
/// `context` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(
    context: *mut Handle,
    device: CUdevice,
) -> CUresult {
    log("cuDevicePrimaryCtxRetain", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        // SAFETY: the caller's contract.
        let status = unsafe { put(context, context_handle()) };
        if status == code::SUCCESS {
            RETAINED.fetch_add(1, Ordering::AcqRel);
        }
        status
    })
}

/// `cuDevicePrimaryCtxRelease_v2`: one release per retain.
///
/// # Safety
///
/// None: safe to call with any value.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(device: CUdevice) -> CUresult {
    log("cuDevicePrimaryCtxRelease_v2", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        if RETAINED
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_err()
        {
            return code::INVALID_CONTEXT;
        }
        code::SUCCESS
    })
}

/// `cuCtxSetCurrent`: the primary context, or none (null).
///
/// # Safety
///
/// None: the handle is compared, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(context: Handle) -> CUresult {
    log("cuCtxSetCurrent", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        let current = if context.is_null() {
            false
        } else if context == context_handle() && RETAINED.load(Ordering::Acquire) > 0 {
            true
        } else {
            return code::INVALID_CONTEXT;
        };
        CURRENT.with(|c| c.set(current));
        code::SUCCESS
    })
}

/// `cuCtxSynchronize`: launches are synchronous; returns a faulted
/// launch's error.
///
/// # Safety
///
/// None.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> CUresult {
    log("cuCtxSynchronize", CallKind::Sync, On::Waits(0));
    with_driver(true, |d| match d.admit(Use::WaitAll) {
        Err(refused) => refused,
        Ok(_) => sticky(d),
    })
}

/// `cuCtxGetCurrent`: the primary context if it is current on this
/// thread, else null.
///
/// # Safety
///
/// `context` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(context: *mut Handle) -> CUresult {
    log("cuCtxGetCurrent", CallKind::Other, On::Nothing);
    with_driver(false, |_| {
        let current = if CURRENT.with(Cell::get) {
            context_handle()
        } else {
            std::ptr::null_mut()
        };
        // SAFETY: the caller's contract.
        unsafe { put(context, current) }
    })
}

/// `cuCtxGetDevice`: device 0, the current context's.
///
/// # Safety
///
/// `device` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut CUdevice) -> CUresult {
    log("cuCtxGetDevice", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    with_driver(true, |_| unsafe { put(device, 0) })
}

/// The driver's code for a faulted launch.
fn fault_code(fault: Fault) -> CUresult {
    match fault {
        Fault::IllegalAddress => code::ILLEGAL_ADDRESS,
        Fault::Misaligned => code::MISALIGNED_ADDRESS,
        Fault::Timeout => code::LAUNCH_TIMEOUT,
        Fault::Failed => code::LAUNCH_FAILED,
    }
}
