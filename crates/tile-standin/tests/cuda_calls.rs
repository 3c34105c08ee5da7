//! The CUDA stand-in called as `tile-runtime` calls the driver, misuse
//! included: each refused call returns the code a real driver returns, a
//! good launch computes, and a faulting one becomes the context's sticky
//! error. One test, in order: the driver's state is per process.

mod sample;

use sample::{BLOCK, N};
use std::ffi::{c_int, c_void, CString};
use std::ptr::null_mut;
use tile_abi::status::STATUS_BYTES;
use tile_abi::{Packet, Status};
use tile_codegen::{Sm, Target};
use tile_standin::cuda::{self, code, CUresult, Handle};

/// Loads `ptx`; the status and the JIT log.
fn load(ptx: &str) -> (CUresult, Handle, String) {
    let text = CString::new(ptx).unwrap();
    let mut log = vec![0u8; 1024];
    let mut options: [c_int; 2] = [5, 6];
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), 1024 as *mut c_void];
    let mut module = null_mut();
    // SAFETY: NUL-terminated text; two options naming a 1,024-byte log.
    let status = unsafe {
        cuda::cuModuleLoadDataEx(
            &mut module,
            text.as_ptr().cast(),
            2,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    let end = log.iter().position(|&b| b == 0).unwrap_or(0);
    (
        status,
        module,
        String::from_utf8_lossy(&log[..end]).into_owned(),
    )
}

/// Device memory holding `values`.
fn upload(values: &[f32]) -> u64 {
    let mut pointer = 0;
    // SAFETY: valid out-pointer; the copy reads the live slice.
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

/// Launches `function` over `grid` blocks of `block` threads on x, y and
/// out (`y` claiming `y_len` elements) and a zeroed status record.
fn launch(
    function: Handle,
    grid: u32,
    block: u32,
    shared: u32,
    buffers: [u64; 4],
    y_len: usize,
) -> CUresult {
    let [x, y, out, status] = buffers;
    let mut packet = Packet::default();
    packet.push_tensor(x, &[N], &[1]);
    packet.push_tensor(y, &[y_len], &[1]);
    packet.push_tensor(out, &[N], &[1]);
    packet.push_pointer(status);
    let mut params = packet.pointers();
    // SAFETY: one pointer per kernel parameter, alive for the call.
    unsafe {
        cuda::cuLaunchKernel(
            function,
            grid,
            1,
            1,
            block,
            1,
            1,
            shared,
            null_mut(),
            params.as_mut_ptr(),
            null_mut(),
        )
    }
}

#[test]
fn the_cuda_stand_in_checks_every_call_and_runs_launches() {
    let sm80 = Target::Nvptx(Sm::Sm80);
    let (ptx, image) = sample::vector_add(sm80);
    let threads = sample::block_threads(sm80);
    let ptx = String::from_utf8(ptx).unwrap();
    let images = sample::images_dir("cuda");

    // SAFETY (every block below): valid out-pointers and buffers, as the
    // driver API requires; handles are the stand-in's own or deliberately
    // wrong numbers, which it refuses without touching memory.
    unsafe {
        let mut device = 0;
        assert_eq!(cuda::cuDeviceGet(&mut device, 0), code::NOT_INITIALIZED);
        assert_eq!(cuda::cuInit(1), code::INVALID_VALUE);
        assert_eq!(cuda::cuInit(0), code::SUCCESS);
        assert_eq!(cuda::cuDeviceGet(&mut device, 1), code::INVALID_DEVICE);
        assert_eq!(cuda::cuDeviceGet(&mut device, 0), code::SUCCESS);
        let mut major = 0;
        assert_eq!(
            cuda::cuDeviceGetAttribute(&mut major, 75, device),
            code::SUCCESS
        );
        assert_eq!(major, 8);
        assert_eq!(load(&ptx).0, code::INVALID_CONTEXT, "no context is current");
        let mut context = null_mut();
        assert_eq!(
            cuda::cuDevicePrimaryCtxRetain(&mut context, device),
            code::SUCCESS
        );
        assert_eq!(
            cuda::cuCtxSetCurrent(0x1234 as Handle),
            code::INVALID_CONTEXT
        );
        assert_eq!(cuda::cuCtxSetCurrent(context), code::SUCCESS);
    }

    // Modules: an image must exist and the PTX must fit the device.
    let (status, _, log) = load(&ptx);
    assert_eq!(status, code::INVALID_IMAGE);
    assert!(
        log.starts_with("tile-standin: no emulation image for this device image"),
        "{log}"
    );
    sample::store(&images, ptx.as_bytes(), &image);
    let newer = ptx.replace(".target sm_80", ".target sm_90");
    let (status, _, log) = load(&newer);
    assert_eq!(status, code::INVALID_PTX);
    assert_eq!(
        log,
        "tile-standin: the PTX targets sm_90, above the device's sm_80"
    );
    let (status, module, _) = load(&ptx);
    assert_eq!(status, code::SUCCESS);

    unsafe {
        let mut function = null_mut();
        let name = CString::new("vector_add").unwrap();
        let missing = CString::new("vector_sub").unwrap();
        assert_eq!(
            cuda::cuModuleGetFunction(&mut function, module, missing.as_ptr()),
            code::NOT_FOUND
        );
        assert_eq!(
            cuda::cuModuleGetFunction(&mut function, 77 as Handle, name.as_ptr()),
            code::INVALID_HANDLE
        );
        assert_eq!(
            cuda::cuModuleGetFunction(&mut function, module, name.as_ptr()),
            code::SUCCESS
        );

        // Memory: copies stay inside one allocation.
        let (xs, ys, sum) = sample::inputs();
        let (x, y, out) = (upload(&xs), upload(&ys), upload(&[0.0; N]));
        let status = upload(&[0.0; STATUS_BYTES / 4]);
        assert_eq!(
            cuda::cuMemcpyHtoD_v2(x + 4, xs.as_ptr().cast(), 4 * N),
            code::INVALID_VALUE
        );
        assert_eq!(cuda::cuMemFree_v2(x + 4), code::INVALID_VALUE);

        // Launch shapes a driver refuses: the kernel requires 128 threads
        // (4 warps).
        let buffers = [x, y, out, status];
        let grid = N.div_ceil(BLOCK) as u32;
        assert_eq!(
            launch(function, grid, threads / 2, 0, buffers, N),
            code::INVALID_VALUE
        );
        assert_eq!(
            launch(function, 0, threads, 0, buffers, N),
            code::INVALID_VALUE
        );
        assert_eq!(
            launch(function, grid, threads, 48 * 1024 + 4, buffers, N),
            code::INVALID_VALUE
        );
        assert_eq!(
            launch(77 as Handle, grid, threads, 0, buffers, N),
            code::INVALID_HANDLE
        );
        // More dynamic shared memory than 48 KiB takes an opt-in, up to the
        // device's 163 KiB (sm_80) less the kernel's static shared memory.
        const MAX_DYNAMIC_SHARED: c_int = 8;
        let mut optin = 0;
        assert_eq!(cuda::cuDeviceGetAttribute(&mut optin, 97, 0), code::SUCCESS);
        assert_eq!(optin, 163 * 1024);
        assert_eq!(
            cuda::cuFuncSetAttribute(function, MAX_DYNAMIC_SHARED, optin + 1),
            code::INVALID_VALUE
        );
        assert_eq!(
            cuda::cuFuncSetAttribute(function, 4, 64),
            code::INVALID_VALUE,
            "only the dynamic shared memory is modelled"
        );
        assert_eq!(
            cuda::cuFuncSetAttribute(77 as Handle, MAX_DYNAMIC_SHARED, 1024),
            code::INVALID_HANDLE
        );
        assert_eq!(
            cuda::cuFuncSetAttribute(function, MAX_DYNAMIC_SHARED, 96 * 1024),
            code::SUCCESS
        );
        assert_eq!(
            launch(function, grid, threads, 96 * 1024 + 16, buffers, N),
            code::INVALID_VALUE
        );
        assert_eq!(
            launch(function, grid, threads, 96 * 1024, buffers, N),
            code::SUCCESS
        );

        // A good launch computes.
        assert_eq!(
            launch(function, grid, threads, 0, buffers, N),
            code::SUCCESS
        );
        assert_eq!(cuda::cuCtxSynchronize(), code::SUCCESS);
        let mut got = vec![0.0f32; N];
        assert_eq!(
            cuda::cuMemcpyDtoH_v2(got.as_mut_ptr().cast(), out, 4 * N),
            code::SUCCESS
        );
        assert_eq!(got, sum);
        let mut record = [0u8; STATUS_BYTES];
        assert_eq!(
            cuda::cuMemcpyDtoH_v2(record.as_mut_ptr().cast(), status, STATUS_BYTES),
            code::SUCCESS
        );
        assert!(Status::from_bytes(&record).is_ok());

        // A kernel told that `y` is longer than its memory faults: the
        // launch is accepted, the fault is sticky from then on.
        assert_eq!(
            launch(function, grid, threads, 0, buffers, 2 * N),
            code::SUCCESS
        );
        assert_eq!(cuda::cuCtxSynchronize(), code::ILLEGAL_ADDRESS);
        assert_eq!(
            cuda::cuMemcpyDtoH_v2(got.as_mut_ptr().cast(), out, 4 * N),
            code::ILLEGAL_ADDRESS
        );

        assert_eq!(cuda::cuModuleUnload(module), code::SUCCESS);
        assert_eq!(cuda::cuModuleUnload(module), code::INVALID_HANDLE);
    }
    std::fs::remove_dir_all(&images).unwrap();
}
