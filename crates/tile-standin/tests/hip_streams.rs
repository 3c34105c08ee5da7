//! The HIP stand-in's streams, events, pinned memory and asynchronous
//! copies and fills, misuse included: each refused call returns the code
//! the runtime returns. The tests share the process's runtime and run on
//! parallel threads: none faults.

mod sample;

use sample::{BLOCK, N};
use std::ffi::{c_int, c_void, CString};
use std::ptr::null_mut;
use tile_abi::status::STATUS_BYTES;
use tile_abi::{Packet, Status};
use tile_codegen::{Gfx, Target};
use tile_standin::hip::{self, code, HipError, HipPtr};

/// `hipStreamNonBlocking`, `hipStreamLegacy`, `hipStreamPerThread`.
const NON_BLOCKING: u32 = 1;
const LEGACY: HipPtr = 1 as HipPtr;
const PER_THREAD: HipPtr = 2 as HipPtr;
/// `hipEvent*` flags.
const DISABLE_TIMING: u32 = 2;
const INTERPROCESS: u32 = 4;
const RELEASE_TO_DEVICE: u32 = 0x4000_0000;
const RELEASE_TO_SYSTEM: u32 = 0x8000_0000;
/// `hipHostMalloc*` flags.
const MAPPED: u32 = 2;
const COHERENT: u32 = 0x4000_0000;
const NON_COHERENT: u32 = 0x8000_0000;
/// `hipMemcpyKind`s.
const TO_DEVICE: c_int = 1;
const TO_HOST: c_int = 2;
const DEFAULT: c_int = 4;

/// A stream created with `flags`.
fn stream(flags: u32) -> HipPtr {
    let mut stream = null_mut();
    // SAFETY: a valid out-pointer.
    let status = unsafe { hip::hipStreamCreateWithFlags(&mut stream, flags) };
    assert_eq!(status, code::SUCCESS);
    stream
}

/// An event created with `flags`: the status and the event.
fn event(flags: u32) -> (HipError, HipPtr) {
    let mut event = null_mut();
    // SAFETY: a valid out-pointer.
    let status = unsafe { hip::hipEventCreateWithFlags(&mut event, flags) };
    (status, event)
}

/// `bytes` of device memory.
fn malloc(bytes: usize) -> HipPtr {
    let mut pointer = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(
        unsafe { hip::hipMalloc(&mut pointer, bytes) },
        code::SUCCESS
    );
    pointer
}

/// `bytes` of pinned memory allocated with `flags`: the status and the
/// pointer.
fn host_malloc(bytes: usize, flags: u32) -> (HipError, *mut c_void) {
    let mut pointer = std::ptr::dangling_mut::<c_void>();
    // SAFETY: a valid out-pointer.
    let status = unsafe { hip::hipHostMalloc(&mut pointer, bytes, flags) };
    (status, pointer)
}

/// The device address of pinned `host` memory: the status and the address.
fn device_pointer(host: *mut c_void, flags: u32) -> (HipError, *mut c_void) {
    let mut device = null_mut();
    // SAFETY: a valid out-pointer; `host` is only compared.
    let status = unsafe { hip::hipHostGetDevicePointer(&mut device, host, flags) };
    (status, device)
}

#[test]
fn the_device_reports_its_memory_and_the_runtime_its_version() {
    let (mut bytes, mut version) = (0usize, 0);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(hip::hipDeviceTotalMem(&mut bytes, 0), code::SUCCESS);
        assert_eq!(bytes, 16 << 30);
        assert_eq!(hip::hipDeviceTotalMem(&mut bytes, 1), code::INVALID_DEVICE);
        assert_eq!(hip::hipDriverGetVersion(&mut version), code::SUCCESS);
        assert!(version >= 60_000_000, "{version}");
        assert_eq!(hip::hipDriverGetVersion(null_mut()), code::INVALID_VALUE);
    }
}

