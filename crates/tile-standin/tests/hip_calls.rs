//! The HIP stand-in called as `tile-runtime` calls the HIP runtime, misuse
//! included: each refused call returns the code the runtime returns, a
//! launch computes with its arguments packed through `extra` or passed by
//! pointer, and a faulting one becomes the sticky error. One test, in
//! order: the runtime's state is per process. The device properties (no
//! state) are written in the layout of each entry point, and a copy of the
//! library made to act as ROCm 5's lacks the ROCm 6 entry point.

mod sample;

use sample::{BLOCK, N};
use std::ffi::{c_void, CString};
use std::ptr::null_mut;
use tile_abi::status::STATUS_BYTES;
use tile_abi::Packet;
use tile_codegen::{Gfx, Target};
use tile_standin::hip::{self, code, HipError, HipPtr};

/// `HIP_LAUNCH_PARAM_*` markers of `extra`.
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;
const PARAM_END: usize = 3;

/// `hipMemcpyKind`s.
const TO_DEVICE: i32 = 1;
const TO_HOST: i32 = 2;

/// Loads a code object.
fn load(image: &[u8]) -> (HipError, HipPtr) {
    let mut module = null_mut();
    // SAFETY: a complete code object in memory.
    let status = unsafe { hip::hipModuleLoadData(&mut module, image.as_ptr().cast()) };
    (status, module)
}

/// Device memory holding `values`.
fn upload(values: &[f32]) -> u64 {
    let mut pointer = null_mut();
    // SAFETY: valid out-pointer; the copy reads the live slice.
    unsafe {
        assert_eq!(
            hip::hipMalloc(&mut pointer, 4 * values.len()),
            code::SUCCESS
        );
        let status = hip::hipMemcpy(pointer, values.as_ptr().cast(), 4 * values.len(), TO_DEVICE);
        assert_eq!(status, code::SUCCESS);
    }
    pointer as u64
}

/// The vector at `pointer`, and the copy's status.
fn download(pointer: u64) -> (HipError, Vec<f32>) {
    let mut values = vec![0.0f32; N];
    // SAFETY: the destination holds `4 * N` bytes.
    let status = unsafe {
        hip::hipMemcpy(
            values.as_mut_ptr().cast(),
            pointer as *const c_void,
            4 * N,
            TO_HOST,
        )
    };
    (status, values)
}

/// How a launch passes its arguments.
#[derive(Clone, Copy)]
enum Args {
    /// Packed through `extra`, the buffer's size changed by the delta.
    Packed(isize),
    /// One pointer per argument.
    Pointers,
}

/// Launches `function` over `grid` blocks of `block` threads with
/// `shared` bytes of dynamic LDS on x, y (claiming `y_len` elements), out
/// and a status record.
fn launch(
    function: HipPtr,
    grid: u32,
    block: u32,
    shared: u32,
    buffers: [u64; 4],
    y_len: usize,
    args: Args,
) -> HipError {
    let [x, y, out, status] = buffers;
    let mut packet = Packet::default();
    packet.push_tensor(x, &[N], &[1]);
    packet.push_tensor(y, &[y_len], &[1]);
    packet.push_tensor(out, &[N], &[1]);
    packet.push_pointer(status);
    let mut buffer = packet.packed();
    let mut size = match args {
        Args::Packed(delta) => buffer.len().wrapping_add_signed(delta),
        Args::Pointers => buffer.len(),
    };
    let mut pointers = packet.pointers();
    let mut extra: [*mut c_void; 5] = [
        PARAM_BUFFER_POINTER as *mut c_void,
        buffer.as_mut_ptr().cast(),
        PARAM_BUFFER_SIZE as *mut c_void,
        (&mut size as *mut usize).cast(),
        PARAM_END as *mut c_void,
    ];
    let (params, extra) = match args {
        Args::Packed(_) => (null_mut(), extra.as_mut_ptr()),
        Args::Pointers => (pointers.as_mut_ptr(), null_mut()),
    };
    // SAFETY: `extra` names the packed buffer and its size (only ever made
    // smaller, so no read passes its end), or one pointer per argument.
    unsafe {
        hip::hipModuleLaunchKernel(
            function,
            grid,
            1,
            1,
            block,
            1,
            1,
            shared,
            null_mut(),
            params,
            extra,
        )
    }
}

