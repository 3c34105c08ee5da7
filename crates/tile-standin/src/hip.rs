//! The HIP runtime API, as far as `tile-runtime` calls it: devices and
//! their properties, memory and copies, code-object modules and their
//! functions, streams, launches (parameters packed through `extra`, or by
//! pointer) and synchronization.
//!
//! The device is a `gfx942` (`TILE_STANDIN_GFX=gfx1100` makes it another)
//! with 1,024 threads and 64 KiB of LDS per workgroup. As HIP does, the
//! runtime initializes itself on first use and device 0 is current until
//! `hipSetDevice` says otherwise. A code object is read as the runtime
//! reads it: its length from its ELF headers, its target, and its kernels'
//! arguments, `.max_flat_workgroup_size` and LDS from the metadata note.
//!
//! The library is ROCm 6's: `hipGetDevicePropertiesR0600` fills
//! `hipDeviceProp_tR0600`, and `hipGetDeviceProperties` ROCm 5's
//! `hipDeviceProp_t`, as ROCm 6 keeps it for programs built against ROCm 5.
//! [`as_rocm5`] makes a copy of the library without the ROCm 6 symbol, as
//! ROCm 5's is.

use crate::driver::{self, put, put_str, Driver, Fault, Kernel, Limits, Loaded, Refused};
use crate::hsaco::{self, CodeObject};
use crate::memory;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::Mutex;

/// A HIP call's result.
pub type HipError = c_int;
/// An opaque handle (module, function, stream) or a device pointer.
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
    /// A handle the runtime did not hand out.
    pub const INVALID_HANDLE: HipError = 400;
    /// No kernel of that name in the module.
    pub const NOT_FOUND: HipError = 500;
    /// A kernel accessed memory outside every allocation.
    pub const ILLEGAL_ADDRESS: HipError = 700;
    /// A kernel's threads never met.
    pub const LAUNCH_TIMEOUT: HipError = 702;
    /// A kernel failed otherwise (a misaligned access among them).
    pub const LAUNCH_FAILURE: HipError = 719;
}

/// `hipMemcpyKind`: host to host, host to device, device to host, device
/// to device, and inferred from the pointers.
const COPY_KINDS: [(c_int, [bool; 2]); 4] = [
    (0, [false, false]),
    (1, [true, false]),
    (2, [false, true]),
    (3, [true, true]),
];
const COPY_DEFAULT: c_int = 4;

/// `HIP_LAUNCH_PARAM_*` markers of `hipModuleLaunchKernel`'s `extra`.
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;
const PARAM_END: usize = 3;

/// A layout of `hipDeviceProp_t`, as its header declares it on 64-bit
/// targets: its size and the offset of `gcnArchName` (`char[256]`); both
/// start with `name` (`char[256]`).
struct Layout {
    /// The struct's bytes.
    bytes: usize,
    /// The offset of `gcnArchName`.
    arch_name_at: usize,
    /// The offset of `multiProcessorCount`.
    multiprocessors_at: usize,
}

/// ROCm 6's `hipDeviceProp_tR0600`.
const R0600: Layout = Layout {
    bytes: 1472,
    arch_name_at: 1160,
    multiprocessors_at: 388,
};

/// ROCm 5's `hipDeviceProp_t` (ROCm 6's `hipDeviceProp_tR0000`).
const R0000: Layout = Layout {
    bytes: 792,
    arch_name_at: 396,
    multiprocessors_at: 336,
};

/// The name of the entry point filling [`R0600`], which ROCm 5 lacks.
const R0600_SYMBOL: &[u8] = b"hipGetDevicePropertiesR0600";

/// The largest kernarg segment built (real kernels take a few hundred
/// bytes; the metadata of a corrupt code object may claim anything).
const MAX_KERNARG: usize = 64 * 1024;

/// The device's limits.
const LIMITS: Limits = Limits {
    threads: 1024,
    block: [1024, 1024, 1024],
    grid: [i32::MAX as u32, 65_535, 65_535],
    shared: crate::hsaco::LDS_BYTES,
    shared_optin: crate::hsaco::LDS_BYTES,
};

static DRIVER: Mutex<Option<Driver>> = Mutex::new(None);