#[test]
fn streams_take_their_flags_and_the_predefined_handles() {
    let (blocking, non_blocking) = (stream(0), stream(NON_BLOCKING));
    // SAFETY (the block): valid out-pointers; handles are the stand-in's
    // or deliberately wrong numbers, which it refuses.
    unsafe {
        let mut other = null_mut();
        assert_eq!(
            hip::hipStreamCreateWithFlags(&mut other, 2),
            code::INVALID_VALUE
        );
        for s in [null_mut(), LEGACY, PER_THREAD, blocking, non_blocking] {
            assert_eq!(hip::hipStreamQuery(s), code::SUCCESS);
            assert_eq!(hip::hipStreamSynchronize(s), code::SUCCESS);
        }
        let unknown = 77 as HipPtr;
        assert_eq!(hip::hipStreamQuery(unknown), code::INVALID_HANDLE);
        for s in [blocking, non_blocking] {
            assert_eq!(hip::hipStreamDestroy(s), code::SUCCESS);
            assert_eq!(hip::hipStreamDestroy(s), code::INVALID_HANDLE);
        }
    }
}

#[test]
fn events_keep_host_time_and_refuse_what_the_runtime_refuses() {
    let s = stream(NON_BLOCKING);
    assert_eq!(event(INTERPROCESS).0, code::INVALID_VALUE);
    assert_eq!(event(8).0, code::INVALID_VALUE);
    assert_eq!(
        event(RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM).0,
        code::INVALID_VALUE
    );
    assert_eq!(event(INTERPROCESS | DISABLE_TIMING).0, code::SUCCESS);
    assert_eq!(event(RELEASE_TO_SYSTEM).0, code::SUCCESS);
    let mut start = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { hip::hipEventCreate(&mut start) }, code::SUCCESS);
    let (_, end) = event(0);
    let (_, untimed) = event(DISABLE_TIMING);
    let (_, unrecorded) = event(0);
    // SAFETY (the block): valid out-pointers; handles are the stand-in's
    // or deliberately wrong numbers, which it refuses.
    unsafe {
        assert_eq!(hip::hipEventQuery(unrecorded), code::SUCCESS);
        assert_eq!(hip::hipEventRecord(start, s), code::SUCCESS);
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert_eq!(hip::hipEventRecord(end, null_mut()), code::SUCCESS);
        assert_eq!(hip::hipEventRecord(untimed, s), code::SUCCESS);
        assert_eq!(hip::hipEventSynchronize(end), code::SUCCESS);
        let mut ms = 0.0f32;
        assert_eq!(hip::hipEventElapsedTime(&mut ms, start, end), code::SUCCESS);
        assert!((9.0..10_000.0).contains(&ms), "{ms} ms");
        for (a, b) in [(start, untimed), (unrecorded, end), (start, 77 as HipPtr)] {
            assert_eq!(
                hip::hipEventElapsedTime(&mut ms, a, b),
                code::INVALID_HANDLE
            );
        }
        assert_eq!(
            hip::hipEventElapsedTime(null_mut(), start, end),
            code::INVALID_VALUE
        );
        assert_eq!(
            hip::hipEventRecord(start, 77 as HipPtr),
            code::INVALID_HANDLE
        );
        assert_eq!(hip::hipStreamWaitEvent(s, end, 1), code::INVALID_VALUE);
        assert_eq!(hip::hipStreamWaitEvent(s, end, 0), code::SUCCESS);
        assert_eq!(
            hip::hipStreamWaitEvent(s, 77 as HipPtr, 0),
            code::INVALID_HANDLE
        );
        for e in [start, end, untimed, unrecorded] {
            assert_eq!(hip::hipEventDestroy(e), code::SUCCESS);
            assert_eq!(hip::hipEventDestroy(e), code::INVALID_HANDLE);
        }
        assert_eq!(hip::hipStreamDestroy(s), code::SUCCESS);
    }
}

