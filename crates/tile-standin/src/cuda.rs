//! The CUDA driver API, as far as `tile-runtime` (through `cudarc`) calls
//! it: initialization, the device and its attributes, the primary context,
//! memory and copies, PTX modules and their functions, streams, launches
//! and synchronization.
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

use crate::images;
use crate::memory;
use crate::ptx::{Entry, PtxModule};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tile_emu::{EmuError, EmulatedKernel};

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
    pub const SUCCESS: CUresult = 0;
    /// An argument is out of range.
    pub const INVALID_VALUE: CUresult = 1;
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

/// `CU_JIT_ERROR_LOG_BUFFER`: the option whose value is the log's address.
const JIT_ERROR_LOG_BUFFER: c_int = 5;
/// `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`: its size, passed by value.
const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// Threads per block.
const MAX_THREADS: u32 = 1024;
/// Static plus dynamic shared memory per block.
const MAX_SHARED: usize = 48 * 1024;
/// Blocks per grid along x, y, z.
const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65_535, 65_535];
/// Threads per block along x, y, z.
const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];

/// The device's compute capability: `sm_80` unless `TILE_STANDIN_SM` says.
fn device_sm() -> u32 {
    std::env::var("TILE_STANDIN_SM")
        .ok()
        .and_then(|s| s.trim_start_matches("sm_").parse().ok())
        .unwrap_or(80)
}

/// A loaded module: its PTX as the driver read it and the kernel's
/// emulation image.
struct Module {
    ptx: PtxModule,
    kernel: EmulatedKernel,
}

/// Everything the driver holds.
#[derive(Default)]
struct Driver {
    next_handle: u64,
    retained: u32,
    modules: HashMap<u64, Arc<Module>>,
    functions: HashMap<u64, (Arc<Module>, Entry)>,
    streams: HashSet<u64>,
    /// The error of a faulted launch, returned from then on.
    sticky: Option<CUresult>,
}

impl Driver {
    fn handle(&mut self) -> u64 {
        self.next_handle += 1;
        self.next_handle
    }
}

static INITIALIZED: AtomicBool = AtomicBool::new(false);
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
    let mut guard: MutexGuard<'_, Option<Driver>> =
        DRIVER.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Driver::default))
}