/// The device's processor: `gfx942` unless `TILE_STANDIN_GFX` says.
fn device_gfx() -> String {
    std::env::var("TILE_STANDIN_GFX").unwrap_or_else(|_| "gfx942".into())
}

fn with_driver(f: impl FnOnce(&mut Driver) -> HipError) -> HipError {
    f(driver::lock(&DRIVER).get_or_insert_with(Driver::default))
}

/// `hipInit`: flags must be 0.
///
/// # Safety
///
/// None.
#[no_mangle]
pub unsafe extern "C" fn hipInit(flags: c_uint) -> HipError {
    if flags == 0 {
        code::SUCCESS
    } else {
        code::INVALID_VALUE
    }
}

/// `hipGetDeviceCount`: one device.
///
/// # Safety
///
/// `count` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> HipError {
    // SAFETY: the caller's contract.
    unsafe { put(count, 1) }
}

/// `hipDeviceGet`: device 0 only.
///
/// # Safety
///
/// `device` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGet(device: *mut c_int, ordinal: c_int) -> HipError {
    if ordinal != 0 {
        return code::INVALID_DEVICE;
    }
    // SAFETY: the caller's contract.
    unsafe { put(device, 0) }
}

/// `hipDeviceGetName`: `tile stand-in (gfx942)`.
///
/// # Safety
///
/// `name` is null or valid for writes of `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetName(
    name: *mut c_char,
    len: c_int,
    device: c_int,
) -> HipError {
    if device != 0 {
        return code::INVALID_DEVICE;
    }
    match usize::try_from(len) {
        Ok(len) if len > 0 && !name.is_null() => {
            // SAFETY: `name` holds `len` bytes (the caller's contract).
            unsafe {
                put_str(
                    name.cast(),
                    len,
                    &format!("tile stand-in ({})", device_gfx()),
                )
            };
            code::SUCCESS
        }
        _ => code::INVALID_VALUE,
    }
}

/// `hipSetDevice`: device 0 only.
///
/// # Safety
///
/// None.
#[no_mangle]
pub unsafe extern "C" fn hipSetDevice(device: c_int) -> HipError {
    if device == 0 {
        code::SUCCESS
    } else {
        code::INVALID_DEVICE
    }
}

/// The compute units the stand-in reports.
const MULTIPROCESSORS: c_int = 2;

/// Fills `layout` at `properties` for device `device`: its name,
/// `gcnArchName` with the processor's features (`gfx942:sramecc+:xnack-`)
/// and [`MULTIPROCESSORS`] compute units; other fields zero.
///
/// # Safety
///
/// `properties` is null or valid for writes of `layout.bytes`.
unsafe fn fill_properties(properties: *mut c_void, device: c_int, layout: &Layout) -> HipError {
    if device != 0 {
        return code::INVALID_DEVICE;
    }
    if properties.is_null() {
        return code::INVALID_VALUE;
    }
    let out: *mut u8 = properties.cast();
    let gfx = device_gfx();
    // SAFETY: the struct's bytes (the caller's contract); both strings fit
    // their 256-byte fields.
    unsafe {
        std::ptr::write_bytes(out, 0, layout.bytes);
        put_str(out, 256, &format!("tile stand-in ({gfx})"));
        put_str(
            out.add(layout.arch_name_at),
            256,
            &format!("{gfx}:sramecc+:xnack-"),
        );
        let units = MULTIPROCESSORS.to_ne_bytes();
        std::ptr::copy_nonoverlapping(
            units.as_ptr(),
            out.add(layout.multiprocessors_at),
            units.len(),
        );
    }
    code::SUCCESS
}

/// `hipGetDevicePropertiesR0600`: ROCm 6's `hipDeviceProp_tR0600`.
///
/// # Safety
///
/// `properties` is null or valid for writes of a `hipDeviceProp_tR0600`
/// (1,472 bytes).
#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(
    properties: *mut c_void,
    device: c_int,
) -> HipError {
    // SAFETY: the caller's contract.
    unsafe { fill_properties(properties, device, &R0600) }
}

