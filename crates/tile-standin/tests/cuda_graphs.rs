//! The CUDA stand-in's stream capture and graphs: a capture records
//! launches (their parameters copied at the call) and copies instead of
//! running them, its graph replays them at each launch, and the calls the
//! rules of stream capture forbid fail with the driver's codes and
//! invalidate the capture. A capture in `GLOBAL` mode forbids calls to
//! every thread of the process, so the tests take turns.

mod sample;

use sample::{BLOCK, N};
use std::ffi::{c_int, c_void, CString};
use std::ptr::null_mut;
use std::sync::{Mutex, MutexGuard};
use tile_abi::status::STATUS_BYTES;
use tile_abi::Packet;
use tile_codegen::{Sm, Target};
use tile_standin::cuda::{self, code, CUresult, Handle};

/// `CU_STREAM_NON_BLOCKING`.
const NON_BLOCKING: u32 = 1;
/// `CU_STREAM_CAPTURE_MODE_*`.
const GLOBAL: c_int = 0;
const THREAD_LOCAL: c_int = 1;
const RELAXED: c_int = 2;
/// `CU_STREAM_CAPTURE_STATUS_*`.
const NONE: c_int = 0;
const ACTIVE: c_int = 1;
const INVALIDATED: c_int = 2;

/// One test at a time: captures forbid calls process-wide.
fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let mut context = null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(cuda::cuInit(0), code::SUCCESS);
        assert_eq!(
            cuda::cuDevicePrimaryCtxRetain(&mut context, 0),
            code::SUCCESS
        );
        assert_eq!(cuda::cuCtxSetCurrent(context), code::SUCCESS);
    }
    turn
}

/// A stream created with `flags`.
fn stream(flags: u32) -> Handle {
    let mut stream = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(
        unsafe { cuda::cuStreamCreate(&mut stream, flags) },
        code::SUCCESS
    );
    stream
}

/// An event with timing.
fn event() -> Handle {
    let mut event = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { cuda::cuEventCreate(&mut event, 0) }, code::SUCCESS);
    event
}

/// Device memory holding `values`.
fn upload(values: &[f32]) -> u64 {
    let mut pointer = 0;
    // SAFETY: a valid out-pointer; the copy reads the live slice.
    unsafe {
        assert_eq!(
            cuda::cuMemAlloc_v2(&mut pointer, 4 * values.len()),
            code::SUCCESS
        );
        assert_eq!(
            cuda::cuMemcpyHtoD_v2(pointer, values.as_ptr().cast(), 4 * values.len()),
            code::SUCCESS
        );
    }
    pointer
}

/// The `N` floats at `pointer`.
fn download(pointer: u64) -> Vec<f32> {
    let mut values = vec![0.0f32; N];
    // SAFETY: the destination holds `4 * N` bytes.
    let status = unsafe { cuda::cuMemcpyDtoH_v2(values.as_mut_ptr().cast(), pointer, 4 * N) };
    assert_eq!(status, code::SUCCESS);
    values
}

/// `begin` on `stream` in `mode`, then the capture status.
fn begin(stream: Handle, mode: c_int) -> CUresult {
    // SAFETY: a handle of the stand-in's.
    unsafe { cuda::cuStreamBeginCapture_v2(stream, mode) }
}

/// The capture status of `stream`: the call's status and the status.
fn capturing(stream: Handle) -> (CUresult, c_int) {
    let mut status = -1;
    // SAFETY: a valid out-pointer.
    let result = unsafe { cuda::cuStreamIsCapturing(stream, &mut status) };
    (result, status)
}

/// Ends the capture on `stream`: the status and the graph.
fn end(stream: Handle) -> (CUresult, Handle) {
    let mut graph = std::ptr::dangling_mut::<c_void>();
    // SAFETY: a valid out-pointer.
    let status = unsafe { cuda::cuStreamEndCapture(stream, &mut graph) };
    (status, graph)
}

