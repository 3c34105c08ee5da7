//! Modules and launches: PTX read as the JIT reads it, paired with its
//! emulation image; functions by name; launches checked against the
//! kernel's bounds and the device's limits, then run, or recorded with a
//! copy of their parameters if the stream captures.

use super::{code, device_sm, fault_code, limits, log, with_driver, CUresult, Handle};
use crate::calls::{CallKind, On};
use crate::capture::{Op, Use};
use crate::driver::{self, put, put_str, Kernel, Loaded, Refused};
use crate::ptx::PtxModule;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `CU_JIT_ERROR_LOG_BUFFER`: the option whose value is the log's address.
const JIT_ERROR_LOG_BUFFER: c_int = 5;
/// `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`: its size, passed by value.
const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// Writes `message` into the JIT error log the options name, if any.
///
/// # Safety
///
/// `options` and `values` hold `count` entries; the log option's value is
/// valid for writes of the size option's value.
unsafe fn write_log(
    count: c_uint,
    options: *const c_int,
    values: *const *mut c_void,
    message: &str,
) {
    if options.is_null() || values.is_null() {
        return;
    }
    let (mut buffer, mut size) = (std::ptr::null_mut::<u8>(), 0usize);
    for i in 0..count as usize {
        // SAFETY: `i < count` (the caller's contract).
        let (option, value) = unsafe { (*options.add(i), *values.add(i)) };
        match option {
            JIT_ERROR_LOG_BUFFER => buffer = value.cast(),
            // The size is passed by value in the pointer slot.
            JIT_ERROR_LOG_BUFFER_SIZE_BYTES => size = value as usize,
            _ => {}
        }
    }
    // SAFETY: the buffer is null or holds `size` bytes (the caller's
    // contract); without one there is no log to write.
    unsafe { put_str(buffer, size, message) };
}

/// Reads a PTX image as the JIT would and finds its emulation image.
fn load_module(image: &[u8]) -> Result<Loaded, (CUresult, String)> {
    if image.starts_with(b"\x7fELF") {
        return Err((
            code::INVALID_IMAGE,
            "the stand-in loads PTX only, not cubins".into(),
        ));
    }
    let text = std::str::from_utf8(image).map_err(|e| (code::INVALID_PTX, e.to_string()))?;
    let ptx = PtxModule::parse(text).map_err(|e| (code::INVALID_PTX, e))?;
    let sm = device_sm();
    if ptx.sm > sm {
        return Err((
            code::INVALID_PTX,
            format!("the PTX targets sm_{}, above the device's sm_{sm}", ptx.sm),
        ));
    }
    Loaded::new(ptx.kernels, image).map_err(|e| (code::INVALID_IMAGE, e))
}

/// `cuModuleLoadDataEx` of NUL-terminated PTX; a failure's reason goes to
/// the JIT error log when the options name one.
///
/// # Safety
///
/// `image` is null or NUL-terminated; `options` and `values` hold `count`
/// entries, and a log buffer is valid for its size.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut Handle,
    image: *const c_void,
    count: c_uint,
    options: *mut c_int,
    values: *mut *mut c_void,
) -> CUresult {
    log("cuModuleLoadDataEx", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        if image.is_null() || module.is_null() {
            return code::INVALID_VALUE;
        }
        // SAFETY: a NUL-terminated image (the caller's contract).
        let bytes = unsafe { CStr::from_ptr(image.cast()) }.to_bytes();
        match load_module(bytes) {
            Ok(loaded) => {
                let handle = d.add_module(loaded);
                // SAFETY: non-null, valid by the caller's contract.
                unsafe { put(module, handle as Handle) }
            }
            Err((status, reason)) => {
                // SAFETY: the caller's contract.
                unsafe { write_log(count, options, values, &format!("tile-standin: {reason}")) };
                status
            }
        }
    })
}

/// `cuModuleGetFunction`: a kernel of the module by name.
///
/// # Safety
///
/// `name` is null or NUL-terminated; `function` null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    function: *mut Handle,
    module: Handle,
    name: *const c_char,
) -> CUresult {
    log("cuModuleGetFunction", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        if name.is_null() || function.is_null() {
            return code::INVALID_VALUE;
        }
        // SAFETY: NUL-terminated (the caller's contract).
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        match d.function(module as u64, &name) {
            // SAFETY: non-null, valid by the caller's contract.
            Ok(handle) => unsafe { put(function, handle as Handle) },
            Err(None) => code::INVALID_HANDLE,
            Err(Some(())) => code::NOT_FOUND,
        }
    })
}

/// `cuModuleUnload`: its functions become invalid handles (graphs that
/// launch them keep them); not while a capture forbids it to this thread.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(module: Handle) -> CUresult {
    log("cuModuleUnload", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        if !d.modules.contains_key(&(module as u64)) {
            return code::INVALID_HANDLE;
        }
        if let Err(refused) = d.admit(Use::Unsafe) {
            return refused;
        }
        if d.unload(module as u64) {
            code::SUCCESS
        } else {
            code::INVALID_HANDLE
        }
    })
}

/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
const MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;

