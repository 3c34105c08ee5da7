//! The CUDA driver API, as far as `tile-runtime` (through `cudarc`) calls
//! it: initialization, the device and its attributes, the primary context,
//! memory and copies, PTX modules and their functions, streams, launches
//! and synchronization, and the TMA's tensor maps (`tensor_map.rs`).
//!
//! Handles are numbers the stand-in hands out; a call with one it did not
//! hand out, or already took back, fails with `CUDA_ERROR_INVALID_HANDLE`
//! instead of touching memory. Launches run synchronously on the calling
//! thread; a fault inside one becomes the context's sticky error, returned
//! by the next synchronization or copy, as on hardware.
//!
//! The device is an `sm_80` (`TILE_STANDIN_SM=90` makes it an `sm_90`) with
//! the limits of the real one: 1,024 threads and 48 KiB of shared memory
//! per block, grids of 2^31 - 1 × 65,535 × 65,535 blocks.

mod module;
mod tensor_map;

pub use module::{
    cuFuncSetAttribute, cuLaunchKernel, cuModuleGetFunction, cuModuleLoadDataEx, cuModuleUnload,
};
pub use tensor_map::cuTensorMapEncodeTiled;

use crate::driver::{self, put, put_str, Driver, Fault, Limits};
use crate::memory;
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
/// An opaque handle (context, module, function, stream).
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
    /// A handle the driver did not hand out.
    pub const INVALID_HANDLE: CUresult = 400;
    /// No kernel of that name in the module.
    pub const NOT_FOUND: CUresult = 500;
    /// A kernel accessed memory outside every allocation.
    pub const ILLEGAL_ADDRESS: CUresult = 700;
    /// A kernel's threads never met (on hardware: the watchdog).
    pub const LAUNCH_TIMEOUT: CUresult = 702;
    /// A kernel's access was not aligned for its instruction.
    pub const MISALIGNED_ADDRESS: CUresult = 716;
    /// A kernel failed otherwise.
    pub const LAUNCH_FAILED: CUresult = 719;
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
        86 | 89 => 99 * 1024,
        90 => 227 * 1024,
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

/// `cuInit`: flags must be 0.
///
/// # Safety
///
/// None: safe to call with any value.
#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CUresult {
    if flags != 0 {
        return code::INVALID_VALUE;
    }
    INITIALIZED.store(true, Ordering::Release);
    code::SUCCESS
}

/// `cuDeviceGetCount`: one device.
///
/// # Safety
///
/// `count` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
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
    with_driver(false, |_| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        let text = format!("tile stand-in (sm_{})", device_sm());
        // SAFETY: `name` holds `len` bytes (the caller's contract).
        unsafe { put_str(name.cast(), usize::try_from(len).unwrap_or(0), &text) }
    })
}

/// The streaming multiprocessors the stand-in reports.
const MULTIPROCESSORS: c_int = 2;

/// `cuDeviceGetAttribute` for the attributes a launch depends on.
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
    with_driver(false, |_| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        let sm = device_sm() as c_int;
        let v = match attribute {
            1 => LIMITS.threads as c_int,
            2..=4 => LIMITS.block[(attribute - 2) as usize] as c_int,
            5..=7 => LIMITS.grid[(attribute - 5) as usize] as c_int,
            8 => LIMITS.shared as c_int,
            97 => limits().shared_optin as c_int,
            10 => 32,
            16 => MULTIPROCESSORS,
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
    with_driver(true, |d| d.sticky.map_or(code::SUCCESS, fault_code))
}

/// `cuMemAlloc_v2`: zeroed memory, 256-byte aligned.
///
/// # Safety
///
/// `pointer` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(pointer: *mut CUdeviceptr, bytes: usize) -> CUresult {
    with_driver(true, |_| {
        if bytes == 0 || pointer.is_null() {
            return code::INVALID_VALUE;
        }
        match memory::alloc(bytes) {
            // SAFETY: the caller's contract.
            Some(address) => unsafe { put(pointer, address) },
            None => code::OUT_OF_MEMORY,
        }
    })
}

/// `cuMemFree_v2`: an address `cuMemAlloc_v2` returned, once.
///
/// # Safety
///
/// None: an unknown address is refused.
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(pointer: CUdeviceptr) -> CUresult {
    with_driver(true, |_| {
        if memory::free(pointer) {
            code::SUCCESS
        } else {
            code::INVALID_VALUE
        }
    })
}

/// A copy after the driver's checks; a faulted launch's error first.
fn copy(d: &Driver, to: u64, from: u64, bytes: usize, device: [bool; 2]) -> CUresult {
    match d.sticky {
        Some(fault) => fault_code(fault),
        None => {
            driver::copy(to, from, bytes, device).map_or(code::INVALID_VALUE, |()| code::SUCCESS)
        }
    }
}

/// `cuMemcpyHtoD_v2`.
///
/// # Safety
///
/// `source` is valid for reads of `bytes`.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    destination: CUdeviceptr,
    source: *const c_void,
    bytes: usize,
) -> CUresult {
    with_driver(true, |d| {
        copy(d, destination, source as u64, bytes, [true, false])
    })
}

/// `cuMemcpyDtoH_v2`.
///
/// # Safety
///
/// `destination` is valid for writes of `bytes`.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    destination: *mut c_void,
    source: CUdeviceptr,
    bytes: usize,
) -> CUresult {
    with_driver(true, |d| {
        copy(d, destination as u64, source, bytes, [false, true])
    })
}

/// `cuMemcpyDtoD_v2`.
///
/// # Safety
///
/// None: both ranges are checked.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(
    destination: CUdeviceptr,
    source: CUdeviceptr,
    bytes: usize,
) -> CUresult {
    with_driver(true, |d| copy(d, destination, source, bytes, [true, true]))
}

/// `cuStreamCreate`.
///
/// # Safety
///
/// `stream` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut Handle, _flags: c_uint) -> CUresult {
    with_driver(true, |d| {
        let handle = d.handle();
        // SAFETY: the caller's contract.
        let status = unsafe { put(stream, handle as Handle) };
        if status == code::SUCCESS {
            d.streams.insert(handle);
        }
        status
    })
}

/// `cuStreamDestroy_v2`.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: Handle) -> CUresult {
    with_driver(true, |d| {
        if d.streams.remove(&(stream as u64)) {
            code::SUCCESS
        } else {
            code::INVALID_HANDLE
        }
    })
}

/// `cuStreamSynchronize`: the null stream or one of `cuStreamCreate`.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(stream: Handle) -> CUresult {
    with_driver(true, |d| {
        if !d.is_stream(stream as u64) {
            return code::INVALID_HANDLE;
        }
        d.sticky.map_or(code::SUCCESS, fault_code)
    })
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