/// `hipGetDeviceProperties`: ROCm 5's `hipDeviceProp_t`, which ROCm 6
/// fills under this name (its headers map the name to
/// `hipGetDevicePropertiesR0600`).
///
/// # Safety
///
/// `properties` is null or valid for writes of ROCm 5's `hipDeviceProp_t`
/// (792 bytes).
#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceProperties(
    properties: *mut c_void,
    device: c_int,
) -> HipError {
    // SAFETY: the caller's contract.
    unsafe { fill_properties(properties, device, &R0000) }
}

/// The bytes of a copy of the stand-in's shared library, `library`, that
/// acts as ROCm 5's runtime: it exports no `hipGetDevicePropertiesR0600`
/// (the name is overwritten wherever it occurs, the string table of its
/// dynamic symbols among them, by one of the same length no caller asks
/// for). `None` if `library` does not hold that name.
pub fn as_rocm5(library: &[u8]) -> Option<Vec<u8>> {
    let starts: Vec<usize> = library
        .windows(R0600_SYMBOL.len())
        .enumerate()
        .filter_map(|(at, window)| (window == R0600_SYMBOL).then_some(at))
        .collect();
    let mut copy = library.to_vec();
    for start in &starts {
        // `hipGetDevicePropertiesR0600` becomes `...X0600`.
        copy[start + R0600_SYMBOL.len() - 5] = b'X';
    }
    (!starts.is_empty()).then_some(copy)
}

/// `hipMalloc`: zeroed memory, 256-byte aligned; 0 bytes give null.
///
/// # Safety
///
/// `pointer` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipMalloc(pointer: *mut HipPtr, bytes: usize) -> HipError {
    let address = if bytes == 0 {
        0
    } else {
        match memory::alloc(bytes) {
            Some(address) => address,
            None => return code::OUT_OF_MEMORY,
        }
    };
    // SAFETY: the caller's contract.
    unsafe { put(pointer, address as HipPtr) }
}

/// `hipFree`: an address `hipMalloc` returned, once; null is a no-op.
///
/// # Safety
///
/// None: an unknown address is refused.
#[no_mangle]
pub unsafe extern "C" fn hipFree(pointer: HipPtr) -> HipError {
    if pointer.is_null() || memory::free(pointer as u64) {
        code::SUCCESS
    } else {
        code::INVALID_VALUE
    }
}

/// `hipMemcpy`, synchronous; a faulted launch's error first.
///
/// # Safety
///
/// Host ends are valid for `bytes` (the copy checks device ends).
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(
    destination: HipPtr,
    source: *const c_void,
    bytes: usize,
    kind: c_int,
) -> HipError {
    let (to, from) = (destination as u64, source as u64);
    let device = if kind == COPY_DEFAULT {
        [memory::contains(to, 1), memory::contains(from, 1)]
    } else {
        match COPY_KINDS.iter().find(|(k, _)| *k == kind) {
            Some(&(_, device)) => device,
            None => return code::INVALID_MEMCPY_DIRECTION,
        }
    };
    with_driver(|d| match d.sticky {
        Some(fault) => fault_code(fault),
        None => {
            driver::copy(to, from, bytes, device).map_or(code::INVALID_VALUE, |()| code::SUCCESS)
        }
    })
}

/// `hipDeviceSynchronize`: launches are synchronous; returns a faulted
/// launch's error.
///
/// # Safety
///
/// None.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceSynchronize() -> HipError {
    with_driver(|d| d.sticky.map_or(code::SUCCESS, fault_code))
}

/// `hipStreamCreate`.
///
/// # Safety
///
/// `stream` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut HipPtr) -> HipError {
    with_driver(|d| {
        let handle = d.handle();
        // SAFETY: the caller's contract.
        let status = unsafe { put(stream, handle as HipPtr) };
        if status == code::SUCCESS {
            d.streams.insert(handle);
        }
        status
    })
}

/// `hipStreamSynchronize`: the null stream or one of `hipStreamCreate`.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipStreamSynchronize(stream: HipPtr) -> HipError {
    with_driver(|d| {
        if !d.is_stream(stream as u64) {
            return code::INVALID_HANDLE;
        }
        d.sticky.map_or(code::SUCCESS, fault_code)
    })
}

/// `hipStreamDestroy`.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipStreamDestroy(stream: HipPtr) -> HipError {
    with_driver(|d| {
        if d.streams.remove(&(stream as u64)) {
            code::SUCCESS
        } else {
            code::INVALID_HANDLE
        }
    })
}