/// The sample vector add, loaded: its module and function.
fn vector_add() -> (Handle, Handle) {
    let (ptx, image) = sample::vector_add(Target::Nvptx(Sm::Sm80));
    let images = sample::images_dir("cuda-graphs");
    sample::store(&images, &ptx, &image);
    let text = CString::new(ptx).unwrap();
    let name = CString::new("vector_add").unwrap();
    let (mut module, mut function) = (null_mut(), null_mut());
    // SAFETY: NUL-terminated PTX without options; valid out-pointers.
    unsafe {
        let status =
            cuda::cuModuleLoadDataEx(&mut module, text.as_ptr().cast(), 0, null_mut(), null_mut());
        assert_eq!(status, code::SUCCESS);
        assert_eq!(
            cuda::cuModuleGetFunction(&mut function, module, name.as_ptr()),
            code::SUCCESS
        );
    }
    std::fs::remove_dir_all(&images).unwrap();
    (module, function)
}

/// Launches `function` (the vector add) on `stream`: `out = x + y`, with a
/// status record. The parameters live in buffers of this call, which are
/// overwritten and freed when it returns, as a caller may.
fn add(function: Handle, stream: Handle, [x, y, out, status]: [u64; 4]) -> CUresult {
    let mut packet = Packet::default();
    packet.push_tensor(x, &[N], &[1]);
    packet.push_tensor(y, &[N], &[1]);
    packet.push_tensor(out, &[N], &[1]);
    packet.push_pointer(status);
    let mut values: Vec<Vec<u8>> = packet.params().iter().map(|p| p.to_vec()).collect();
    let mut pointers: Vec<*mut c_void> = values.iter_mut().map(|v| v.as_mut_ptr().cast()).collect();
    let grid = N.div_ceil(BLOCK) as u32;
    // SAFETY: one pointer per kernel parameter, alive for the call.
    let result = unsafe {
        cuda::cuLaunchKernel(
            function,
            grid,
            1,
            1,
            sample::block_threads(Target::Nvptx(Sm::Sm80)),
            1,
            1,
            0,
            stream,
            pointers.as_mut_ptr(),
            null_mut(),
        )
    };
    for value in &mut values {
        value.fill(0xAB);
    }
    result
}

