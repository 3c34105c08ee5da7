//! Stream capture and graphs (the crate's `capture.rs` holds the rules):
//! a capture begun on a stream records its launches, copies and fills; its
//! end gives a graph; an executable graph instantiated from it replays
//! them, in order, on the calling thread, at each `cuGraphLaunch`.
//!
//! Left out: launching a graph into a capturing stream (a real driver adds
//! it as a child graph; the stand-in refuses it with
//! `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`), graph nodes built by hand,
//! graph updates, and `cuThreadExchangeStreamCaptureMode` (every thread's
//! mode is `GLOBAL`).

use super::{code, fault_code, log, with_driver, CUresult, Handle};
use crate::calls::{CallKind, On};
use crate::capture::{self, Mode, Use};
use crate::driver::put;
use std::ffi::{c_int, c_ulonglong};

/// `CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH`, `UPLOAD`,
/// `DEVICE_LAUNCH`, `USE_NODE_PRIORITY`: accepted, without effect here.
const INSTANTIATE_FLAGS: c_ulonglong = 1 | 2 | 4 | 8;

/// `cuStreamBeginCapture_v2`: `mode` is `CU_STREAM_CAPTURE_MODE_GLOBAL`
/// (0), `THREAD_LOCAL` (1) or `RELAXED` (2). The legacy stream cannot
/// capture (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`); nor can a stream
/// that already does (`CUDA_ERROR_ILLEGAL_STATE`).
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuStreamBeginCapture_v2(stream: Handle, mode: c_int) -> CUresult {
    log(
        "cuStreamBeginCapture_v2",
        CallKind::Other,
        On::Names(stream as u64),
    );
    with_driver(true, |d| {
        let Some(mode) = Mode::from_raw(mode) else {
            return code::INVALID_VALUE;
        };
        if !d.is_stream(stream as u64) {
            return code::INVALID_HANDLE;
        }
        d.begin_capture(stream as u64, mode)
            .err()
            .unwrap_or(code::SUCCESS)
    })
}

/// `cuStreamIsCapturing`: `CU_STREAM_CAPTURE_STATUS_NONE` (0), `ACTIVE`
/// (1) or `INVALIDATED` (2). Asked of the legacy stream while a blocking
/// stream captures: `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`, the capture
/// intact.
///
/// # Safety
///
/// `status` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuStreamIsCapturing(stream: Handle, status: *mut c_int) -> CUresult {
    log(
        "cuStreamIsCapturing",
        CallKind::Other,
        On::Names(stream as u64),
    );
    with_driver(true, |d| {
        if status.is_null() {
            return code::INVALID_VALUE;
        }
        if !d.is_stream(stream as u64) {
            return code::INVALID_HANDLE;
        }
        match d.capture_status(stream as u64) {
            // SAFETY: non-null, valid by the caller's contract.
            Ok(value) => unsafe { put(status, value) },
            Err(refused) => refused,
        }
    })
}

/// `cuStreamEndCapture`: the graph of the capture `stream` began; null,
/// with the code, if the capture was invalidated, a joined stream's work
/// is not joined back, or `stream` did not begin a capture.
///
/// # Safety
///
/// `graph` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuStreamEndCapture(stream: Handle, graph: *mut Handle) -> CUresult {
    log(
        "cuStreamEndCapture",
        CallKind::Other,
        On::Names(stream as u64),
    );
    with_driver(true, |d| {
        if graph.is_null() {
            return code::INVALID_VALUE;
        }
        if !d.is_stream(stream as u64) {
            return code::INVALID_HANDLE;
        }
        let (status, handle) = match d.end_capture(stream as u64) {
            Ok(ops) => {
                let handle = d.handle();
                d.graphs.insert(handle, ops.into());
                (code::SUCCESS, handle)
            }
            Err(refused) => (refused, 0),
        };
        // SAFETY: non-null, valid by the caller's contract.
        unsafe { put(graph, handle as Handle) };
        status
    })
}

/// `cuGraphInstantiateWithFlags`: an executable graph of `graph`'s
/// operations, which outlives `graph`.
///
/// # Safety
///
/// `exec` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuGraphInstantiateWithFlags(
    exec: *mut Handle,
    graph: Handle,
    flags: c_ulonglong,
) -> CUresult {
    log("cuGraphInstantiateWithFlags", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        if exec.is_null() || flags & !INSTANTIATE_FLAGS != 0 {
            return code::INVALID_VALUE;
        }
        let Some(ops) = d.graphs.get(&(graph as u64)).cloned() else {
            return code::INVALID_HANDLE;
        };
        let handle = d.handle();
        d.execs.insert(handle, ops);
        // SAFETY: non-null, valid by the caller's contract.
        unsafe { put(exec, handle as Handle) }
    })
}

/// `cuGraphLaunch`: replays the graph's operations in order before
/// returning; a fault stops it and becomes the context's sticky error.
///
/// # Safety
///
/// The host memory of the graph's copies is valid, as at capture.
#[no_mangle]
pub unsafe extern "C" fn cuGraphLaunch(exec: Handle, stream: Handle) -> CUresult {
    log("cuGraphLaunch", CallKind::Launch, On::Stream(stream as u64));
    let mut ops = None;
    let status = with_driver(true, |d| {
        let Some(found) = d.execs.get(&(exec as u64)).cloned() else {
            return code::INVALID_HANDLE;
        };
        if !d.is_stream(stream as u64) {
            return code::INVALID_HANDLE;
        }
        match d.admit(Use::Enqueue(stream as u64)) {
            Err(refused) => return refused,
            Ok(Some(capture)) => {
                eprintln!(
                    "tile-standin: cuGraphLaunch refused: launching a graph into a capture is not modelled"
                );
                d.invalidate(capture);
                return code::STREAM_CAPTURE_UNSUPPORTED;
            }
            Ok(None) => {}
        }
        if let Some(fault) = d.sticky {
            return fault_code(fault);
        }
        ops = Some(found);
        code::SUCCESS
    });
    let Some(ops) = ops else {
        return status;
    };
    // SAFETY: the caller's contract; launches run on their parameters'
    // copies.
    if let Err(fault) = unsafe { capture::replay(&ops) } {
        with_driver(false, |d| {
            d.sticky.get_or_insert(fault);
            code::SUCCESS
        });
    }
    code::SUCCESS
}

/// `cuGraphExecDestroy`; not while a capture forbids it to this thread.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuGraphExecDestroy(exec: Handle) -> CUresult {
    log("cuGraphExecDestroy", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        if !d.execs.contains_key(&(exec as u64)) {
            return code::INVALID_HANDLE;
        }
        if let Err(refused) = d.admit(Use::Unsafe) {
            return refused;
        }
        d.execs.remove(&(exec as u64));
        code::SUCCESS
    })
}

/// `cuGraphDestroy`: its executable graphs live on.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuGraphDestroy(graph: Handle) -> CUresult {
    log("cuGraphDestroy", CallKind::Other, On::Nothing);
    with_driver(true, |d| match d.graphs.remove(&(graph as u64)) {
        Some(_) => code::SUCCESS,
        None => code::INVALID_HANDLE,
    })
}
