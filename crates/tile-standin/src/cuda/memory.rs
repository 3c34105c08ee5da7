//! Device memory, copies and fills. Synchronous copies and fills run on
//! the legacy stream; asynchronous ones on the stream they name, recorded
//! instead if it captures. Device ranges must lie inside one allocation
//! the device addresses (device memory or mapped pinned memory), checked
//! at the call; a faulted launch's sticky error comes first.

use super::{code, fault_code, log, sticky, with_driver, CUdeviceptr, CUresult, Handle};
use crate::calls::{CallKind, On};
use crate::capture::{Denied, Op, Use};
use crate::driver::{put, Driver};
use crate::memory;
use std::ffi::{c_uint, c_void};

/// `cuMemAlloc_v2`: zeroed memory, 256-byte aligned.
///
/// # Safety
///
/// `pointer` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(pointer: *mut CUdeviceptr, bytes: usize) -> CUresult {
    log("cuMemAlloc_v2", CallKind::Alloc, On::Device);
    with_driver(true, |d| {
        if bytes == 0 || pointer.is_null() {
            return code::INVALID_VALUE;
        }
        if let Err(refused) = d.admit(Use::Unsafe) {
            return refused;
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
    log("cuMemFree_v2", CallKind::Alloc, On::Device);
    with_driver(true, |d| {
        if let Err(refused) = d.admit(Use::Unsafe) {
            return refused;
        }
        if memory::free(pointer) {
            code::SUCCESS
        } else {
            code::INVALID_VALUE
        }
    })
}

/// A synchronous copy or fill after the driver's checks: the rules of
/// capture (legacy-stream work, and unsafe), a faulted launch's error,
/// then the ranges.
///
/// # Safety
///
/// A copy's host end is valid for its bytes.
unsafe fn now(d: &mut Driver, op: Op) -> CUresult {
    if let Err(refused) = d.admit(Use::SyncCopy) {
        return refused;
    }
    if d.sticky.is_some() {
        return sticky(d);
    }
    if !op.in_bounds() {
        return code::INVALID_VALUE;
    }
    // SAFETY: in bounds (checked); the host end by the caller's contract.
    match unsafe { op.run() } {
        Ok(()) => code::SUCCESS,
        Err(fault) => fault_code(fault),
    }
}

/// An asynchronous copy or fill on `stream`, after the driver's checks.
///
/// # Safety
///
/// A copy's host end is valid for its bytes (until the graph's last
/// replay, if the stream captures).
unsafe fn enqueue(d: &mut Driver, stream: Handle, op: Op) -> CUresult {
    // SAFETY: the caller's contract.
    match unsafe { d.enqueue(stream as u64, op) } {
        Ok(()) => code::SUCCESS,
        Err(Denied::Handle) => code::INVALID_HANDLE,
        Err(Denied::Value) => code::INVALID_VALUE,
        Err(Denied::Fault(fault)) => fault_code(fault),
        Err(Denied::Capture(refused)) => refused,
    }
}

/// A copy's operation.
fn copy(to: u64, from: u64, bytes: usize, device: [bool; 2]) -> Op {
    Op::Copy {
        to,
        from,
        bytes,
        device,
    }
}

/// A fill's operation.
fn fill(to: u64, value: u32, width: usize, count: usize) -> Op {
    Op::Fill {
        to,
        value,
        width,
        count,
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
    log("cuMemcpyHtoD_v2", CallKind::Copy, On::Stream(0));
    let op = copy(destination, source as u64, bytes, [true, false]);
    // SAFETY: the caller's contract.
    with_driver(true, |d| unsafe { now(d, op) })
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
    log("cuMemcpyDtoH_v2", CallKind::Copy, On::Stream(0));
    let op = copy(destination as u64, source, bytes, [false, true]);
    // SAFETY: the caller's contract.
    with_driver(true, |d| unsafe { now(d, op) })
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
    log("cuMemcpyDtoD_v2", CallKind::Copy, On::Stream(0));
    let op = copy(destination, source, bytes, [true, true]);
    // SAFETY: no host end.
    with_driver(true, |d| unsafe { now(d, op) })
}

/// `cuMemsetD8_v2`: `count` bytes of `value`.
///
/// # Safety
///
/// None: the range is checked.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(
    destination: CUdeviceptr,
    value: u8,
    count: usize,
) -> CUresult {
    log("cuMemsetD8_v2", CallKind::Copy, On::Stream(0));
    let op = fill(destination, value.into(), 1, count);
    // SAFETY: no host end.
    with_driver(true, |d| unsafe { now(d, op) })
}

/// `cuMemcpyHtoDAsync_v2`.
///
/// # Safety
///
/// `source` is valid for reads of `bytes` (at every replay of a graph the
/// copy is captured into).
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    destination: CUdeviceptr,
    source: *const c_void,
    bytes: usize,
    stream: Handle,
) -> CUresult {
    log(
        "cuMemcpyHtoDAsync_v2",
        CallKind::Copy,
        On::Stream(stream as u64),
    );
    let op = copy(destination, source as u64, bytes, [true, false]);
    // SAFETY: the caller's contract.
    with_driver(true, |d| unsafe { enqueue(d, stream, op) })
}

/// `cuMemcpyDtoHAsync_v2`.
///
/// # Safety
///
/// `destination` is valid for writes of `bytes` (at every replay of a
/// graph the copy is captured into).
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    destination: *mut c_void,
    source: CUdeviceptr,
    bytes: usize,
    stream: Handle,
) -> CUresult {
    log(
        "cuMemcpyDtoHAsync_v2",
        CallKind::Copy,
        On::Stream(stream as u64),
    );
    let op = copy(destination as u64, source, bytes, [false, true]);
    // SAFETY: the caller's contract.
    with_driver(true, |d| unsafe { enqueue(d, stream, op) })
}