#[test]
fn a_captured_graph_replays_its_work_at_each_launch() {
    let _turn = turn();
    let (module, function) = vector_add();
    let (xs, ys, _) = sample::inputs();
    let zeros = [0.0f32; N];
    let (x, y, a, b, c) = (
        upload(&xs),
        upload(&ys),
        upload(&zeros),
        upload(&zeros),
        upload(&zeros),
    );
    let status = upload(&[0.0; STATUS_BYTES / 4]);
    let s = stream(NON_BLOCKING);

    // Capture a = x + y; b = a; c = b + y. Nothing runs.
    assert_eq!(capturing(s), (code::SUCCESS, NONE));
    assert_eq!(begin(s, GLOBAL), code::SUCCESS);
    assert_eq!(capturing(s), (code::SUCCESS, ACTIVE));
    assert_eq!(add(function, s, [x, y, a, status]), code::SUCCESS);
    // SAFETY: both ranges are device memory of `4 * N` bytes.
    let copied = unsafe { cuda::cuMemcpyDtoDAsync_v2(b, a, 4 * N, s) };
    assert_eq!(copied, code::SUCCESS);
    assert_eq!(add(function, s, [b, y, c, status]), code::SUCCESS);
    let (ended, graph) = end(s);
    assert_eq!(ended, code::SUCCESS);
    assert!(!graph.is_null());
    assert_eq!(capturing(s), (code::SUCCESS, NONE));
    assert_eq!(download(a), zeros, "the capture ran nothing");
    assert_eq!(download(c), zeros);

    let mut exec = null_mut();
    // SAFETY (the block): valid out-pointers; handles are the stand-in's
    // or deliberately wrong numbers, which it refuses.
    unsafe {
        assert_eq!(
            cuda::cuGraphInstantiateWithFlags(&mut exec, graph, 16),
            code::INVALID_VALUE
        );
        assert_eq!(
            cuda::cuGraphInstantiateWithFlags(&mut exec, 77 as Handle, 0),
            code::INVALID_HANDLE
        );
        assert_eq!(
            cuda::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
            code::SUCCESS
        );
        // The executable graph outlives its graph.
        assert_eq!(cuda::cuGraphDestroy(graph), code::SUCCESS);
        assert_eq!(cuda::cuGraphDestroy(graph), code::INVALID_HANDLE);

        // Each launch replays the work on the memory as it is then.
        for round in 0..2 {
            let xs: Vec<f32> = xs.iter().map(|v| v + round as f32).collect();
            let from = xs.as_ptr().cast();
            assert_eq!(cuda::cuMemcpyHtoD_v2(x, from, 4 * N), code::SUCCESS);
            assert_eq!(cuda::cuMemsetD8_v2(c, 0, 4 * N), code::SUCCESS);
            assert_eq!(cuda::cuGraphLaunch(exec, s), code::SUCCESS);
            assert_eq!(cuda::cuStreamSynchronize(s), code::SUCCESS);
            let expected: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| x + 2.0 * y).collect();
            assert_eq!(download(c), expected, "round {round}");
        }
        assert_eq!(cuda::cuGraphLaunch(77 as Handle, s), code::INVALID_HANDLE);
        assert_eq!(
            cuda::cuGraphLaunch(exec, 77 as Handle),
            code::INVALID_HANDLE
        );
        assert_eq!(cuda::cuGraphExecDestroy(exec), code::SUCCESS);
        assert_eq!(cuda::cuGraphExecDestroy(exec), code::INVALID_HANDLE);
        for pointer in [x, y, a, b, c, status] {
            assert_eq!(cuda::cuMemFree_v2(pointer), code::SUCCESS);
        }
        assert_eq!(cuda::cuStreamDestroy_v2(s), code::SUCCESS);
        assert_eq!(cuda::cuModuleUnload(module), code::SUCCESS);
    }
}

#[test]
fn capture_begins_and_ends_only_where_the_driver_lets_it() {
    let _turn = turn();
    let s = stream(NON_BLOCKING);
    let unknown = 77 as Handle;
    assert_eq!(begin(null_mut(), GLOBAL), code::STREAM_CAPTURE_UNSUPPORTED);
    assert_eq!(begin(1 as Handle, GLOBAL), code::STREAM_CAPTURE_UNSUPPORTED);
    assert_eq!(begin(s, 3), code::INVALID_VALUE);
    assert_eq!(begin(unknown, GLOBAL), code::INVALID_HANDLE);
    assert_eq!(capturing(unknown).0, code::INVALID_HANDLE);
    assert_eq!(end(s), (code::ILLEGAL_STATE, null_mut()), "not capturing");
    // SAFETY: a null out-pointer, refused.
    let null_graph = unsafe { cuda::cuStreamEndCapture(s, null_mut()) };
    assert_eq!(null_graph, code::INVALID_VALUE);

    // The per-thread stream captures; a capture begins once.
    let per_thread = 2 as Handle;
    assert_eq!(begin(per_thread, RELAXED), code::SUCCESS);
    assert_eq!(begin(per_thread, RELAXED), code::ILLEGAL_STATE);
    assert_eq!(end(per_thread).0, code::SUCCESS, "an empty graph");

    // A capture not begun RELAXED ends on the thread that began it.
    assert_eq!(begin(s, THREAD_LOCAL), code::SUCCESS);
    let raw = s as usize;
    let elsewhere = std::thread::spawn(move || {
        let mut context = null_mut();
        // SAFETY: valid out-pointers; a handle of the stand-in's.
        unsafe {
            assert_eq!(
                cuda::cuDevicePrimaryCtxRetain(&mut context, 0),
                code::SUCCESS
            );
            assert_eq!(cuda::cuCtxSetCurrent(context), code::SUCCESS);
        }
        end(raw as Handle).0
    });
    assert_eq!(elsewhere.join().unwrap(), code::STREAM_CAPTURE_WRONG_THREAD);
    assert_eq!(capturing(s), (code::SUCCESS, ACTIVE));
    assert_eq!(end(s).0, code::SUCCESS);
    // SAFETY: a handle of the stand-in's.
    assert_eq!(unsafe { cuda::cuStreamDestroy_v2(s) }, code::SUCCESS);
}