#[test]
fn pinned_memory_is_mapped_and_asynchronous_copies_are_checked() {
    assert_eq!(host_malloc(64, 8).0, code::INVALID_VALUE, "an unknown flag");
    assert_eq!(
        host_malloc(64, COHERENT | NON_COHERENT).0,
        code::INVALID_VALUE
    );
    assert_eq!(host_malloc(0, 0), (code::SUCCESS, null_mut()));
    // ROCm maps pinned memory whatever the flags.
    let (status, pinned) = host_malloc(64, 0);
    assert_eq!(status, code::SUCCESS);
    let (status, mapped) = host_malloc(64, MAPPED | COHERENT);
    assert_eq!(status, code::SUCCESS);
    let inside = pinned.wrapping_byte_add(40);
    assert_eq!(device_pointer(inside, 0), (code::SUCCESS, inside));
    assert_eq!(device_pointer(mapped, 0), (code::SUCCESS, mapped));
    assert_eq!(device_pointer(pinned, 1).0, code::INVALID_VALUE, "flags");
    let mut local = 0u8;
    let on_stack = (&mut local as *mut u8).cast();
    assert_eq!(device_pointer(on_stack, 0).0, code::INVALID_VALUE);

    let s = stream(NON_BLOCKING);
    let device = malloc(64);
    let values: Vec<u8> = (0..64).collect();
    // SAFETY (the block): the host ends hold 64 bytes; handles and
    // addresses are the stand-in's, or wrong ones it refuses.
    unsafe {
        let from = values.as_ptr().cast();
        assert_eq!(
            hip::hipMemcpyAsync(device, from, 64, TO_DEVICE, s),
            code::SUCCESS
        );
        // Device to mapped pinned memory, the direction inferred.
        assert_eq!(
            hip::hipMemcpyAsync(pinned, device, 64, DEFAULT, PER_THREAD),
            code::SUCCESS
        );
        assert_eq!(
            std::slice::from_raw_parts(pinned.cast::<u8>(), 64),
            &values[..]
        );
        assert_eq!(
            hip::hipMemcpyAsync(device.wrapping_byte_add(1), from, 64, TO_DEVICE, s),
            code::INVALID_VALUE
        );
        assert_eq!(
            hip::hipMemcpyAsync(device, from, 64, 9, s),
            code::INVALID_MEMCPY_DIRECTION
        );
        assert_eq!(
            hip::hipMemcpyAsync(device, from, 64, TO_DEVICE, 77 as HipPtr),
            code::INVALID_HANDLE
        );

        // Fills.
        assert_eq!(hip::hipMemsetAsync(device, 0x1234, 64, s), code::SUCCESS);
        assert_eq!(hip::hipMemsetD8Async(device, 7, 8, LEGACY), code::SUCCESS);
        assert_eq!(hip::hipMemsetAsync(device, 0, 65, s), code::INVALID_VALUE);
        assert_eq!(
            hip::hipMemsetD8Async(device, 0, 1, 77 as HipPtr),
            code::INVALID_HANDLE
        );
        let mut back = [0u8; 64];
        let to = back.as_mut_ptr().cast();
        assert_eq!(hip::hipMemcpy(to, device, 64, TO_HOST), code::SUCCESS);
        let mut expected = [0x34u8; 64];
        expected[..8].fill(7);
        assert_eq!(back, expected);
        // Words: at a 4-byte aligned address, inside the allocation.
        let word = device.cast::<u8>().wrapping_add(8).cast();
        assert_eq!(
            hip::hipMemsetD32Async(word, 0x0102_0304, 2, s),
            code::SUCCESS
        );
        let odd = device.cast::<u8>().wrapping_add(2).cast();
        assert_eq!(hip::hipMemsetD32Async(odd, 1, 1, s), code::INVALID_VALUE);
        assert_eq!(hip::hipMemsetD32Async(word, 1, 15, s), code::INVALID_VALUE);
        assert_eq!(hip::hipMemcpy(to, device, 64, TO_HOST), code::SUCCESS);
        expected[8..16].copy_from_slice(&[4, 3, 2, 1, 4, 3, 2, 1]);
        assert_eq!(back, expected);

        assert_eq!(hip::hipHostFree(inside), code::INVALID_VALUE);
        assert_eq!(hip::hipFree(pinned), code::INVALID_VALUE);
        for pointer in [pinned, mapped] {
            assert_eq!(hip::hipHostFree(pointer), code::SUCCESS);
            assert_eq!(hip::hipHostFree(pointer), code::INVALID_VALUE);
        }
        assert_eq!(hip::hipHostFree(null_mut()), code::SUCCESS);
        assert_eq!(hip::hipFree(device), code::SUCCESS);
        assert_eq!(hip::hipStreamDestroy(s), code::SUCCESS);
    }
}

