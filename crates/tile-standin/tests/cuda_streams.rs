//! The CUDA stand-in's streams, events, pinned memory and asynchronous
//! copies and fills, called as a runtime with its own bindings calls them,
//! misuse included: each refused call returns the code a real driver
//! returns. The tests share the process's driver and run on parallel
//! threads: none captures or faults.

mod sample;

use sample::{BLOCK, N};
use std::ffi::{c_int, c_void, CString};
use std::ptr::null_mut;
use tile_abi::status::STATUS_BYTES;
use tile_abi::{Packet, Status};
use tile_codegen::{Sm, Target};
use tile_standin::cuda::{self, code, CUresult, Handle};

/// `CU_STREAM_NON_BLOCKING`.
const NON_BLOCKING: u32 = 1;
/// `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD`.
const LEGACY: Handle = 1 as Handle;
const PER_THREAD: Handle = 2 as Handle;
/// `CU_EVENT_BLOCKING_SYNC`, `DISABLE_TIMING`, `INTERPROCESS`.
const BLOCKING_SYNC: u32 = 1;
const DISABLE_TIMING: u32 = 2;
const INTERPROCESS: u32 = 4;
/// `CU_MEMHOSTALLOC_PORTABLE`, `DEVICEMAP`, `WRITECOMBINED`.
const PORTABLE: u32 = 1;
const DEVICEMAP: u32 = 2;
const WRITECOMBINED: u32 = 4;