#[test]
fn calls_a_capture_forbids_fail_and_invalidate_it() {
    let _turn = turn();
    let s = stream(NON_BLOCKING);
    let device = upload(&[0.0; N]);
    let host = [0u8; 16];
    let sync_copy = || {
        // SAFETY: 16 bytes of host memory into device memory.
        unsafe { cuda::cuMemcpyHtoD_v2(device, host.as_ptr().cast(), 16) }
    };
    let alloc = || {
        let mut pointer = 0;
        // SAFETY: a valid out-pointer.
        let status = unsafe { cuda::cuMemAlloc_v2(&mut pointer, 16) };
        if status == code::SUCCESS {
            // SAFETY: just allocated.
            assert_eq!(unsafe { cuda::cuMemFree_v2(pointer) }, code::SUCCESS);
        }
        status
    };
    // SAFETY: handles of the stand-in's.
    let fill = |stream: Handle| unsafe { cuda::cuMemsetD8Async(device, 1, 16, stream) };

    // Synchronizing the capturing stream, or the context.
    // SAFETY (each call below): handles of the stand-in's.
    let waits: [(&str, &dyn Fn() -> CUresult); 3] = [
        ("stream synchronize", &|| unsafe {
            cuda::cuStreamSynchronize(s)
        }),
        ("stream query", &|| unsafe { cuda::cuStreamQuery(s) }),
        ("context synchronize", &|| unsafe {
            cuda::cuCtxSynchronize()
        }),
    ];
    for (what, wait) in waits {
        assert_eq!(begin(s, GLOBAL), code::SUCCESS);
        assert_eq!(wait(), code::STREAM_CAPTURE_UNSUPPORTED, "{what}");
        assert_eq!(capturing(s), (code::SUCCESS, INVALIDATED), "{what}");
        assert_eq!(fill(s), code::STREAM_CAPTURE_INVALIDATED, "{what}");
        assert_eq!(end(s), (code::STREAM_CAPTURE_INVALIDATED, null_mut()));
        assert_eq!(capturing(s), (code::SUCCESS, NONE), "{what}");
    }

    // Unsafe calls: forbidden by GLOBAL to every thread, by THREAD_LOCAL
    // to the capturing one, by RELAXED to none.
    for unsafe_call in [&sync_copy as &dyn Fn() -> CUresult, &alloc] {
        assert_eq!(begin(s, GLOBAL), code::SUCCESS);
        assert_eq!(unsafe_call(), code::STREAM_CAPTURE_UNSUPPORTED);
        assert_eq!(end(s).0, code::STREAM_CAPTURE_INVALIDATED);
        assert_eq!(begin(s, RELAXED), code::SUCCESS);
        assert_eq!(unsafe_call(), code::SUCCESS);
        assert_eq!(end(s).0, code::SUCCESS);
    }
    assert_eq!(begin(s, THREAD_LOCAL), code::SUCCESS);
    let other_thread = std::thread::spawn(|| {
        let mut context = null_mut();
        let mut pointer = 0;
        // SAFETY: valid out-pointers.
        unsafe {
            cuda::cuDevicePrimaryCtxRetain(&mut context, 0);
            cuda::cuCtxSetCurrent(context);
            let status = cuda::cuMemAlloc_v2(&mut pointer, 16);
            cuda::cuMemFree_v2(pointer);
            status
        }
    });
    assert_eq!(other_thread.join().unwrap(), code::SUCCESS);
    assert_eq!(alloc(), code::STREAM_CAPTURE_UNSUPPORTED);
    assert_eq!(end(s).0, code::STREAM_CAPTURE_INVALIDATED);

    // The legacy stream while a blocking stream captures: its use would
    // depend on the capture. A non-blocking capture leaves it usable.
    let blocking = stream(0);
    assert_eq!(begin(blocking, RELAXED), code::SUCCESS);
    assert_eq!(capturing(null_mut()).0, code::STREAM_CAPTURE_IMPLICIT);
    assert_eq!(capturing(blocking), (code::SUCCESS, ACTIVE), "intact");
    assert_eq!(fill(null_mut()), code::STREAM_CAPTURE_IMPLICIT);
    assert_eq!(capturing(blocking), (code::SUCCESS, INVALIDATED));
    assert_eq!(end(blocking).0, code::STREAM_CAPTURE_INVALIDATED);
    assert_eq!(begin(blocking, RELAXED), code::SUCCESS);
    assert_eq!(sync_copy(), code::STREAM_CAPTURE_IMPLICIT);
    assert_eq!(end(blocking).0, code::STREAM_CAPTURE_INVALIDATED);
    assert_eq!(begin(s, RELAXED), code::SUCCESS);
    assert_eq!(capturing(null_mut()), (code::SUCCESS, NONE));
    assert_eq!(fill(null_mut()), code::SUCCESS);
    assert_eq!(end(s).0, code::SUCCESS);

    // Events recorded in a capture are not complete work; a capture may
    // not wait on work outside it.
    let (inside, outside) = (event(), event());
    // SAFETY (the block): handles of the stand-in's; a valid out-pointer.
    unsafe {
        assert_eq!(cuda::cuEventRecord(outside, s), code::SUCCESS);
        assert_eq!(begin(s, GLOBAL), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(inside, s), code::SUCCESS);
        assert_eq!(cuda::cuEventQuery(inside), code::CAPTURED_EVENT);
        assert_eq!(cuda::cuEventSynchronize(inside), code::CAPTURED_EVENT);
        let mut ms = 0.0;
        assert_eq!(
            cuda::cuEventElapsedTime(&mut ms, outside, inside),
            code::CAPTURED_EVENT
        );
        assert_eq!(cuda::cuStreamWaitEvent(s, inside, 0), code::SUCCESS);
        assert_eq!(
            cuda::cuStreamWaitEvent(s, outside, 0),
            code::STREAM_CAPTURE_ISOLATION
        );
        assert_eq!(end(s).0, code::STREAM_CAPTURE_INVALIDATED);
        assert_eq!(cuda::cuEventQuery(inside), code::SUCCESS, "ended");

        // A graph does not launch into a capture here, nor may an
        // executable graph be destroyed during a GLOBAL capture.
        assert_eq!(begin(s, GLOBAL), code::SUCCESS);
        let (status, graph) = end(s);
        assert_eq!(status, code::SUCCESS, "an empty graph");
        let mut exec = null_mut();
        assert_eq!(
            cuda::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
            code::SUCCESS
        );
        assert_eq!(begin(s, GLOBAL), code::SUCCESS);
        assert_eq!(
            cuda::cuGraphLaunch(exec, s),
            code::STREAM_CAPTURE_UNSUPPORTED
        );
        assert_eq!(
            cuda::cuGraphExecDestroy(exec),
            code::STREAM_CAPTURE_UNSUPPORTED
        );
        assert_eq!(end(s).0, code::STREAM_CAPTURE_INVALIDATED);
        assert_eq!(cuda::cuGraphExecDestroy(exec), code::SUCCESS);
        assert_eq!(cuda::cuGraphDestroy(graph), code::SUCCESS);
        for e in [inside, outside] {
            assert_eq!(cuda::cuEventDestroy_v2(e), code::SUCCESS);
        }
        assert_eq!(cuda::cuStreamDestroy_v2(s), code::SUCCESS);
        assert_eq!(cuda::cuStreamDestroy_v2(blocking), code::SUCCESS);
        assert_eq!(cuda::cuMemFree_v2(device), code::SUCCESS);
    }
}

