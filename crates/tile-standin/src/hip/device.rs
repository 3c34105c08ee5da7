//! The device: its count, name and properties, in ROCm 6's and ROCm 5's
//! layouts, its memory, and the runtime's version.

use super::{code, device_gfx, log, HipError};
use crate::calls::{CallKind, On};
use crate::driver::{put, put_str};
use std::ffi::{c_char, c_int, c_uint, c_void};

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

/// `hipInit`: flags must be 0.
///
/// # Safety
///
/// None.
#[no_mangle]
pub unsafe extern "C" fn hipInit(flags: c_uint) -> HipError {
    log("hipInit", CallKind::Other, On::Nothing);
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
    log("hipGetDeviceCount", CallKind::Other, On::Nothing);
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
    log("hipDeviceGet", CallKind::Other, On::Nothing);
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
    log("hipDeviceGetName", CallKind::Other, On::Nothing);
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
    log("hipSetDevice", CallKind::Other, On::Nothing);
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
    log("hipGetDevicePropertiesR0600", CallKind::Other, On::Nothing);
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
    log("hipGetDeviceProperties", CallKind::Other, On::Nothing);
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

/// The device memory reported: 16 GiB.
const TOTAL_MEMORY: usize = 16 << 30;
/// The version reported: ROCm 6.2's, as `HIP_VERSION` numbers it
/// (major × 10^7 + minor × 10^5 + patch).
const DRIVER_VERSION: c_int = 60_241_134;

/// `hipDeviceTotalMem`: 16 GiB.
///
/// # Safety
///
/// `bytes` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceTotalMem(bytes: *mut usize, device: c_int) -> HipError {
    log("hipDeviceTotalMem", CallKind::Other, On::Nothing);
    if device != 0 {
        return code::INVALID_DEVICE;
    }
    // SAFETY: the caller's contract.
    unsafe { put(bytes, TOTAL_MEMORY) }
}

/// `hipDriverGetVersion`: ROCm 6.2's.
///
/// # Safety
///
/// `version` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipDriverGetVersion(version: *mut c_int) -> HipError {
    log("hipDriverGetVersion", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    unsafe { put(version, DRIVER_VERSION) }
}