/// Writes `value` through `out`, or fails if `out` is null.
///
/// # Safety
///
/// `out` is null or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) -> CUresult {
    if out.is_null() {
        return code::INVALID_VALUE;
    }
    // SAFETY: non-null, and valid by the caller's contract.
    unsafe { out.write(value) };
    code::SUCCESS
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
        let Ok(len) = usize::try_from(len) else {
            return code::INVALID_VALUE;
        };
        if name.is_null() || len == 0 {
            return code::INVALID_VALUE;
        }
        let text = format!("tile stand-in (sm_{})", device_sm());
        let n = text.len().min(len - 1);
        // SAFETY: `name` holds `len` bytes (the caller's contract), and
        // `n + 1 <= len` are written.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr().cast(), name, n);
            name.add(n).write(0);
        }
        code::SUCCESS
    })
}

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
            1 => MAX_THREADS as c_int,
            2..=4 => MAX_BLOCK[(attribute - 2) as usize] as c_int,
            5..=7 => MAX_GRID[(attribute - 5) as usize] as c_int,
            8 => MAX_SHARED as c_int,
            10 => 32,
            16 => 1,
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
    with_driver(false, |d| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        // SAFETY: the caller's contract.
        let status = unsafe { put(context, context_handle()) };
        if status == code::SUCCESS {
            d.retained += 1;
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
    with_driver(false, |d| {
        if device != 0 {
            return code::INVALID_DEVICE;
        }
        if d.retained == 0 {
            return code::INVALID_CONTEXT;
        }
        d.retained -= 1;
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
    with_driver(false, |d| {
        let current = if context.is_null() {
            false
        } else if context == context_handle() && d.retained > 0 {
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
    with_driver(true, |d| d.sticky.unwrap_or(code::SUCCESS))
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

/// A copy of `bytes` from `from` to `to` after the driver's checks:
/// `device` ranges inside one allocation each, host pointers non-null.
fn copy(d: &Driver, to: u64, from: u64, bytes: usize, device: [bool; 2]) -> CUresult {
    if let Some(error) = d.sticky {
        return error;
    }
    if bytes == 0 {
        return code::SUCCESS;
    }
    for (address, on_device) in [(to, device[0]), (from, device[1])] {
        let fine = if on_device {
            memory::contains(address, bytes)
        } else {
            address != 0
        };
        if !fine {
            return code::INVALID_VALUE;
        }
    }
    // SAFETY: device ranges lie inside live allocations (checked); host
    // ranges are the caller's, valid by the driver API's contract.
    unsafe { std::ptr::copy(from as *const u8, to as *mut u8, bytes) };
    code::SUCCESS
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

/// Writes `message` into the JIT error log the options name, if any.
///
/// # Safety
///
/// `options` and `values` hold `count` entries; the log option's value is
/// valid for writes of the size option's value.
unsafe fn write_log(
    count: c_uint,
    options: *const c_int,
    values: *const *mut c_void,
    message: &str,
) {
    if options.is_null() || values.is_null() {
        return;
    }
    let (mut buffer, mut size) = (std::ptr::null_mut::<u8>(), 0usize);
    for i in 0..count as usize {
        // SAFETY: `i < count` (the caller's contract).
        let (option, value) = unsafe { (*options.add(i), *values.add(i)) };
        match option {
            JIT_ERROR_LOG_BUFFER => buffer = value.cast(),
            // The size is passed by value in the pointer slot.
            JIT_ERROR_LOG_BUFFER_SIZE_BYTES => size = value as usize,
            _ => {}
        }
    }
    if buffer.is_null() || size == 0 {
        return;
    }
    let n = message.len().min(size - 1);
    // SAFETY: the buffer holds `size` bytes (the caller's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr(), buffer, n);
        buffer.add(n).write(0);
    }
}

/// Reads a PTX image as the JIT would and finds its emulation image.
fn load_module(image: &[u8]) -> Result<Module, (CUresult, String)> {
    if image.starts_with(b"\x7fELF") {
        return Err((
            code::INVALID_IMAGE,
            "the stand-in loads PTX only, not cubins".into(),
        ));
    }
    let text = std::str::from_utf8(image).map_err(|e| (code::INVALID_PTX, e.to_string()))?;
    let ptx = PtxModule::parse(text).map_err(|e| (code::INVALID_PTX, e))?;
    let sm = device_sm();
    if ptx.sm > sm {
        return Err((
            code::INVALID_PTX,
            format!("the PTX targets sm_{}, above the device's sm_{sm}", ptx.sm),
        ));
    }
    let kernel = images::load(image).map_err(|e| (code::INVALID_IMAGE, e))?;
    let manifest = kernel.manifest();
    let sizes: Vec<usize> = manifest.params.iter().map(|p| p.size).collect();
    match ptx.entry(&manifest.kernel) {
        Some(entry) if entry.params == sizes => Ok(Module { ptx, kernel }),
        Some(entry) => Err((
            code::INVALID_IMAGE,
            format!(
                "the emulation image of `{}` takes parameters of {sizes:?} bytes, the PTX {:?}",
                manifest.kernel, entry.params
            ),
        )),
        None => Err((
            code::INVALID_IMAGE,
            format!(
                "the emulation image's kernel `{}` is not in the PTX",
                manifest.kernel
            ),
        )),
    }
}

/// `cuModuleLoadDataEx` of NUL-terminated PTX; a failure's reason goes to
/// the JIT error log when the options name one.
///
/// # Safety
///
/// `image` is null or NUL-terminated; `options` and `values` hold `count`
/// entries, and a log buffer is valid for its size.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut Handle,
    image: *const c_void,
    count: c_uint,
    options: *mut c_int,
    values: *mut *mut c_void,
) -> CUresult {
    with_driver(true, |d| {
        if image.is_null() || module.is_null() {
            return code::INVALID_VALUE;
        }
        // SAFETY: a NUL-terminated image (the caller's contract).
        let bytes = unsafe { CStr::from_ptr(image.cast()) }.to_bytes();
        match load_module(bytes) {
            Ok(loaded) => {
                let handle = d.handle();
                d.modules.insert(handle, Arc::new(loaded));
                // SAFETY: non-null, valid by the caller's contract.
                unsafe { put(module, handle as Handle) }
            }
            Err((status, reason)) => {
                // SAFETY: the caller's contract.
                unsafe { write_log(count, options, values, &format!("tile-standin: {reason}")) };
                status
            }
        }
    })
}

/// `cuModuleGetFunction`: a kernel of the module by name.
///
/// # Safety
///
/// `name` is null or NUL-terminated; `function` null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    function: *mut Handle,
    module: Handle,
    name: *const c_char,
) -> CUresult {
    with_driver(true, |d| {
        let Some(m) = d.modules.get(&(module as u64)).cloned() else {
            return code::INVALID_HANDLE;
        };
        if name.is_null() || function.is_null() {
            return code::INVALID_VALUE;
        }
        // SAFETY: NUL-terminated (the caller's contract).
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        let Some(entry) = m.ptx.entry(&name).cloned() else {
            return code::NOT_FOUND;
        };
        let handle = d.handle();
        d.functions.insert(handle, (m, entry));
        // SAFETY: non-null, valid by the caller's contract.
        unsafe { put(function, handle as Handle) }
    })
}

/// `cuModuleUnload`: its functions become invalid handles.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(module: Handle) -> CUresult {
    with_driver(true, |d| {
        let Some(m) = d.modules.remove(&(module as u64)) else {
            return code::INVALID_HANDLE;
        };
        d.functions.retain(|_, (owner, _)| !Arc::ptr_eq(owner, &m));
        code::SUCCESS
    })
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
        if !stream.is_null() && !d.streams.contains(&(stream as u64)) {
            return code::INVALID_HANDLE;
        }
        d.sticky.unwrap_or(code::SUCCESS)
    })
}

/// Why a launch of `entry` with this shape is refused, as the driver
/// refuses it before the kernel runs.
fn check_shape(
    entry: &Entry,
    static_shared: usize,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
) -> Result<(), String> {
    if grid.contains(&0) || block.contains(&0) {
        return Err(format!("an empty grid {grid:?} or block {block:?}"));
    }
    if grid.iter().zip(MAX_GRID).any(|(&g, max)| g > max) {
        return Err(format!("the grid {grid:?} exceeds {MAX_GRID:?}"));
    }
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    if block.iter().zip(MAX_BLOCK).any(|(&b, max)| b > max) || threads > u64::from(MAX_THREADS) {
        return Err(format!(
            "the block {block:?} exceeds the device's {MAX_BLOCK:?} and {MAX_THREADS} threads"
        ));
    }
    if let Some(required) = entry.reqntid.filter(|&r| r != block) {
        return Err(format!(
            "`{}` requires blocks of {required:?} (.reqntid), not {block:?}",
            entry.name
        ));
    }
    if let Some(max) = entry
        .maxntid
        .filter(|m| block.iter().zip(m).any(|(b, m)| b > m))
    {
        return Err(format!(
            "`{}` allows blocks up to {max:?} (.maxntid), not {block:?}",
            entry.name
        ));
    }
    let total = static_shared + shared as usize;
    if total > MAX_SHARED {
        return Err(format!(
            "{total} bytes of shared memory, above the device's {MAX_SHARED}"
        ));
    }
    Ok(())
}

/// The driver's code for a fault the emulator stopped.
fn fault_code(error: &EmuError) -> CUresult {
    match error {
        EmuError::OutOfBounds { .. } | EmuError::SharedOutOfBounds { .. } => code::ILLEGAL_ADDRESS,
        EmuError::Misaligned { .. } => code::MISALIGNED_ADDRESS,
        EmuError::Divergence { .. } => code::LAUNCH_TIMEOUT,
        _ => code::LAUNCH_FAILED,
    }
}

/// `cuLaunchKernel` with parameters by `kernel_params` (`extra` must be
/// null). The launch runs before the call returns; a fault becomes the
/// context's sticky error, reported from the next synchronization.
///
/// # Safety
///
/// `kernel_params` holds one pointer per parameter of the kernel, each to
/// a value of the parameter's size, as the driver API requires.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    function: Handle,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared: c_uint,
    stream: Handle,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    let mut found = Err(code::INVALID_HANDLE);
    let status = with_driver(true, |d| {
        if !stream.is_null() && !d.streams.contains(&(stream as u64)) {
            return code::INVALID_HANDLE;
        }
        let Some(function) = d.functions.get(&(function as u64)).cloned() else {
            return code::INVALID_HANDLE;
        };
        found = Ok(function);
        d.sticky.unwrap_or(code::SUCCESS)
    });
    let (module, entry) = match found {
        Ok(f) if status == code::SUCCESS => f,
        _ => return status,
    };
    let grid = [grid_x, grid_y, grid_z];
    let block = [block_x, block_y, block_z];
    if let Err(reason) = check_shape(&entry, module.ptx.static_shared, grid, block, shared) {
        eprintln!("tile-standin: cuLaunchKernel refused: {reason}");
        return code::INVALID_VALUE;
    }
    if !extra.is_null() {
        eprintln!(
            "tile-standin: cuLaunchKernel refused: parameters through `extra` are not modelled"
        );
        return code::INVALID_VALUE;
    }
    if !entry.params.is_empty() {
        if kernel_params.is_null() {
            return code::INVALID_VALUE;
        }
        // SAFETY: one pointer per parameter (the caller's contract).
        let params = unsafe { std::slice::from_raw_parts(kernel_params, entry.params.len()) };
        if params.iter().any(|p| p.is_null()) {
            return code::INVALID_VALUE;
        }
    }
    // SAFETY: `kernel_params` is CUDA's parameter array for this kernel
    // (the caller's contract; its length checked above against the PTX,
    // which matches the image's manifest); every access the kernel makes is
    // checked against the live allocations.
    let result = unsafe {
        module
            .kernel
            .launch(grid, block_x, kernel_params.cast_const().cast())
    };
    if let Err(error) = result {
        eprintln!(
            "tile-standin: the launch of `{}` faulted: {error}",
            entry.name
        );
        let fault = fault_code(&error);
        with_driver(false, |d| {
            d.sticky.get_or_insert(fault);
            code::SUCCESS
        });
    }
    code::SUCCESS
}