#[test]
fn streams_join_a_capture_through_events_and_must_be_joined_back() {
    let _turn = turn();
    let (origin, side) = (stream(NON_BLOCKING), stream(NON_BLOCKING));
    let (fork, join) = (event(), event());
    let device = upload(&[0.0; N]);
    // SAFETY (the block): handles of the stand-in's; device ranges inside
    // the allocation.
    unsafe {
        let fill =
            |stream: Handle, at: u64, value: u8| cuda::cuMemsetD8Async(at, value, 16, stream);
        // Fork: the side stream joins the capture, its work is captured.
        assert_eq!(begin(origin, GLOBAL), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(fork, origin), code::SUCCESS);
        assert_eq!(cuda::cuStreamWaitEvent(side, fork, 0), code::SUCCESS);
        assert_eq!(capturing(side), (code::SUCCESS, ACTIVE));
        assert_eq!(fill(origin, device, 1), code::SUCCESS);
        assert_eq!(fill(side, device + 16, 2), code::SUCCESS);
        // Not joined back: the capture fails.
        assert_eq!(end(origin), (code::STREAM_CAPTURE_UNJOINED, null_mut()));
        assert_eq!(capturing(side), (code::SUCCESS, NONE));

        // Ended on the side stream: not where it began.
        assert_eq!(begin(origin, GLOBAL), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(fork, origin), code::SUCCESS);
        assert_eq!(cuda::cuStreamWaitEvent(side, fork, 0), code::SUCCESS);
        assert_eq!(end(side).0, code::STREAM_CAPTURE_UNMATCHED);
        assert_eq!(end(origin).0, code::STREAM_CAPTURE_INVALIDATED);

        // Fork and join: the graph holds both streams' work.
        assert_eq!(begin(origin, GLOBAL), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(fork, origin), code::SUCCESS);
        assert_eq!(cuda::cuStreamWaitEvent(side, fork, 0), code::SUCCESS);
        assert_eq!(fill(origin, device, 3), code::SUCCESS);
        assert_eq!(fill(side, device + 16, 4), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(join, side), code::SUCCESS);
        assert_eq!(cuda::cuStreamWaitEvent(origin, join, 0), code::SUCCESS);
        let (status, graph) = end(origin);
        assert_eq!(status, code::SUCCESS);
        let mut exec = null_mut();
        assert_eq!(
            cuda::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
            code::SUCCESS
        );
        assert_eq!(cuda::cuGraphLaunch(exec, side), code::SUCCESS);
        let mut bytes = [0u8; 32];
        let to = bytes.as_mut_ptr().cast();
        assert_eq!(cuda::cuMemcpyDtoH_v2(to, device, 32), code::SUCCESS);
        assert_eq!(bytes[..16], [3; 16]);
        assert_eq!(bytes[16..], [4; 16]);

        // Two captures do not merge.
        let other = stream(NON_BLOCKING);
        assert_eq!(begin(origin, RELAXED), code::SUCCESS);
        assert_eq!(begin(other, RELAXED), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(fork, origin), code::SUCCESS);
        assert_eq!(
            cuda::cuStreamWaitEvent(other, fork, 0),
            code::STREAM_CAPTURE_MERGE
        );
        assert_eq!(end(other).0, code::STREAM_CAPTURE_INVALIDATED);
        assert_eq!(end(origin).0, code::STREAM_CAPTURE_INVALIDATED);

        assert_eq!(cuda::cuGraphExecDestroy(exec), code::SUCCESS);
        assert_eq!(cuda::cuGraphDestroy(graph), code::SUCCESS);
        for s in [origin, side, other] {
            assert_eq!(cuda::cuStreamDestroy_v2(s), code::SUCCESS);
        }
        for e in [fork, join] {
            assert_eq!(cuda::cuEventDestroy_v2(e), code::SUCCESS);
        }
        assert_eq!(cuda::cuMemFree_v2(device), code::SUCCESS);
    }
}