/// Reads a code object as the runtime does and finds its emulation image.
fn load_module(bytes: &[u8]) -> Result<Loaded, (HipError, String)> {
    let object = CodeObject::parse(bytes).map_err(|e| (code::INVALID_IMAGE, e))?;
    let gfx = device_gfx();
    if object.gfx != gfx {
        return Err((
            code::NO_BINARY_FOR_GPU,
            format!(
                "the code object is for {}, the device is a {gfx}",
                object.gfx
            ),
        ));
    }
    Loaded::new(object.kernels, bytes).map_err(|e| (code::INVALID_IMAGE, e))
}

/// `hipModuleLoadData` of a code object in memory; why a load fails goes
/// to standard error (HIP has no log).
///
/// # Safety
///
/// `image` is null or a complete code object.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(module: *mut HipPtr, image: *const c_void) -> HipError {
    if image.is_null() || module.is_null() {
        return code::INVALID_VALUE;
    }
    // SAFETY: a complete code object (the caller's contract).
    let bytes = match unsafe { hsaco::length(image.cast()) } {
        // SAFETY: as above; its length is what its headers describe.
        Ok(len) => unsafe { std::slice::from_raw_parts(image.cast::<u8>(), len) },
        Err(reason) => {
            eprintln!("tile-standin: hipModuleLoadData refused: {reason}");
            return code::INVALID_IMAGE;
        }
    };
    with_driver(|d| match load_module(bytes) {
        // SAFETY: non-null, valid by the caller's contract.
        Ok(loaded) => unsafe { put(module, d.add_module(loaded) as HipPtr) },
        Err((status, reason)) => {
            eprintln!("tile-standin: hipModuleLoadData refused: {reason}");
            status
        }
    })
}

/// `hipModuleGetFunction`: a kernel of the module by name.
///
/// # Safety
///
/// `name` is null or NUL-terminated; `function` null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut HipPtr,
    module: HipPtr,
    name: *const c_char,
) -> HipError {
    if name.is_null() || function.is_null() {
        return code::INVALID_VALUE;
    }
    // SAFETY: NUL-terminated (the caller's contract).
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    with_driver(|d| match d.function(module as u64, &name) {
        // SAFETY: non-null, valid by the caller's contract.
        Ok(handle) => unsafe { put(function, handle as HipPtr) },
        Err(None) => code::INVALID_HANDLE,
        Err(Some(())) => code::NOT_FOUND,
    })
}

/// `hipModuleUnload`: its functions become invalid handles.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(module: HipPtr) -> HipError {
    with_driver(|d| {
        if d.unload(module as u64) {
            code::SUCCESS
        } else {
            code::INVALID_HANDLE
        }
    })
}

/// The runtime's code for a faulted launch.
fn fault_code(fault: Fault) -> HipError {
    match fault {
        Fault::IllegalAddress => code::ILLEGAL_ADDRESS,
        Fault::Timeout => code::LAUNCH_TIMEOUT,
        Fault::Misaligned | Fault::Failed => code::LAUNCH_FAILURE,
    }
}

