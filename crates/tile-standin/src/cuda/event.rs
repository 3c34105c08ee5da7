//! Events. Work runs at the call, so a recorded event is complete at once
//! and its time is the host's clock at the record; one recorded on a
//! capturing stream marks a point of the capture instead, and may not be
//! queried, synchronized or timed while the capture is open
//! (`CUDA_ERROR_CAPTURED_EVENT`).

use super::{code, log, sticky, with_driver, CUresult, Handle};
use crate::calls::{CallKind, On};
use crate::capture::Use;
use crate::driver::{put, Driver};
use crate::streams::{Mark, Untimed};
use std::ffi::c_uint;
use std::time::Instant;

/// `CU_EVENT_BLOCKING_SYNC`, `DISABLE_TIMING`, `INTERPROCESS`.
const BLOCKING_SYNC: c_uint = 1;
const DISABLE_TIMING: c_uint = 2;
const INTERPROCESS: c_uint = 4;

/// `cuEventCreate`: flags within `BLOCKING_SYNC`, `DISABLE_TIMING` and
/// `INTERPROCESS`, which requires `DISABLE_TIMING`.
///
/// # Safety
///
/// `event` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(event: *mut Handle, flags: c_uint) -> CUresult {
    log("cuEventCreate", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        let known = flags & !(BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS) == 0;
        let interprocess_untimed = flags & INTERPROCESS == 0 || flags & DISABLE_TIMING != 0;
        if event.is_null() || !known || !interprocess_untimed {
            return code::INVALID_VALUE;
        }
        let handle = d.add_event(flags & DISABLE_TIMING == 0);
        // SAFETY: non-null, valid by the caller's contract.
        unsafe { put(event, handle as Handle) }
    })
}

/// `cuEventRecord`: the event marks the host's clock now, or, on a
/// capturing stream, the capture's current point on that stream.
///
/// # Safety
///
/// None: unknown handles are refused.
#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(event: Handle, stream: Handle) -> CUresult {
    log("cuEventRecord", CallKind::Other, On::Stream(stream as u64));
    with_driver(true, |d| {
        let (event, stream) = (event as u64, stream as u64);
        if !d.events.contains_key(&event) || !d.is_stream(stream) {
            return code::INVALID_HANDLE;
        }
        let mark = match d.admit(Use::Enqueue(stream)) {
            Err(refused) => return refused,
            Ok(Some(capture)) => d.capture_mark(capture, stream),
            Ok(None) => Mark::At(Instant::now()),
        };
        d.events.get_mut(&event).expect("checked").mark = mark;
        code::SUCCESS
    })
}

/// What querying or synchronizing `event` returns: success (a faulted
/// launch's error), as recorded work is complete.
fn settled(d: &Driver, event: Handle) -> CUresult {
    match d.events.get(&(event as u64)) {
        None => code::INVALID_HANDLE,
        Some(e) if d.in_open_capture(e.mark) => code::CAPTURED_EVENT,
        Some(_) => sticky(d),
    }
}

/// `cuEventQuery`: complete, as work runs at the call.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuEventQuery(event: Handle) -> CUresult {
    log("cuEventQuery", CallKind::Other, On::Nothing);
    with_driver(true, |d| settled(d, event))
}

/// `cuEventSynchronize`: returns at once, as work runs at the call.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(event: Handle) -> CUresult {
    log("cuEventSynchronize", CallKind::Sync, On::Waits(0));
    with_driver(true, |d| settled(d, event))
}

/// `cuEventElapsedTime`: the milliseconds between the records of `start`
/// and `end`. `CUDA_ERROR_INVALID_HANDLE` if either was created with
/// `DISABLE_TIMING` or never recorded, as the driver documents.
///
/// # Safety
///
/// `milliseconds` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    milliseconds: *mut f32,
    start: Handle,
    end: Handle,
) -> CUresult {
    log("cuEventElapsedTime", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        if milliseconds.is_null() {
            return code::INVALID_VALUE;
        }
        match d.elapsed(start as u64, end as u64) {
            // SAFETY: non-null, valid by the caller's contract.
            Ok(ms) => unsafe { put(milliseconds, ms) },
            Err(Untimed::Handle) => code::INVALID_HANDLE,
            Err(Untimed::Captured) => code::CAPTURED_EVENT,
        }
    })
}

/// `cuEventDestroy_v2`: an event of `cuEventCreate`, once.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(event: Handle) -> CUresult {
    log("cuEventDestroy_v2", CallKind::Other, On::Nothing);
    with_driver(true, |d| match d.events.remove(&(event as u64)) {
        Some(_) => code::SUCCESS,
        None => code::INVALID_HANDLE,
    })
}
