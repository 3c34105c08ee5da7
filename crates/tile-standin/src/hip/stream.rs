//! Streams and the device's synchronization: streams are blocking
//! (`hipStreamDefault`) or non-blocking (`hipStreamNonBlocking`); work
//! runs at the call, so synchronizing or querying reports a faulted
//! launch's sticky error, or success.

use super::{code, log, sticky, with_driver, HipError, HipPtr};
use crate::calls::{CallKind, On};
use crate::driver::{put, Driver};
use crate::streams::NON_BLOCKING;
use std::ffi::c_uint;

/// `hipDeviceSynchronize`: a faulted launch's error, or success.
///
/// # Safety
///
/// None.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceSynchronize() -> HipError {
    log("hipDeviceSynchronize", CallKind::Sync, On::Waits(0));
    with_driver(|d| sticky(d))
}

/// Creates a stream with `flags` at `stream`.
///
/// # Safety
///
/// `stream` is null or valid for a write.
unsafe fn create(stream: *mut HipPtr, flags: c_uint) -> HipError {
    with_driver(|d| {
        if stream.is_null() || flags & !NON_BLOCKING != 0 {
            return code::INVALID_VALUE;
        }
        let handle = d.add_stream(flags == NON_BLOCKING);
        // SAFETY: non-null, valid by the caller's contract.
        unsafe { put(stream, handle as HipPtr) }
    })
}

/// `hipStreamCreate`: a blocking stream.
///
/// # Safety
///
/// `stream` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut HipPtr) -> HipError {
    log("hipStreamCreate", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    unsafe { create(stream, 0) }
}

/// `hipStreamCreateWithFlags`: `hipStreamDefault` (0) or
/// `hipStreamNonBlocking` (1).
///
/// # Safety
///
/// `stream` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithFlags(stream: *mut HipPtr, flags: c_uint) -> HipError {
    log("hipStreamCreateWithFlags", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    unsafe { create(stream, flags) }
}

/// What synchronizing or querying `stream` returns.
fn query(d: &Driver, stream: HipPtr) -> HipError {
    if d.is_stream(stream as u64) {
        sticky(d)
    } else {
        code::INVALID_HANDLE
    }
}

/// `hipStreamSynchronize`.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipStreamSynchronize(stream: HipPtr) -> HipError {
    log(
        "hipStreamSynchronize",
        CallKind::Sync,
        On::Waits(stream as u64),
    );
    with_driver(|d| query(d, stream))
}

/// `hipStreamQuery`: complete, as work runs at the call.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipStreamQuery(stream: HipPtr) -> HipError {
    log("hipStreamQuery", CallKind::Other, On::Names(stream as u64));
    with_driver(|d| query(d, stream))
}

/// `hipStreamDestroy`: a stream of `hipStreamCreate*`, once.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipStreamDestroy(stream: HipPtr) -> HipError {
    log(
        "hipStreamDestroy",
        CallKind::Other,
        On::Names(stream as u64),
    );
    with_driver(|d| match d.streams.remove(&(stream as u64)) {
        Some(_) => code::SUCCESS,
        None => code::INVALID_HANDLE,
    })
}

/// `hipStreamWaitEvent`: flags must be 0; nothing to wait for, as work
/// runs at the call.
///
/// # Safety
///
/// None: unknown handles are refused.
#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitEvent(
    stream: HipPtr,
    event: HipPtr,
    flags: c_uint,
) -> HipError {
    log(
        "hipStreamWaitEvent",
        CallKind::Other,
        On::Stream(stream as u64),
    );
    with_driver(|d| {
        if flags != 0 {
            return code::INVALID_VALUE;
        }
        if !d.is_stream(stream as u64) || !d.events.contains_key(&(event as u64)) {
            return code::INVALID_HANDLE;
        }
        code::SUCCESS
    })
}
