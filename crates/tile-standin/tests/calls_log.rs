//! The call log: what a short sequence of CUDA and HIP calls logs (each
//! call's kind, stream and whether it serializes with other streams), read
//! through the exported C function as a test that opened the library
//! would, and the log's text format read back by `calls::parse`. The log
//! is the process's: one test makes calls.

use std::ffi::c_void;
use std::ptr::null_mut;
use tile_standin::calls::{self, Call, CallKind};
use tile_standin::cuda::{self, code, Handle};
use tile_standin::hip;

/// The log's text, read as a C caller reads it: its length first, then
/// into a buffer that fits (a smaller one is left untouched).
fn log_text() -> String {
    // SAFETY: a null buffer of capacity 0 is only measured.
    let length = unsafe { calls::tile_standin_calls(null_mut(), 0) };
    let mut small = vec![0xFFu8; length - 1];
    // SAFETY: the buffer holds `length - 1` bytes.
    let needed = unsafe { calls::tile_standin_calls(small.as_mut_ptr(), small.len()) };
    assert_eq!(needed, length);
    assert!(
        small.iter().all(|&b| b == 0xFF),
        "too small: nothing written"
    );
    let mut buffer = vec![0u8; length];
    // SAFETY: the buffer holds `length` bytes.
    let written = unsafe { calls::tile_standin_calls(buffer.as_mut_ptr(), buffer.len()) };
    assert_eq!(written, length);
    String::from_utf8(buffer).expect("UTF-8")
}

#[test]
fn each_call_logs_its_kind_stream_and_serialization() {
    use CallKind::{Alloc, Copy, Launch, Other, Sync};
    let (mut context, mut s, mut b, mut h, mut event) =
        (null_mut(), null_mut(), null_mut(), null_mut(), null_mut());
    let (mut device, mut pinned, mut hip_device) = (0u64, null_mut(), null_mut());
    let host = [0u8; 64];
    let mut back = [0u8; 64];
    let (to, from): (*mut c_void, *const c_void) = (back.as_mut_ptr().cast(), host.as_ptr().cast());
    let (legacy, per_thread, unknown) = (1 as Handle, 2 as Handle, 0x77 as Handle);
    // SAFETY (the block): valid out-pointers and 64-byte host buffers;
    // handles are the stand-in's or deliberately wrong numbers, which it
    // refuses (and logs).
    unsafe {
        calls::tile_standin_calls_clear();
        assert_eq!(cuda::cuInit(0), code::SUCCESS);
        assert_eq!(
            cuda::cuDevicePrimaryCtxRetain(&mut context, 0),
            code::SUCCESS
        );
        assert_eq!(cuda::cuCtxSetCurrent(context), code::SUCCESS);
        assert_eq!(cuda::cuStreamCreate(&mut s, 1), code::SUCCESS);
        assert_eq!(cuda::cuStreamCreate(&mut b, 0), code::SUCCESS);
        assert_eq!(cuda::cuMemAlloc_v2(&mut device, 64), code::SUCCESS);
        assert_eq!(cuda::cuMemHostAlloc(&mut pinned, 64, 2), code::SUCCESS);
        cuda::cuMemcpyHtoD_v2(device, from, 64);
        cuda::cuMemcpyHtoDAsync_v2(device, from, 64, s);
        cuda::cuMemcpyDtoHAsync_v2(to, device, 64, b);
        cuda::cuMemsetD8Async(device, 0, 64, per_thread);
        cuda::cuMemsetD32Async(device, 0, 16, legacy);
        assert_eq!(cuda::cuEventCreate(&mut event, 2), code::SUCCESS);
        cuda::cuEventRecord(event, s);
        cuda::cuStreamWaitEvent(b, event, 0);
        cuda::cuLaunchKernel(unknown, 1, 1, 1, 1, 1, 1, 0, s, null_mut(), null_mut());
        cuda::cuGraphLaunch(unknown, b);
        cuda::cuStreamQuery(s);
        assert_eq!(cuda::cuStreamSynchronize(s), code::SUCCESS);
        cuda::cuStreamSynchronize(unknown);
        cuda::cuEventSynchronize(event);
        cuda::cuCtxSynchronize();
        cuda::cuMemFreeHost(pinned);
        cuda::cuMemFree_v2(device);
        assert_eq!(hip::hipStreamCreateWithFlags(&mut h, 1), code::SUCCESS);
        assert_eq!(hip::hipMalloc(&mut hip_device, 64), code::SUCCESS);
        hip::hipMemcpyAsync(hip_device, from, 64, 1, h);
        hip::hipMemcpy(to, hip_device, 64, 2);
        hip::hipModuleLaunchKernel(unknown, 1, 1, 1, 1, 1, 1, 0, h, null_mut(), null_mut());
        hip::hipStreamSynchronize(h);
        assert_eq!(hip::hipFree(hip_device), code::SUCCESS);
    }
    let (s, b, h) = (s as u64, b as u64, h as u64);
    let expected: Vec<(&str, CallKind, u64, bool)> = vec![
        ("cuInit", Other, 0, false),
        ("cuDevicePrimaryCtxRetain", Other, 0, false),
        ("cuCtxSetCurrent", Other, 0, false),
        ("cuStreamCreate", Other, 0, false),
        ("cuStreamCreate", Other, 0, false),
        ("cuMemAlloc_v2", Alloc, 0, true),
        ("cuMemHostAlloc", Alloc, 0, true),
        // Synchronous copies run on the legacy stream.
        ("cuMemcpyHtoD_v2", Copy, 0, true),
        // Non-blocking, blocking, per-thread and legacy streams.
        ("cuMemcpyHtoDAsync_v2", Copy, s, false),
        ("cuMemcpyDtoHAsync_v2", Copy, b, true),
        ("cuMemsetD8Async", Copy, 2, true),
        ("cuMemsetD32Async", Copy, 1, true),
        ("cuEventCreate", Other, 0, false),
        ("cuEventRecord", Other, s, false),
        ("cuStreamWaitEvent", Other, b, true),
        // Refused calls are logged too.
        ("cuLaunchKernel", Launch, s, false),
        ("cuGraphLaunch", Launch, b, true),
        ("cuStreamQuery", Other, s, false),
        ("cuStreamSynchronize", Sync, s, true),
        ("cuStreamSynchronize", Sync, 0x77, true),
        ("cuEventSynchronize", Sync, 0, true),
        ("cuCtxSynchronize", Sync, 0, true),
        ("cuMemFreeHost", Alloc, 0, true),
        ("cuMemFree_v2", Alloc, 0, true),
        ("hipStreamCreateWithFlags", Other, 0, false),
        ("hipMalloc", Alloc, 0, true),
        ("hipMemcpyAsync", Copy, h, false),
        ("hipMemcpy", Copy, 0, true),
        ("hipModuleLaunchKernel", Launch, h, false),
        ("hipStreamSynchronize", Sync, h, true),
        ("hipFree", Alloc, 0, true),
    ];
    let expected: Vec<Call> = expected
        .into_iter()
        .map(|(name, kind, stream, serializes)| Call {
            name: name.into(),
            kind,
            stream,
            serializes,
        })
        .collect();
    let text = log_text();
    assert_eq!(calls::parse(&text), Ok(expected.clone()), "{text}");
    let printed: String = expected.iter().map(|c| format!("{c}\n")).collect();
    assert_eq!(text, printed, "the text is the calls' lines");
    assert!(text.starts_with("cuInit other 0x0 0\ncuDevicePrimaryCtxRetain other 0x0 0\n"));

    // SAFETY: clearing is always allowed.
    unsafe { calls::tile_standin_calls_clear() };
    assert_eq!(log_text_len(), 0);
}

