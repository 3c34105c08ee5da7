//! Device and pinned host memory, copies and fills. Synchronous copies
//! run on the legacy stream, asynchronous ones and fills on the stream
//! they name; all run before the call returns. Device ranges must lie
//! inside one allocation the device addresses; a faulted launch's sticky
//! error comes first. As ROCm maps all pinned memory into the device's
//! address space, every `hipHostMalloc` allocation is mapped, whatever its
//! flags; its device address is its host address.

use super::{code, fault_code, log, with_driver, HipError, HipPtr};
use crate::calls::{CallKind, On};
use crate::capture::{Denied, Op};
use crate::driver::{self, put, Driver};
use crate::memory;
use std::ffi::{c_int, c_uint, c_void};

/// `hipMemcpyKind`: host to host, host to device, device to host, device
/// to device, and inferred from the pointers.
const COPY_KINDS: [(c_int, [bool; 2]); 4] = [
    (0, [false, false]),
    (1, [true, false]),
    (2, [false, true]),
    (3, [true, true]),
];
const COPY_DEFAULT: c_int = 4;

/// `hipMalloc`: zeroed memory, 256-byte aligned; 0 bytes give null.
///
/// # Safety
///
/// `pointer` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipMalloc(pointer: *mut HipPtr, bytes: usize) -> HipError {
    log("hipMalloc", CallKind::Alloc, On::Device);
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
    log("hipFree", CallKind::Alloc, On::Device);
    if pointer.is_null() || memory::free(pointer as u64) {
        code::SUCCESS
    } else {
        code::INVALID_VALUE
    }
}

/// Which ends of a copy of `hipMemcpyKind` `kind` are on the device:
/// inferred from the pointers for `hipMemcpyDefault`; `None` for a kind
/// HIP does not have.
fn direction(to: u64, from: u64, kind: c_int) -> Option<[bool; 2]> {
    if kind == COPY_DEFAULT {
        return Some([memory::contains(to, 1), memory::contains(from, 1)]);
    }
    COPY_KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|&(_, device)| device)
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
    log("hipMemcpy", CallKind::Copy, On::Stream(0));
    let (to, from) = (destination as u64, source as u64);
    let Some(device) = direction(to, from, kind) else {
        return code::INVALID_MEMCPY_DIRECTION;
    };
    with_driver(|d| match d.sticky {
        Some(fault) => fault_code(fault),
        None => {
            driver::copy(to, from, bytes, device).map_or(code::INVALID_VALUE, |()| code::SUCCESS)
        }
    })
}

/// An asynchronous copy or fill on `stream`, after the runtime's checks.
///
/// # Safety
///
/// A copy's host end is valid for its bytes.
unsafe fn enqueue(d: &mut Driver, stream: HipPtr, op: Op) -> HipError {
    // SAFETY: the caller's contract.
    match unsafe { d.enqueue(stream as u64, op) } {
        Ok(()) => code::SUCCESS,
        Err(Denied::Handle) => code::INVALID_HANDLE,
        Err(Denied::Value) => code::INVALID_VALUE,
        Err(Denied::Fault(fault)) => fault_code(fault),
        Err(Denied::Capture(refused)) => refused,
    }
}

/// `hipMemcpyAsync`: as `hipMemcpy`, on `stream`.
///
/// # Safety
///
/// Host ends are valid for `bytes` (the copy checks device ends).
#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync(
    destination: HipPtr,
    source: *const c_void,
    bytes: usize,
    kind: c_int,
    stream: HipPtr,
) -> HipError {
    log("hipMemcpyAsync", CallKind::Copy, On::Stream(stream as u64));
    let (to, from) = (destination as u64, source as u64);
    let Some(device) = direction(to, from, kind) else {
        return code::INVALID_MEMCPY_DIRECTION;
    };
    let op = Op::Copy {
        to,
        from,
        bytes,
        device,
    };
    // SAFETY: the caller's contract.
    with_driver(|d| unsafe { enqueue(d, stream, op) })
}

/// A fill of `count` bytes of `value` at `to`.
fn fill_bytes(to: HipPtr, value: u8, count: usize) -> Op {
    Op::Fill {
        to: to as u64,
        value: value.into(),
        width: 1,
        count,
    }
}