/// Initializes the driver and makes the primary context current on this
/// thread.
fn context() {
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

/// `bytes` of device memory.
fn alloc(bytes: usize) -> u64 {
    let mut pointer = 0;
    // SAFETY: a valid out-pointer.
    assert_eq!(
        unsafe { cuda::cuMemAlloc_v2(&mut pointer, bytes) },
        code::SUCCESS
    );
    pointer
}

/// `bytes` of pinned memory allocated with `flags`: the status and the
/// pointer.
fn host_alloc(bytes: usize, flags: u32) -> (CUresult, *mut c_void) {
    let mut pointer = null_mut();
    // SAFETY: a valid out-pointer.
    let status = unsafe { cuda::cuMemHostAlloc(&mut pointer, bytes, flags) };
    (status, pointer)
}

/// The device address of pinned `host` memory: the status and the address.
fn device_pointer(host: *mut c_void, flags: u32) -> (CUresult, u64) {
    let mut device = 0;
    // SAFETY: a valid out-pointer; `host` is only compared.
    let status = unsafe { cuda::cuMemHostGetDevicePointer_v2(&mut device, host, flags) };
    (status, device)
}

#[test]
fn the_device_and_the_context_answer_what_a_runtime_asks() {
    // SAFETY (the block): valid out-pointers.
    unsafe {
        let mut version = 0;
        assert_eq!(cuda::cuDriverGetVersion(&mut version), code::SUCCESS);
        assert_eq!(version, 12080);
        assert_eq!(
            cuda::cuDriverGetVersion(std::ptr::null_mut()),
            code::INVALID_VALUE
        );
        assert_eq!(cuda::cuInit(0), code::SUCCESS);
        let mut bytes = 0;
        assert_eq!(cuda::cuDeviceTotalMem_v2(&mut bytes, 0), code::SUCCESS);
        assert_eq!(bytes, 16 << 30);
        assert_eq!(
            cuda::cuDeviceTotalMem_v2(&mut bytes, 1),
            code::INVALID_DEVICE
        );
        // Multiprocessors, clock and memory clock (kHz), bus width (bits),
        // host memory mapping, unified addressing.
        let expected = [
            (16, 2),
            (13, 1_410_000),
            (36, 1_215_000),
            (37, 5120),
            (19, 1),
            (41, 1),
        ];
        for (attribute, value) in expected {
            let mut got = 0;
            assert_eq!(
                cuda::cuDeviceGetAttribute(&mut got, attribute, 0),
                code::SUCCESS
            );
            assert_eq!(got, value, "attribute {attribute}");
        }

        // On a thread of its own, no context is current until set.
        std::thread::spawn(|| {
            let mut current = std::ptr::dangling_mut::<c_void>();
            assert_eq!(cuda::cuCtxGetCurrent(&mut current), code::SUCCESS);
            assert!(current.is_null());
            let mut device: c_int = -1;
            assert_eq!(cuda::cuCtxGetDevice(&mut device), code::INVALID_CONTEXT);
            context();
            assert_eq!(cuda::cuCtxGetCurrent(&mut current), code::SUCCESS);
            assert!(!current.is_null());
            assert_eq!(cuda::cuCtxGetDevice(&mut device), code::SUCCESS);
            assert_eq!(device, 0);
        })
        .join()
        .unwrap();
    }
}

#[test]
fn streams_take_their_flags_and_the_predefined_handles() {
    context();
    let (blocking, non_blocking) = (stream(0), stream(NON_BLOCKING));
    // SAFETY (the block): valid out-pointers; handles are the stand-in's
    // or deliberately wrong numbers, which it refuses.
    unsafe {
        let mut other = null_mut();
        assert_eq!(cuda::cuStreamCreate(&mut other, 2), code::INVALID_VALUE);
        assert_eq!(
            cuda::cuStreamCreate(null_mut(), 0),
            code::INVALID_VALUE,
            "no out-pointer"
        );
        for s in [null_mut(), LEGACY, PER_THREAD, blocking, non_blocking] {
            assert_eq!(cuda::cuStreamQuery(s), code::SUCCESS);
            assert_eq!(cuda::cuStreamSynchronize(s), code::SUCCESS);
        }
        let unknown = 77 as Handle;
        assert_eq!(cuda::cuStreamQuery(unknown), code::INVALID_HANDLE);
        assert_eq!(cuda::cuStreamSynchronize(unknown), code::INVALID_HANDLE);
        assert_eq!(cuda::cuStreamDestroy_v2(LEGACY), code::INVALID_HANDLE);
        for s in [blocking, non_blocking] {
            assert_eq!(cuda::cuStreamDestroy_v2(s), code::SUCCESS);
            assert_eq!(cuda::cuStreamDestroy_v2(s), code::INVALID_HANDLE);
            assert_eq!(cuda::cuStreamQuery(s), code::INVALID_HANDLE);
        }
    }
}

/// An event created with `flags`: the status and the event.
fn event(flags: u32) -> (CUresult, Handle) {
    let mut event = null_mut();
    // SAFETY: a valid out-pointer.
    let status = unsafe { cuda::cuEventCreate(&mut event, flags) };
    (status, event)
}

#[test]
fn events_keep_host_time_and_refuse_what_the_driver_refuses() {
    context();
    let s = stream(NON_BLOCKING);
    // Flags: INTERPROCESS needs DISABLE_TIMING; no unknown bits.
    assert_eq!(event(INTERPROCESS).0, code::INVALID_VALUE);
    assert_eq!(event(8).0, code::INVALID_VALUE);
    assert_eq!(event(INTERPROCESS | DISABLE_TIMING).0, code::SUCCESS);
    let (status, start) = event(BLOCKING_SYNC);
    assert_eq!(status, code::SUCCESS);
    let (_, end) = event(0);
    let (_, untimed) = event(DISABLE_TIMING);
    let (_, unrecorded) = event(0);
    // SAFETY (the block): valid out-pointers; handles are the stand-in's
    // or deliberately wrong numbers, which it refuses.
    unsafe {
        let mut ms = -1.0f32;
        // Never recorded: complete, but without a time.
        assert_eq!(cuda::cuEventQuery(unrecorded), code::SUCCESS);
        assert_eq!(cuda::cuEventSynchronize(unrecorded), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(start, s), code::SUCCESS);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(cuda::cuEventRecord(end, null_mut()), code::SUCCESS);
        assert_eq!(cuda::cuEventRecord(untimed, PER_THREAD), code::SUCCESS);
        assert_eq!(cuda::cuEventQuery(end), code::SUCCESS);
        assert_eq!(cuda::cuEventSynchronize(end), code::SUCCESS);
        assert_eq!(cuda::cuEventElapsedTime(&mut ms, start, end), code::SUCCESS);
        assert!((19.0..10_000.0).contains(&ms), "{ms} ms");
        let mut back = 0.0f32;
        assert_eq!(
            cuda::cuEventElapsedTime(&mut back, end, start),
            code::SUCCESS
        );
        assert_eq!(back, -ms, "the other way round, negative");
        assert_eq!(
            cuda::cuEventElapsedTime(&mut ms, start, untimed),
            code::INVALID_HANDLE,
            "created with DISABLE_TIMING"
        );
        assert_eq!(
            cuda::cuEventElapsedTime(&mut ms, unrecorded, end),
            code::INVALID_HANDLE,
            "never recorded"
        );
        assert_eq!(
            cuda::cuEventElapsedTime(null_mut(), start, end),
            code::INVALID_VALUE
        );
        let unknown = 77 as Handle;
        assert_eq!(
            cuda::cuEventElapsedTime(&mut ms, start, unknown),
            code::INVALID_HANDLE
        );
        assert_eq!(cuda::cuEventRecord(unknown, s), code::INVALID_HANDLE);
        assert_eq!(cuda::cuEventRecord(start, unknown), code::INVALID_HANDLE);
        assert_eq!(cuda::cuEventQuery(unknown), code::INVALID_HANDLE);

        // Waits: flags must be 0; any stream, any event of the driver's.
        assert_eq!(cuda::cuStreamWaitEvent(s, end, 1), code::INVALID_VALUE);
        for waiter in [s, null_mut(), LEGACY, PER_THREAD] {
            assert_eq!(cuda::cuStreamWaitEvent(waiter, end, 0), code::SUCCESS);
        }
        assert_eq!(
            cuda::cuStreamWaitEvent(s, unrecorded, 0),
            code::SUCCESS,
            "an empty event"
        );
        assert_eq!(cuda::cuStreamWaitEvent(s, unknown, 0), code::INVALID_HANDLE);
        assert_eq!(
            cuda::cuStreamWaitEvent(unknown, end, 0),
            code::INVALID_HANDLE
        );

        for e in [start, end, untimed, unrecorded] {
            assert_eq!(cuda::cuEventDestroy_v2(e), code::SUCCESS);
            assert_eq!(cuda::cuEventDestroy_v2(e), code::INVALID_HANDLE);
        }
        assert_eq!(cuda::cuStreamDestroy_v2(s), code::SUCCESS);
    }
}

#[test]
fn pinned_memory_is_mapped_into_the_device_only_with_devicemap() {
    context();
    assert_eq!(host_alloc(64, 8).0, code::INVALID_VALUE, "an unknown flag");
    assert_eq!(host_alloc(0, DEVICEMAP).0, code::INVALID_VALUE);
    let (status, mapped) = host_alloc(4096 + 64, DEVICEMAP | PORTABLE);
    assert_eq!(status, code::SUCCESS);
    let (status, unmapped) = host_alloc(64, PORTABLE | WRITECOMBINED);
    assert_eq!(status, code::SUCCESS);

    // Any byte of a mapped allocation has a device address: its own.
    let inside = mapped.wrapping_byte_add(4096 + 10);
    assert_eq!(device_pointer(mapped, 0), (code::SUCCESS, mapped as u64));
    assert_eq!(device_pointer(inside, 0), (code::SUCCESS, inside as u64));
    assert_eq!(device_pointer(mapped, 1).0, code::INVALID_VALUE, "flags");
    let past = mapped.wrapping_byte_add(8192);
    assert_eq!(device_pointer(past, 0).0, code::INVALID_VALUE);
    assert_eq!(device_pointer(unmapped, 0).0, code::INVALID_VALUE);
    let mut local = 0u64;
    let on_stack = (&mut local as *mut u64).cast();
    assert_eq!(device_pointer(on_stack, 0).0, code::INVALID_VALUE);

    // Mapped memory is a device end of copies; unmapped memory a host end.
    let device = alloc(64);
    let values: Vec<u8> = (0..64).collect();
    // SAFETY (the block): the host ends hold 64 bytes; handles and
    // addresses are the stand-in's, or wrong ones it refuses.
    unsafe {
        assert_eq!(
            cuda::cuMemcpyHtoD_v2(device, values.as_ptr().cast(), 64),
            code::SUCCESS
        );
        let (_, dst) = device_pointer(mapped, 0);
        assert_eq!(cuda::cuMemcpyDtoD_v2(dst, device, 64), code::SUCCESS);
        let copied = std::slice::from_raw_parts(mapped.cast::<u8>(), 64);
        assert_eq!(copied, &values[..]);
        assert_eq!(
            cuda::cuMemcpyDtoD_v2(unmapped as u64, device, 64),
            code::INVALID_VALUE,
            "unmapped pinned memory is not on the device"
        );
        assert_eq!(
            cuda::cuMemcpyDtoH_v2(unmapped, device, 64),
            code::SUCCESS,
            "but is host memory"
        );
        assert_eq!(cuda::cuMemFree_v2(mapped as u64), code::INVALID_VALUE);
        assert_eq!(cuda::cuMemFreeHost(inside), code::INVALID_VALUE);
        assert_eq!(
            cuda::cuMemFreeHost(device as *mut c_void),
            code::INVALID_VALUE
        );
        for pointer in [mapped, unmapped] {
            assert_eq!(cuda::cuMemFreeHost(pointer), code::SUCCESS);
            assert_eq!(cuda::cuMemFreeHost(pointer), code::INVALID_VALUE);
        }
        assert_eq!(device_pointer(mapped, 0).0, code::INVALID_VALUE, "freed");
        assert_eq!(cuda::cuMemFree_v2(device), code::SUCCESS);
    }
}

#[test]
fn asynchronous_copies_and_fills_stay_inside_their_allocations() {
    context();
    let s = stream(NON_BLOCKING);
    let (a, b) = (alloc(64), alloc(64));
    let values: Vec<u8> = (100..164).collect();
    let mut back = vec![0u8; 64];
    // SAFETY (the block): the host ends hold 64 bytes; handles and
    // addresses are the stand-in's, or wrong ones it refuses.
    unsafe {
        let from = values.as_ptr().cast();
        assert_eq!(cuda::cuMemcpyHtoDAsync_v2(a, from, 64, s), code::SUCCESS);
        assert_eq!(cuda::cuMemcpyDtoDAsync_v2(b, a, 64, LEGACY), code::SUCCESS);
        let to = back.as_mut_ptr().cast();
        assert_eq!(
            cuda::cuMemcpyDtoHAsync_v2(to, b, 64, PER_THREAD),
            code::SUCCESS
        );
        assert_eq!(cuda::cuStreamSynchronize(s), code::SUCCESS);
        assert_eq!(back, values);

        // Ranges, and streams, are checked at the call.
        assert_eq!(
            cuda::cuMemcpyHtoDAsync_v2(a + 8, from, 64, s),
            code::INVALID_VALUE
        );
        assert_eq!(
            cuda::cuMemcpyDtoHAsync_v2(to, a, 65, s),
            code::INVALID_VALUE
        );
        assert_eq!(
            cuda::cuMemcpyDtoDAsync_v2(b, a + 1, 64, null_mut()),
            code::INVALID_VALUE
        );
        assert_eq!(
            cuda::cuMemcpyHtoDAsync_v2(a, std::ptr::null(), 64, s),
            code::INVALID_VALUE,
            "a null host end"
        );
        assert_eq!(
            cuda::cuMemcpyHtoDAsync_v2(a, from, 64, 77 as Handle),
            code::INVALID_HANDLE
        );

        // Fills: bytes, and aligned 32-bit words.
        assert_eq!(cuda::cuMemsetD8Async(a, 0x11, 64, s), code::SUCCESS);
        assert_eq!(
            cuda::cuMemsetD32Async(a + 4, 0xAABB_CCDD, 2, s),
            code::SUCCESS
        );
        assert_eq!(cuda::cuMemsetD8_v2(a + 60, 0x22, 4), code::SUCCESS);
        assert_eq!(
            cuda::cuMemsetD32Async(a + 2, 0, 1, s),
            code::INVALID_VALUE,
            "misaligned"
        );
        assert_eq!(cuda::cuMemsetD32Async(a, 0, 17, s), code::INVALID_VALUE);
        assert_eq!(cuda::cuMemsetD8Async(a + 1, 0, 64, s), code::INVALID_VALUE);
        assert_eq!(cuda::cuMemsetD8_v2(b, 0, 65), code::INVALID_VALUE);
        assert_eq!(
            cuda::cuMemsetD8Async(a, 0, 1, 77 as Handle),
            code::INVALID_HANDLE
        );
        assert_eq!(cuda::cuMemcpyDtoH_v2(to, a, 64), code::SUCCESS);
        let word = 0xAABB_CCDDu32.to_ne_bytes();
        let mut expected = vec![0x11u8; 64];
        expected[4..8].copy_from_slice(&word);
        expected[8..12].copy_from_slice(&word);
        expected[60..].fill(0x22);
        assert_eq!(back, expected);

        for pointer in [a, b] {
            assert_eq!(cuda::cuMemFree_v2(pointer), code::SUCCESS);
        }
        assert_eq!(
            cuda::cuMemsetD8Async(a, 0, 1, s),
            code::INVALID_VALUE,
            "freed"
        );
        assert_eq!(cuda::cuStreamDestroy_v2(s), code::SUCCESS);
    }
}

/// Launches the sample vector add on `stream` over x, y, out and a status
/// record.
fn launch(function: Handle, stream: Handle, buffers: [u64; 4]) -> CUresult {
    let [x, y, out, status] = buffers;
    let mut packet = Packet::default();
    packet.push_tensor(x, &[N], &[1]);
    packet.push_tensor(y, &[N], &[1]);
    packet.push_tensor(out, &[N], &[1]);
    packet.push_pointer(status);
    let mut params = packet.pointers();
    let grid = N.div_ceil(BLOCK) as u32;
    // SAFETY: one pointer per kernel parameter, alive for the call.
    unsafe {
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
            params.as_mut_ptr(),
            null_mut(),
        )
    }
}