#[test]
fn the_hip_stand_in_checks_every_call_and_runs_launches() {
    let gfx942 = Target::Amdgpu(Gfx::Gfx942);
    let (hsaco, image) = sample::vector_add(gfx942);
    let threads = sample::block_threads(gfx942);
    let (other, _) = sample::vector_add(Target::Amdgpu(Gfx::Gfx90a));
    let images = sample::images_dir("hip");

    // Modules: an image must exist and the code object fit the device.
    assert_eq!(load(&hsaco).0, code::INVALID_IMAGE);
    sample::store(&images, &hsaco, &image);
    assert_eq!(load(&other).0, code::NO_BINARY_FOR_GPU);
    assert_eq!(
        load(b"not an ELF file, but long enough for a header: 64 bytes or more.").0,
        code::INVALID_IMAGE
    );
    let (status, module) = load(&hsaco);
    assert_eq!(status, code::SUCCESS);

    // SAFETY (the block): valid out-pointers and buffers, as the HIP API
    // requires; handles are the stand-in's own or deliberately wrong
    // numbers, which it refuses without touching memory.
    unsafe {
        assert_eq!(hip::hipSetDevice(1), code::INVALID_DEVICE);
        let mut function = null_mut();
        let name = CString::new("vector_add").unwrap();
        let missing = CString::new("vector_sub").unwrap();
        assert_eq!(
            hip::hipModuleGetFunction(&mut function, module, missing.as_ptr()),
            code::NOT_FOUND
        );
        assert_eq!(
            hip::hipModuleGetFunction(&mut function, 77 as HipPtr, name.as_ptr()),
            code::INVALID_HANDLE
        );
        assert_eq!(
            hip::hipModuleGetFunction(&mut function, module, name.as_ptr()),
            code::SUCCESS
        );

        // Memory: copies stay inside one allocation, in a known direction.
        let (xs, ys, sum) = sample::inputs();
        let (x, y, out) = (upload(&xs), upload(&ys), upload(&[0.0; N]));
        let status = upload(&[0.0; STATUS_BYTES / 4]);
        let past = (x + 4) as HipPtr;
        assert_eq!(
            hip::hipMemcpy(past, xs.as_ptr().cast(), 4 * N, TO_DEVICE),
            code::INVALID_VALUE
        );
        assert_eq!(
            hip::hipMemcpy(x as HipPtr, xs.as_ptr().cast(), 4, 7),
            code::INVALID_MEMCPY_DIRECTION
        );
        assert_eq!(hip::hipFree(past), code::INVALID_VALUE);

        // Launches the runtime refuses: the code object allows at most 256
        // work-items per workgroup (4 wavefronts), LDS is 64 KiB, the argument buffer
        // must hold exactly the kernel's arguments.
        let buffers = [x, y, out, status];
        let grid = N.div_ceil(BLOCK) as u32;
        let packed = Args::Packed(0);
        assert_eq!(
            launch(function, grid, 2 * threads, 0, buffers, N, packed),
            code::INVALID_VALUE
        );
        assert_eq!(
            launch(function, grid, threads, 64 * 1024 + 4, buffers, N, packed),
            code::INVALID_VALUE
        );
        assert_eq!(
            launch(function, grid, threads, 0, buffers, N, Args::Packed(-8)),
            code::INVALID_VALUE
        );
        assert_eq!(
            launch(77 as HipPtr, grid, threads, 0, buffers, N, packed),
            code::INVALID_HANDLE
        );

        // Good launches compute, with packed or pointed-to arguments.
        for args in [packed, Args::Pointers] {
            assert_eq!(
                hip::hipMemcpy(out as HipPtr, [0.0f32; N].as_ptr().cast(), 4 * N, TO_DEVICE),
                code::SUCCESS
            );
            assert_eq!(
                launch(function, grid, threads, 0, buffers, N, args),
                code::SUCCESS
            );
            assert_eq!(hip::hipDeviceSynchronize(), code::SUCCESS);
            assert_eq!(download(out), (code::SUCCESS, sum.clone()));
        }

        // A kernel told that `y` is longer than its memory faults; the
        // fault is sticky.
        assert_eq!(
            launch(function, grid, threads, 0, buffers, 2 * N, packed),
            code::SUCCESS
        );
        assert_eq!(hip::hipDeviceSynchronize(), code::ILLEGAL_ADDRESS);
        assert_eq!(download(out).0, code::ILLEGAL_ADDRESS);

        assert_eq!(hip::hipModuleUnload(module), code::SUCCESS);
        assert_eq!(hip::hipModuleUnload(module), code::INVALID_HANDLE);
    }
    std::fs::remove_dir_all(&images).unwrap();
}

