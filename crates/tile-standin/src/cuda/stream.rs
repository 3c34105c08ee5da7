//! Streams: created blocking (flags 0: ordered with the legacy stream) or
//! non-blocking (`CU_STREAM_NON_BLOCKING`); synchronized, queried, made to
//! wait for events. Work runs at the call, so a stream is always idle:
//! synchronizing or querying one reports a faulted launch's sticky error,
//! or success, unless the stream captures.

use super::{code, log, sticky, with_driver, CUresult, Handle};
use crate::calls::{CallKind, On};
use crate::capture::Use;
use crate::driver::{put, Driver};
use crate::streams::NON_BLOCKING;
use std::ffi::c_uint;

/// `cuStreamCreate`: flags 0 (blocking) or `CU_STREAM_NON_BLOCKING`.
///
/// # Safety
///
/// `stream` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut Handle, flags: c_uint) -> CUresult {
    log("cuStreamCreate", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        if stream.is_null() || flags & !NON_BLOCKING != 0 {
            return code::INVALID_VALUE;
        }
        let handle = d.add_stream(flags == NON_BLOCKING);
        // SAFETY: non-null, valid by the caller's contract.
        unsafe { put(stream, handle as Handle) }
    })
}

/// `cuStreamDestroy_v2`: a stream of `cuStreamCreate`, once. A stream in
/// a capture leaves it and invalidates it (a capture it began is gone).
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: Handle) -> CUresult {
    log(
        "cuStreamDestroy_v2",
        CallKind::Other,
        On::Names(stream as u64),
    );
    with_driver(true, |d| {
        let stream = stream as u64;
        if !d.streams.contains_key(&stream) {
            return code::INVALID_HANDLE;
        }
        d.leave_capture(stream);
        d.streams.remove(&stream);
        code::SUCCESS
    })
}

/// `cuStreamSynchronize`: a faulted launch's error, or success; a
/// capturing stream may not be synchronized.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(stream: Handle) -> CUresult {
    log(
        "cuStreamSynchronize",
        CallKind::Sync,
        On::Waits(stream as u64),
    );
    with_driver(true, |d| query(d, stream))
}

/// `cuStreamQuery`: success, as work runs at the call (or a faulted
/// launch's error); a capturing stream may not be queried.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuStreamQuery(stream: Handle) -> CUresult {
    log("cuStreamQuery", CallKind::Other, On::Names(stream as u64));
    with_driver(true, |d| query(d, stream))
}

/// What synchronizing or querying `stream` returns.
fn query(d: &mut Driver, stream: Handle) -> CUresult {
    let stream = stream as u64;
    if !d.is_stream(stream) {
        return code::INVALID_HANDLE;
    }
    match d.admit(Use::Wait(stream)) {
        Err(refused) => refused,
        Ok(_) => sticky(d),
    }
}

/// `cuStreamWaitEvent`: flags must be 0. Work runs at the call, so the
/// wait has nothing to wait for, except in a capture: a stream waiting on
/// an event recorded in a capture joins it; a capturing stream may wait
/// only on events of its own capture.
///
/// # Safety
///
/// None: unknown handles are refused.
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitEvent(
    stream: Handle,
    event: Handle,
    flags: c_uint,
) -> CUresult {
    log(
        "cuStreamWaitEvent",
        CallKind::Other,
        On::Stream(stream as u64),
    );
    with_driver(true, |d| {
        let stream = stream as u64;
        if flags != 0 {
            return code::INVALID_VALUE;
        }
        let Some(mark) = d.events.get(&(event as u64)).map(|e| e.mark) else {
            return code::INVALID_HANDLE;
        };
        if !d.is_stream(stream) {
            return code::INVALID_HANDLE;
        }
        if let Err(refused) = d.admit(Use::Enqueue(stream)) {
            return refused;
        }
        d.wait_for(stream, mark).err().unwrap_or(code::SUCCESS)
    })
}