#[test]
fn a_kernel_writes_mapped_pinned_memory_through_its_device_address() {
    let (ptx, image) = sample::vector_add(Target::Nvptx(Sm::Sm80));
    let images = sample::images_dir("cuda-streams");
    sample::store(&images, &ptx, &image);
    context();
    let text = CString::new(ptx).unwrap();
    let (mut module, mut function) = (null_mut(), null_mut());
    let name = CString::new("vector_add").unwrap();
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

    let (xs, ys, sum) = sample::inputs();
    let (x, y) = (alloc(4 * N), alloc(4 * N));
    // The output and the status record live in mapped pinned memory, which
    // the kernel addresses through its device address and the host reads
    // in place: as a runtime's status slab.
    let (status, out) = host_alloc(4 * N, DEVICEMAP);
    assert_eq!(status, code::SUCCESS);
    let (status, slab) = host_alloc(STATUS_BYTES, DEVICEMAP);
    assert_eq!(status, code::SUCCESS);
    let (_, out_device) = device_pointer(out, 0);
    let (_, slab_device) = device_pointer(slab, 0);
    let s = stream(NON_BLOCKING);
    // SAFETY (the block): the host ends hold what is copied; the pinned
    // memory is live and holds `4 * N` and `STATUS_BYTES` bytes.
    unsafe {
        let (from_x, from_y) = (xs.as_ptr().cast(), ys.as_ptr().cast());
        assert_eq!(
            cuda::cuMemcpyHtoDAsync_v2(x, from_x, 4 * N, s),
            code::SUCCESS
        );
        assert_eq!(
            cuda::cuMemcpyHtoDAsync_v2(y, from_y, 4 * N, s),
            code::SUCCESS
        );
        for on in [s, PER_THREAD] {
            std::ptr::write_bytes(out.cast::<u8>(), 0, 4 * N);
            let buffers = [x, y, out_device, slab_device];
            assert_eq!(launch(function, on, buffers), code::SUCCESS);
            assert_eq!(cuda::cuStreamSynchronize(on), code::SUCCESS);
            let got = std::slice::from_raw_parts(out.cast::<f32>(), N);
            assert_eq!(got, &sum[..]);
            let record = &*slab.cast::<[u8; STATUS_BYTES]>();
            assert!(Status::from_bytes(record).is_ok());
        }
        assert_eq!(cuda::cuMemFreeHost(out), code::SUCCESS);
        assert_eq!(cuda::cuMemFreeHost(slab), code::SUCCESS);
        assert_eq!(cuda::cuModuleUnload(module), code::SUCCESS);
    }
    std::fs::remove_dir_all(&images).unwrap();
}