/// `hipMemsetAsync`: `bytes` bytes of the low byte of `value`.
///
/// # Safety
///
/// None: the range is checked.
#[no_mangle]
pub unsafe extern "C" fn hipMemsetAsync(
    destination: HipPtr,
    value: c_int,
    bytes: usize,
    stream: HipPtr,
) -> HipError {
    log("hipMemsetAsync", CallKind::Copy, On::Stream(stream as u64));
    let op = fill_bytes(destination, value as u8, bytes);
    // SAFETY: no host end.
    with_driver(|d| unsafe { enqueue(d, stream, op) })
}

/// `hipMemsetD8Async`: `count` bytes of `value`.
///
/// # Safety
///
/// None: the range is checked.
#[no_mangle]
pub unsafe extern "C" fn hipMemsetD8Async(
    destination: HipPtr,
    value: u8,
    count: usize,
    stream: HipPtr,
) -> HipError {
    log(
        "hipMemsetD8Async",
        CallKind::Copy,
        On::Stream(stream as u64),
    );
    let op = fill_bytes(destination, value, count);
    // SAFETY: no host end.
    with_driver(|d| unsafe { enqueue(d, stream, op) })
}

/// `hipMemsetD32Async`: `count` 32-bit words of `value`, at a 4-byte
/// aligned address.
///
/// # Safety
///
/// None: the range is checked.
#[no_mangle]
pub unsafe extern "C" fn hipMemsetD32Async(
    destination: HipPtr,
    value: c_int,
    count: usize,
    stream: HipPtr,
) -> HipError {
    log(
        "hipMemsetD32Async",
        CallKind::Copy,
        On::Stream(stream as u64),
    );
    if !(destination as u64).is_multiple_of(4) {
        return crate::driver::INVALID_VALUE;
    }
    let op = Op::Fill {
        to: destination as u64,
        value: value as u32,
        width: 4,
        count,
    };
    // SAFETY: no host end.
    with_driver(|d| unsafe { enqueue(d, stream, op) })
}

/// `hipHostMalloc*` flags: `Portable`, `Mapped`, `WriteCombined`,
/// `NumaUser`, `Coherent`, `NonCoherent` (not both of the last two).
const PORTABLE: c_uint = 0x1;
const MAPPED: c_uint = 0x2;
const WRITE_COMBINED: c_uint = 0x4;
const NUMA_USER: c_uint = 0x2000_0000;
const COHERENT: c_uint = 0x4000_0000;
const NON_COHERENT: c_uint = 0x8000_0000;

/// `hipHostMalloc`: zeroed, page-aligned pinned memory, mapped; 0 bytes
/// give null.
///
/// # Safety
///
/// `pointer` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(
    pointer: *mut *mut c_void,
    bytes: usize,
    flags: c_uint,
) -> HipError {
    log("hipHostMalloc", CallKind::Alloc, On::Device);
    let known = PORTABLE | MAPPED | WRITE_COMBINED | NUMA_USER | COHERENT | NON_COHERENT;
    let coherence = COHERENT | NON_COHERENT;
    if pointer.is_null() || flags & !known != 0 || flags & coherence == coherence {
        return code::INVALID_VALUE;
    }
    let address = if bytes == 0 {
        0
    } else {
        match memory::alloc_pinned(bytes, true) {
            Some(address) => address,
            None => return code::OUT_OF_MEMORY,
        }
    };
    // SAFETY: non-null, valid by the caller's contract.
    unsafe { put(pointer, address as *mut c_void) }
}

/// `hipHostFree`: an address `hipHostMalloc` returned, once; null is a
/// no-op.
///
/// # Safety
///
/// None: an unknown address is refused.
#[no_mangle]
pub unsafe extern "C" fn hipHostFree(pointer: *mut c_void) -> HipError {
    log("hipHostFree", CallKind::Alloc, On::Device);
    if pointer.is_null() || memory::free_pinned(pointer as u64) {
        code::SUCCESS
    } else {
        code::INVALID_VALUE
    }
}

/// `hipHostGetDevicePointer`: the device address of any byte of pinned
/// memory (its host address); flags must be 0.
///
/// # Safety
///
/// `device` is null or valid for a write; `host` is only compared.
#[no_mangle]
pub unsafe extern "C" fn hipHostGetDevicePointer(
    device: *mut *mut c_void,
    host: *mut c_void,
    flags: c_uint,
) -> HipError {
    log("hipHostGetDevicePointer", CallKind::Other, On::Nothing);
    if flags != 0 || !memory::mapped(host as u64) {
        return code::INVALID_VALUE;
    }
    // SAFETY: the caller's contract.
    unsafe { put(device, host) }
}