/// The log's length.
fn log_text_len() -> usize {
    // SAFETY: a null buffer is only measured.
    unsafe { calls::tile_standin_calls(null_mut(), 0) }
}

#[test]
fn the_text_format_reads_back_and_malformed_lines_are_named() {
    let text = "cuLaunchKernel launch 0x1003 0\ncuMemFree_v2 alloc 0x0 1\n";
    let parsed = calls::parse(text).unwrap();
    assert_eq!(
        parsed,
        [
            Call {
                name: "cuLaunchKernel".into(),
                kind: CallKind::Launch,
                stream: 0x1003,
                serializes: false,
            },
            Call {
                name: "cuMemFree_v2".into(),
                kind: CallKind::Alloc,
                stream: 0,
                serializes: true,
            },
        ]
    );
    let printed: String = parsed.iter().map(|c| format!("{c}\n")).collect();
    assert_eq!(printed, text);
    assert_eq!(calls::parse(""), Ok(vec![]));

    let malformed = [
        (
            "a sync 0x0",
            "expected 4 fields separated by single spaces, found 3",
        ),
        (
            "a sync  0x0 1",
            "expected 4 fields separated by single spaces, found 5",
        ),
        (" sync 0x0 1", "expected an entry point's name"),
        (
            "a wait 0x0 1",
            "expected a kind: launch, alloc, copy, sync or other",
        ),
        ("a sync 12 1", "expected a stream in hexadecimal with `0x`"),
        ("a sync 0xg 1", "expected a stream in hexadecimal with `0x`"),
        ("a sync 0x0 2", "expected serializes as 0 or 1"),
        ("", "expected 4 fields separated by single spaces, found 1"),
    ];
    for (line, reason) in malformed {
        let text = format!("cuInit other 0x0 0\n{line}\ncuInit other 0x0 0\n");
        assert_eq!(
            calls::parse(&text),
            Err(format!("line 2: {reason}: `{line}`")),
            "{line:?}"
        );
    }
}