#[test]
fn a_kernel_writes_pinned_memory_through_its_device_address() {
    let gfx942 = Target::Amdgpu(Gfx::Gfx942);
    let (hsaco, image) = sample::vector_add(gfx942);
    let images = sample::images_dir("hip-streams");
    sample::store(&images, &hsaco, &image);
    let (mut module, mut function) = (null_mut(), null_mut());
    let name = CString::new("vector_add").unwrap();
    // SAFETY: a complete code object; valid out-pointers.
    unsafe {
        let status = hip::hipModuleLoadData(&mut module, hsaco.as_ptr().cast());
        assert_eq!(status, code::SUCCESS);
        assert_eq!(
            hip::hipModuleGetFunction(&mut function, module, name.as_ptr()),
            code::SUCCESS
        );
    }
    let (xs, ys, sum) = sample::inputs();
    let (x, y) = (malloc(4 * N), malloc(4 * N));
    let (_, out) = host_malloc(4 * N, MAPPED);
    let (_, slab) = host_malloc(STATUS_BYTES, MAPPED);
    let (_, out_device) = device_pointer(out, 0);
    let (_, slab_device) = device_pointer(slab, 0);
    let s = stream(NON_BLOCKING);
    let mut packet = Packet::default();
    packet.push_tensor(x as u64, &[N], &[1]);
    packet.push_tensor(y as u64, &[N], &[1]);
    packet.push_tensor(out_device as u64, &[N], &[1]);
    packet.push_pointer(slab_device as u64);
    let mut params = packet.pointers();
    let grid = N.div_ceil(BLOCK) as u32;
    // SAFETY (the block): host ends hold what is copied; one pointer per
    // kernel argument; the pinned memory holds `4 * N` and `STATUS_BYTES`
    // bytes.
    unsafe {
        let (from_x, from_y) = (xs.as_ptr().cast(), ys.as_ptr().cast());
        assert_eq!(
            hip::hipMemcpyAsync(x, from_x, 4 * N, TO_DEVICE, s),
            code::SUCCESS
        );
        assert_eq!(
            hip::hipMemcpyAsync(y, from_y, 4 * N, TO_DEVICE, s),
            code::SUCCESS
        );
        let launched = hip::hipModuleLaunchKernel(
            function,
            grid,
            1,
            1,
            sample::block_threads(gfx942),
            1,
            1,
            0,
            s,
            params.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(launched, code::SUCCESS);
        assert_eq!(hip::hipStreamSynchronize(s), code::SUCCESS);
        assert_eq!(std::slice::from_raw_parts(out.cast::<f32>(), N), &sum[..]);
        assert!(Status::from_bytes(&*slab.cast::<[u8; STATUS_BYTES]>()).is_ok());
        for pointer in [out, slab] {
            assert_eq!(hip::hipHostFree(pointer), code::SUCCESS);
        }
        assert_eq!(hip::hipModuleUnload(module), code::SUCCESS);
    }
    std::fs::remove_dir_all(&images).unwrap();
}