/// The kernarg segment of a launch of `kernel`, from `extra`'s packed
/// buffer (which must hold exactly the explicit arguments) or from one
/// pointer per argument; hidden arguments are zero.
///
/// # Safety
///
/// `extra` is null or a `HIP_LAUNCH_PARAM_*` list ending in
/// `HIP_LAUNCH_PARAM_END`, naming a buffer of the size it gives;
/// `params` is null or holds one pointer per argument, each to a value of
/// the argument's size.
unsafe fn kernarg_segment(
    kernel: &Kernel,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<Vec<u128>, String> {
    let kernarg = kernel
        .kernarg
        .as_ref()
        .ok_or("the kernel has no kernarg segment")?;
    let explicit = kernarg.explicit(&kernel.params);
    let total = kernarg.segment.max(explicit);
    if total > MAX_KERNARG {
        return Err(format!(
            "a kernarg segment of {total} bytes, above the {MAX_KERNARG} the stand-in gives"
        ));
    }
    let mut segment = vec![0u128; total.div_ceil(16)];
    let bytes: *mut u8 = segment.as_mut_ptr().cast();
    if !extra.is_null() {
        let (mut buffer, mut size) = (std::ptr::null::<u8>(), None);
        for i in (0..).step_by(2) {
            // SAFETY: the list ends at `HIP_LAUNCH_PARAM_END` (the contract).
            let (marker, value) = unsafe { (*extra.add(i) as usize, *extra.add(i + 1)) };
            match marker {
                PARAM_END => break,
                PARAM_BUFFER_POINTER => buffer = value.cast(),
                // SAFETY: the size marker's value points at a `usize`.
                PARAM_BUFFER_SIZE if !value.is_null() => {
                    size = Some(unsafe { *value.cast::<usize>() })
                }
                other => return Err(format!("unknown launch parameter marker {other}")),
            }
        }
        match size {
            Some(size) if !buffer.is_null() && size == explicit => {
                // SAFETY: the buffer holds `size` bytes (the contract), the
                // segment at least `explicit`.
                unsafe { std::ptr::copy_nonoverlapping(buffer, bytes, size) };
                Ok(segment)
            }
            Some(size) => Err(format!(
                "a parameter buffer of {size} bytes for `{}`, whose arguments take {explicit}",
                kernel.name
            )),
            None => Err("`extra` names no parameter buffer and size".into()),
        }
    } else if !params.is_null() {
        for (i, (&offset, &size)) in kernarg.offsets.iter().zip(&kernel.params).enumerate() {
            // SAFETY: one pointer per argument, each to `size` bytes (the
            // contract); the segment holds every argument.
            unsafe {
                let value = *params.add(i);
                if value.is_null() {
                    return Err(format!("argument {i} of `{}` is null", kernel.name));
                }
                std::ptr::copy_nonoverlapping(value.cast::<u8>(), bytes.add(offset), size);
            }
        }
        Ok(segment)
    } else if kernel.params.is_empty() {
        Ok(segment)
    } else {
        Err(format!("no arguments for `{}`", kernel.name))
    }
}

/// `hipModuleLaunchKernel`. The launch runs before the call returns; a
/// fault becomes the sticky error of the next synchronization or copy.
///
/// # Safety
///
/// `kernel_params` is null or holds one pointer per argument, each to a
/// value of the argument's size; `extra` is null or a
/// `HIP_LAUNCH_PARAM_*` list ending in `HIP_LAUNCH_PARAM_END`, naming a
/// buffer of the size it gives.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    function: HipPtr,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared: c_uint,
    stream: HipPtr,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    let mut found = Err(Refused::Handle);
    with_driver(|d| {
        found = d.launchable(function as u64, stream as u64);
        code::SUCCESS
    });
    let (loaded, kernel) = match found {
        Ok(f) => f,
        Err(Refused::Handle) => return code::INVALID_HANDLE,
        Err(Refused::Fault(fault)) => return fault_code(fault),
    };
    let grid = [grid_x, grid_y, grid_z];
    let block = [block_x, block_y, block_z];
    let work_items_fit = grid
        .iter()
        .zip(block)
        .all(|(&g, b)| u64::from(g) * u64::from(b) <= u64::from(u32::MAX));
    let checked = driver::check_shape(&kernel, &LIMITS, grid, block, shared).and_then(|()| {
        if work_items_fit {
            Ok(())
        } else {
            Err(format!(
                "the grid {grid:?} of blocks {block:?} exceeds 2^32 work-items"
            ))
        }
    });
    // SAFETY: the caller's contract.
    let segment = checked.and_then(|()| unsafe { kernarg_segment(&kernel, kernel_params, extra) });
    let segment = match segment {
        Ok(segment) => segment,
        Err(reason) => {
            eprintln!("tile-standin: hipModuleLaunchKernel refused: {reason}");
            return code::INVALID_VALUE;
        }
    };
    // SAFETY: a kernarg segment holding every argument at the offsets of
    // the code object's metadata, which the image's manifest agrees with.
    let ran = unsafe { driver::run(&loaded, &kernel, grid, block_x, segment.as_ptr().cast()) };
    if let Err(fault) = ran {
        with_driver(|d| {
            d.sticky.get_or_insert(fault);
            code::SUCCESS
        });
    }
    code::SUCCESS
}
