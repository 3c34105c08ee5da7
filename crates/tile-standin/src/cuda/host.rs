//! Pinned host memory: `cuMemHostAlloc`, `cuMemFreeHost` and the device
//! address of mapped pinned memory. Memory allocated with
//! `CU_MEMHOSTALLOC_DEVICEMAP` is reachable from kernels and counts as
//! device memory for copies; its device address is its host address, as
//! under unified addressing. The stand-in is stricter than a device with
//! unified addressing, which reaches all pinned memory: without
//! `DEVICEMAP`, pinned memory is host memory only.

use super::{code, log, with_driver, CUdeviceptr, CUresult};
use crate::calls::{CallKind, On};
use crate::capture::Use;
use crate::driver::put;
use crate::memory;
use std::ffi::{c_uint, c_void};

/// `CU_MEMHOSTALLOC_PORTABLE`, `DEVICEMAP`, `WRITECOMBINED`.
const PORTABLE: c_uint = 1;
const DEVICEMAP: c_uint = 2;
const WRITECOMBINED: c_uint = 4;

/// `cuMemHostAlloc`: zeroed, page-aligned pinned memory; flags within
/// `PORTABLE`, `DEVICEMAP` and `WRITECOMBINED`.
///
/// # Safety
///
/// `pointer` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    pointer: *mut *mut c_void,
    bytes: usize,
    flags: c_uint,
) -> CUresult {
    log("cuMemHostAlloc", CallKind::Alloc, On::Device);
    with_driver(true, |d| {
        if pointer.is_null() || bytes == 0 || flags & !(PORTABLE | DEVICEMAP | WRITECOMBINED) != 0 {
            return code::INVALID_VALUE;
        }
        if let Err(refused) = d.admit(Use::Unsafe) {
            return refused;
        }
        match memory::alloc_pinned(bytes, flags & DEVICEMAP != 0) {
            // SAFETY: the caller's contract.
            Some(address) => unsafe { put(pointer, address as *mut c_void) },
            None => code::OUT_OF_MEMORY,
        }
    })
}

/// `cuMemFreeHost`: an address `cuMemHostAlloc` returned, once.
///
/// # Safety
///
/// None: an unknown address is refused.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(pointer: *mut c_void) -> CUresult {
    log("cuMemFreeHost", CallKind::Alloc, On::Device);
    with_driver(true, |d| {
        if let Err(refused) = d.admit(Use::Unsafe) {
            return refused;
        }
        if memory::free_pinned(pointer as u64) {
            code::SUCCESS
        } else {
            code::INVALID_VALUE
        }
    })
}

/// `cuMemHostGetDevicePointer_v2`: the device address of any byte of
/// pinned memory allocated with `DEVICEMAP` (its host address); flags
/// must be 0.
///
/// # Safety
///
/// `device` is null or valid for a write; `host` is only compared.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    device: *mut CUdeviceptr,
    host: *mut c_void,
    flags: c_uint,
) -> CUresult {
    log("cuMemHostGetDevicePointer_v2", CallKind::Other, On::Nothing);
    with_driver(true, |_| {
        if flags != 0 || !memory::mapped(host as u64) {
            return code::INVALID_VALUE;
        }
        // SAFETY: the caller's contract.
        unsafe { put(device, host as u64) }
    })
}