/// `cuMemcpyDtoDAsync_v2`.
///
/// # Safety
///
/// None: both ranges are checked.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    destination: CUdeviceptr,
    source: CUdeviceptr,
    bytes: usize,
    stream: Handle,
) -> CUresult {
    log(
        "cuMemcpyDtoDAsync_v2",
        CallKind::Copy,
        On::Stream(stream as u64),
    );
    let op = copy(destination, source, bytes, [true, true]);
    // SAFETY: no host end.
    with_driver(true, |d| unsafe { enqueue(d, stream, op) })
}

/// `cuMemsetD8Async`: `count` bytes of `value`.
///
/// # Safety
///
/// None: the range is checked.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(
    destination: CUdeviceptr,
    value: u8,
    count: usize,
    stream: Handle,
) -> CUresult {
    log("cuMemsetD8Async", CallKind::Copy, On::Stream(stream as u64));
    let op = fill(destination, value.into(), 1, count);
    // SAFETY: no host end.
    with_driver(true, |d| unsafe { enqueue(d, stream, op) })
}

/// `cuMemsetD32Async`: `count` 32-bit values of `value`, at a 4-byte
/// aligned address.
///
/// # Safety
///
/// None: the range is checked.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32Async(
    destination: CUdeviceptr,
    value: c_uint,
    count: usize,
    stream: Handle,
) -> CUresult {
    log(
        "cuMemsetD32Async",
        CallKind::Copy,
        On::Stream(stream as u64),
    );
    with_driver(true, |d| {
        if !destination.is_multiple_of(4) {
            return code::INVALID_VALUE;
        }
        // SAFETY: no host end.
        unsafe { enqueue(d, stream, fill(destination, value, 4, count)) }
    })
}

#[cfg(test)]
mod tests {
    use crate::driver;

    #[test]
    fn a_fill_writes_its_values_inside_one_allocation() {
        let a = crate::memory::alloc(16).expect("memory");
        assert!(driver::fill(a, 0xdead_beef, 4, 3).is_ok());
        assert!(driver::fill(a + 12, 7, 1, 1).is_ok());
        // SAFETY: 16 live bytes.
        let bytes = unsafe { std::slice::from_raw_parts(a as *const u8, 16) };
        assert_eq!(&bytes[..4], &0xdead_beef_u32.to_ne_bytes());
        assert_eq!(&bytes[12..], &[7, 0, 0, 0]);
        assert!(driver::fill(a, 0, 4, 5).is_err());
        assert!(crate::memory::free(a));
    }
}
