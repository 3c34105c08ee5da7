//! Events. Work runs at the call, so a recorded event is complete at once
//! and its time is the host's clock at the record.

use super::{code, log, sticky, with_driver, HipError, HipPtr};
use crate::calls::{CallKind, On};
use crate::driver::{put, Driver};
use crate::streams::{Mark, Untimed};
use std::ffi::c_uint;
use std::time::Instant;

/// `hipEvent*` flags: `BlockingSync`, `DisableTiming`, `Interprocess`
/// (which requires `DisableTiming`), `DisableSystemFence`,
/// `ReleaseToDevice`, `ReleaseToSystem` (not both of the last two).
const BLOCKING_SYNC: c_uint = 0x1;
const DISABLE_TIMING: c_uint = 0x2;
const INTERPROCESS: c_uint = 0x4;
const DISABLE_SYSTEM_FENCE: c_uint = 0x2000_0000;
const RELEASE_TO_DEVICE: c_uint = 0x4000_0000;
const RELEASE_TO_SYSTEM: c_uint = 0x8000_0000;

/// Creates an event with `flags` at `event`.
///
/// # Safety
///
/// `event` is null or valid for a write.
unsafe fn create(event: *mut HipPtr, flags: c_uint) -> HipError {
    let known = BLOCKING_SYNC
        | DISABLE_TIMING
        | INTERPROCESS
        | DISABLE_SYSTEM_FENCE
        | RELEASE_TO_DEVICE
        | RELEASE_TO_SYSTEM;
    let release = RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM;
    let interprocess_untimed = flags & INTERPROCESS == 0 || flags & DISABLE_TIMING != 0;
    if event.is_null() || flags & !known != 0 || flags & release == release || !interprocess_untimed
    {
        return code::INVALID_VALUE;
    }
    with_driver(|d| {
        let handle = d.add_event(flags & DISABLE_TIMING == 0);
        // SAFETY: non-null, valid by the caller's contract.
        unsafe { put(event, handle as HipPtr) }
    })
}

/// `hipEventCreate`: an event with timing.
///
/// # Safety
///
/// `event` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipEventCreate(event: *mut HipPtr) -> HipError {
    log("hipEventCreate", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    unsafe { create(event, 0) }
}

/// `hipEventCreateWithFlags`.
///
/// # Safety
///
/// `event` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipEventCreateWithFlags(event: *mut HipPtr, flags: c_uint) -> HipError {
    log("hipEventCreateWithFlags", CallKind::Other, On::Nothing);
    // SAFETY: the caller's contract.
    unsafe { create(event, flags) }
}

/// `hipEventRecord`: the event marks the host's clock now.
///
/// # Safety
///
/// None: unknown handles are refused.
#[no_mangle]
pub unsafe extern "C" fn hipEventRecord(event: HipPtr, stream: HipPtr) -> HipError {
    log("hipEventRecord", CallKind::Other, On::Stream(stream as u64));
    with_driver(|d| {
        if !d.is_stream(stream as u64) {
            return code::INVALID_HANDLE;
        }
        match d.events.get_mut(&(event as u64)) {
            Some(e) => {
                e.mark = Mark::At(Instant::now());
                code::SUCCESS
            }
            None => code::INVALID_HANDLE,
        }
    })
}

/// What querying or synchronizing `event` returns.
fn settled(d: &Driver, event: HipPtr) -> HipError {
    if d.events.contains_key(&(event as u64)) {
        sticky(d)
    } else {
        code::INVALID_HANDLE
    }
}

/// `hipEventQuery`: complete, as work runs at the call.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipEventQuery(event: HipPtr) -> HipError {
    log("hipEventQuery", CallKind::Other, On::Nothing);
    with_driver(|d| settled(d, event))
}

/// `hipEventSynchronize`: returns at once, as work runs at the call.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipEventSynchronize(event: HipPtr) -> HipError {
    log("hipEventSynchronize", CallKind::Sync, On::Waits(0));
    with_driver(|d| settled(d, event))
}

/// `hipEventElapsedTime`: the milliseconds between the records of `start`
/// and `stop`; `hipErrorInvalidHandle` if either was created with
/// `hipEventDisableTiming` or never recorded.
///
/// # Safety
///
/// `milliseconds` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipEventElapsedTime(
    milliseconds: *mut f32,
    start: HipPtr,
    stop: HipPtr,
) -> HipError {
    log("hipEventElapsedTime", CallKind::Other, On::Nothing);
    if milliseconds.is_null() {
        return code::INVALID_VALUE;
    }
    with_driver(|d| match d.elapsed(start as u64, stop as u64) {
        // SAFETY: non-null, valid by the caller's contract.
        Ok(ms) => unsafe { put(milliseconds, ms) },
        Err(Untimed::Handle | Untimed::Captured) => code::INVALID_HANDLE,
    })
}

/// `hipEventDestroy`: an event of `hipEventCreate*`, once.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipEventDestroy(event: HipPtr) -> HipError {
    log("hipEventDestroy", CallKind::Other, On::Nothing);
    with_driver(|d| match d.events.remove(&(event as u64)) {
        Some(_) => code::SUCCESS,
        None => code::INVALID_HANDLE,
    })
}