/// The bytes `get` writes for device 0 into a buffer of `bytes` and 64
/// more, all `0xAA` before the call.
fn properties(get: unsafe extern "C" fn(*mut c_void, i32) -> HipError, bytes: usize) -> Vec<u8> {
    let mut buffer = vec![0xAAu8; bytes + 64];
    // SAFETY: the buffer is larger than the struct `get` fills.
    assert_eq!(unsafe { get(buffer.as_mut_ptr().cast(), 0) }, code::SUCCESS);
    // SAFETY: device 1 does not exist; null is refused: nothing is written.
    unsafe {
        assert_eq!(get(buffer.as_mut_ptr().cast(), 1), code::INVALID_DEVICE);
        assert_eq!(get(null_mut(), 0), code::INVALID_VALUE);
    }
    buffer
}

/// The NUL-terminated text at the start of `bytes`.
fn text(bytes: &[u8]) -> &str {
    let end = bytes.iter().position(|&b| b == 0).expect("a NUL");
    std::str::from_utf8(&bytes[..end]).expect("UTF-8")
}

#[test]
fn the_properties_are_written_in_each_entry_points_layout() {
    // (entry point, struct bytes, gcnArchName and multiProcessorCount
    // offsets), from the headers.
    let layouts: [(
        unsafe extern "C" fn(*mut c_void, i32) -> HipError,
        usize,
        usize,
        usize,
    ); 2] = [
        (hip::hipGetDevicePropertiesR0600, 1472, 1160, 388),
        (hip::hipGetDeviceProperties, 792, 396, 336),
    ];
    for (get, bytes, arch_at, units_at) in layouts {
        let written = properties(get, bytes);
        assert_eq!(text(&written), "tile stand-in (gfx942)");
        assert_eq!(text(&written[arch_at..]), "gfx942:sramecc+:xnack-");
        let units = &written[units_at..units_at + 4];
        assert_eq!(i32::from_ne_bytes(units.try_into().unwrap()), 2);
        let name_end = "tile stand-in (gfx942)".len();
        let arch_end = arch_at + "gfx942:sramecc+:xnack-".len();
        for (at, &byte) in written[..bytes].iter().enumerate() {
            let set = (..name_end).contains(&at)
                || (arch_at..arch_end).contains(&at)
                || (units_at..units_at + 4).contains(&at);
            if !set {
                assert_eq!(byte, 0, "byte {at} of {bytes}");
            }
        }
        assert!(
            written[bytes..].iter().all(|&b| b == 0xAA),
            "past the struct"
        );
    }
}

#[test]
fn a_copy_acting_as_rocm_5_lacks_the_rocm_6_entry_point() {
    let library =
        b"..hipGetDevicePropertiesR0600\0hipGetDeviceProperties\0..hipGetDevicePropertiesR0600";
    let rocm5 = hip::as_rocm5(library).expect("the name is there");
    assert_eq!(
        rocm5,
        b"..hipGetDevicePropertiesX0600\0hipGetDeviceProperties\0..hipGetDevicePropertiesX0600"
    );
    assert_eq!(hip::as_rocm5(&rocm5), None);
}