/// `cuFuncSetAttribute`: only the dynamic shared memory a function may use
/// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`), up to what the
/// device lets a block opt in to beside the function's static shared
/// memory.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn cuFuncSetAttribute(
    function: Handle,
    attribute: c_int,
    value: c_int,
) -> CUresult {
    log("cuFuncSetAttribute", CallKind::Other, On::Nothing);
    with_driver(true, |d| {
        let Some((_, kernel)) = d.functions.get_mut(&(function as u64)) else {
            return code::INVALID_HANDLE;
        };
        if attribute != MAX_DYNAMIC_SHARED_SIZE_BYTES {
            eprintln!(
                "tile-standin: cuFuncSetAttribute refused: attribute {attribute} is not modelled"
            );
            return code::INVALID_VALUE;
        }
        let allowed = limits().shared_optin.saturating_sub(kernel.static_shared);
        match usize::try_from(value) {
            Ok(bytes) if bytes <= allowed => {
                kernel.dynamic_limit = bytes;
                code::SUCCESS
            }
            _ => {
                eprintln!(
                    "tile-standin: cuFuncSetAttribute refused: {value} bytes of dynamic shared memory, above the {allowed} the device allows `{}`",
                    kernel.name
                );
                code::INVALID_VALUE
            }
        }
    })
}

/// `cuLaunchKernel` with parameters by `kernel_params` (`extra` must be
/// null). The launch runs before the call returns; a fault becomes the
/// context's sticky error, reported from the next synchronization. On a
/// capturing stream the launch is recorded instead, with a copy of its
/// parameters' bytes.
///
/// # Safety
///
/// `kernel_params` holds one pointer per parameter of the kernel, each to
/// a value of the parameter's size, as the driver API requires.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    function: Handle,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared: c_uint,
    stream: Handle,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    let shape = Shape {
        grid: [grid_x, grid_y, grid_z],
        block: [block_x, block_y, block_z],
        shared,
    };
    // SAFETY: the caller's contract.
    unsafe {
        launch(
            "cuLaunchKernel",
            function,
            shape,
            stream,
            (kernel_params, extra),
        )
    }
}

/// A launch's grid, block and dynamic shared memory.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub(super) grid: [c_uint; 3],
    pub(super) block: [c_uint; 3],
    pub(super) shared: c_uint,
}

/// A launch by `name` (`cuLaunchKernel`, `cuLaunchKernelEx`): checked,
/// then run (or recorded on a capturing stream).
///
/// # Safety
///
/// As [`cuLaunchKernel`]'s `kernel_params`.
pub(super) unsafe fn launch(
    name: &'static str,
    function: Handle,
    shape: Shape,
    stream: Handle,
    (kernel_params, extra): (*mut *mut c_void, *mut *mut c_void),
) -> CUresult {
    let Shape {
        grid,
        block,
        shared,
    } = shape;
    let block_x = block[0];
    log(name, CallKind::Launch, On::Stream(stream as u64));
    let mut found = Err(Refused::Handle);
    let status = with_driver(true, |d| {
        found = d.launchable(function as u64, stream as u64);
        code::SUCCESS
    });
    if status != code::SUCCESS {
        // Not initialized, or no context current.
        return status;
    }
    let (loaded, kernel) = match found {
        Ok(f) => f,
        Err(Refused::Handle) => return code::INVALID_HANDLE,
        Err(Refused::Fault(fault)) => return fault_code(fault),
    };
    if let Err(reason) = driver::check_shape(&kernel, &limits(), grid, block, shared) {
        eprintln!("tile-standin: {name} refused: {reason}");
        return code::INVALID_VALUE;
    }
    if !extra.is_null() {
        eprintln!("tile-standin: {name} refused: parameters through `extra` are not modelled");
        return code::INVALID_VALUE;
    }
    if !kernel.params.is_empty() {
        if kernel_params.is_null() {
            return code::INVALID_VALUE;
        }
        // SAFETY: one pointer per parameter (the caller's contract).
        let params = unsafe { std::slice::from_raw_parts(kernel_params, kernel.params.len()) };
        if params.iter().any(|p| p.is_null()) {
            return code::INVALID_VALUE;
        }
    }
    let mut recorded = false;
    let status = with_driver(true, |d| match d.admit(Use::Enqueue(stream as u64)) {
        Err(refused) => refused,
        Ok(None) => code::SUCCESS,
        Ok(Some(capture)) => {
            // SAFETY: one pointer per parameter, each to a value of the
            // parameter's size (the caller's contract, checked non-null).
            let params = unsafe { copy_params(&kernel, kernel_params) };
            let op = Op::Launch {
                loaded: loaded.clone(),
                kernel: kernel.clone(),
                grid,
                threads: block_x,
                params,
            };
            d.record_op(capture, stream as u64, op);
            recorded = true;
            code::SUCCESS
        }
    });
    if status != code::SUCCESS || recorded {
        return status;
    }
    // SAFETY: `kernel_params` is CUDA's parameter array for this kernel
    // (the caller's contract), whose parameters the PTX and the image's
    // manifest agree on.
    let ran = unsafe {
        driver::run(
            &loaded,
            &kernel,
            grid,
            block_x,
            kernel_params.cast_const().cast(),
        )
    };
    if let Err(fault) = ran {
        with_driver(false, |d| {
            d.sticky.get_or_insert(fault);
            code::SUCCESS
        });
    }
    code::SUCCESS
}

/// A copy of the values of `kernel`'s parameters, each in a buffer of its
/// own, 16-byte aligned, as a driver copies them at capture.
///
/// # Safety
///
/// `params` holds one non-null pointer per parameter, each to a value of
/// the parameter's size.
unsafe fn copy_params(kernel: &Kernel, params: *mut *mut c_void) -> Vec<Vec<u128>> {
    kernel
        .params
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let mut buffer = vec![0u128; size.div_ceil(16)];
            // SAFETY: the caller's contract; the buffer holds `size` bytes.
            unsafe {
                let value = *params.add(i);
                std::ptr::copy_nonoverlapping(value.cast::<u8>(), buffer.as_mut_ptr().cast(), size);
            }
            buffer
        })
        .collect()
}
