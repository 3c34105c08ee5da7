//! Code-object modules and launches: a code object read as the runtime
//! reads it, paired with its emulation image; functions by name; launches
//! checked against the kernel's bounds and the device's limits, their
//! kernarg segment built, then run.

use super::{code, device_gfx, fault_code, limits, log, with_driver, HipError, HipPtr};
use crate::calls::{CallKind, On};
use crate::driver::{self, put, Kernel, Loaded, Refused};
use crate::hsaco::{self, CodeObject};
use std::ffi::{c_char, c_uint, c_void, CStr};

/// `HIP_LAUNCH_PARAM_*` markers of `hipModuleLaunchKernel`'s `extra`.
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;
const PARAM_END: usize = 3;

/// The largest kernarg segment built (real kernels take a few hundred
/// bytes; the metadata of a corrupt code object may claim anything).
const MAX_KERNARG: usize = 64 * 1024;

/// Reads a code object as the runtime does and finds its emulation image.
fn load_module(bytes: &[u8]) -> Result<Loaded, (HipError, String)> {
    let object = CodeObject::parse(bytes).map_err(|e| (code::INVALID_IMAGE, e))?;
    let gfx = device_gfx();
    if !tile_abi::amd_generic::runs_on(&object.gfx, &gfx) {
        return Err((
            code::NO_BINARY_FOR_GPU,
            format!(
                "the code object is for {}, the device is a {gfx}",
                object.gfx
            ),
        ));
    }
    Loaded::new(object.kernels, bytes).map_err(|e| (code::INVALID_IMAGE, e))
}

/// `hipModuleLoadData` of a code object in memory; why a load fails goes
/// to standard error (HIP has no log).
///
/// # Safety
///
/// `image` is null or a complete code object.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(module: *mut HipPtr, image: *const c_void) -> HipError {
    log("hipModuleLoadData", CallKind::Other, On::Nothing);
    if image.is_null() || module.is_null() {
        return code::INVALID_VALUE;
    }
    // SAFETY: a complete code object (the caller's contract).
    let bytes = match unsafe { hsaco::length(image.cast()) } {
        // SAFETY: as above; its length is what its headers describe.
        Ok(len) => unsafe { std::slice::from_raw_parts(image.cast::<u8>(), len) },
        Err(reason) => {
            eprintln!("tile-standin: hipModuleLoadData refused: {reason}");
            return code::INVALID_IMAGE;
        }
    };
    with_driver(|d| match load_module(bytes) {
        // SAFETY: non-null, valid by the caller's contract.
        Ok(loaded) => unsafe { put(module, d.add_module(loaded) as HipPtr) },
        Err((status, reason)) => {
            eprintln!("tile-standin: hipModuleLoadData refused: {reason}");
            status
        }
    })
}

/// `hipModuleGetFunction`: a kernel of the module by name.
///
/// # Safety
///
/// `name` is null or NUL-terminated; `function` null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut HipPtr,
    module: HipPtr,
    name: *const c_char,
) -> HipError {
    log("hipModuleGetFunction", CallKind::Other, On::Nothing);
    if name.is_null() || function.is_null() {
        return code::INVALID_VALUE;
    }
    // SAFETY: NUL-terminated (the caller's contract).
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    with_driver(|d| match d.function(module as u64, &name) {
        // SAFETY: non-null, valid by the caller's contract.
        Ok(handle) => unsafe { put(function, handle as HipPtr) },
        Err(None) => code::INVALID_HANDLE,
        Err(Some(())) => code::NOT_FOUND,
    })
}

/// `hipModuleUnload`: its functions become invalid handles.
///
/// # Safety
///
/// None: an unknown handle is refused.
#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(module: HipPtr) -> HipError {
    log("hipModuleUnload", CallKind::Other, On::Nothing);
    with_driver(|d| {
        if d.unload(module as u64) {
            code::SUCCESS
        } else {
            code::INVALID_HANDLE
        }
    })
}

/// The kernarg segment of a launch of `kernel`, from `extra`'s packed
/// buffer (which must hold exactly the explicit arguments) or from one
/// pointer per argument; hidden arguments are zero.
///
/// # Safety
///
/// `extra` is null or a `HIP_LAUNCH_PARAM_*` list ending in
/// `HIP_LAUNCH_PARAM_END`, naming a buffer of the size it gives;
/// `params` is null or holds one pointer per argument, each to a value of
/// the argument's size.
unsafe fn kernarg_segment(
    kernel: &Kernel,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<Vec<u128>, String> {
    let kernarg = kernel
        .kernarg
        .as_ref()
        .ok_or("the kernel has no kernarg segment")?;
    let explicit = kernarg.explicit(&kernel.params);
    let total = kernarg.segment.max(explicit);
    if total > MAX_KERNARG {
        return Err(format!(
            "a kernarg segment of {total} bytes, above the {MAX_KERNARG} the stand-in gives"
        ));
    }
    let mut segment = vec![0u128; total.div_ceil(16)];
    let bytes: *mut u8 = segment.as_mut_ptr().cast();
    if !extra.is_null() {
        let (mut buffer, mut size) = (std::ptr::null::<u8>(), None);
        for i in (0..).step_by(2) {
            // SAFETY: the list ends at `HIP_LAUNCH_PARAM_END` (the contract).
            let (marker, value) = unsafe { (*extra.add(i) as usize, *extra.add(i + 1)) };
            match marker {
                PARAM_END => break,
                PARAM_BUFFER_POINTER => buffer = value.cast(),
                // SAFETY: the size marker's value points at a `usize`.
                PARAM_BUFFER_SIZE if !value.is_null() => {
                    size = Some(unsafe { *value.cast::<usize>() })
                }
                other => return Err(format!("unknown launch parameter marker {other}")),
            }
        }
        match size {
            Some(size) if !buffer.is_null() && size == explicit => {
                // SAFETY: the buffer holds `size` bytes (the contract), the
                // segment at least `explicit`.
                unsafe { std::ptr::copy_nonoverlapping(buffer, bytes, size) };
                Ok(segment)
            }
            Some(size) => Err(format!(
                "a parameter buffer of {size} bytes for `{}`, whose arguments take {explicit}",
                kernel.name
            )),
            None => Err("`extra` names no parameter buffer and size".into()),
        }
    } else if !params.is_null() {
        for (i, (&offset, &size)) in kernarg.offsets.iter().zip(&kernel.params).enumerate() {
            // SAFETY: one pointer per argument, each to `size` bytes (the
            // contract); the segment holds every argument.
            unsafe {
                let value = *params.add(i);
                if value.is_null() {
                    return Err(format!("argument {i} of `{}` is null", kernel.name));
                }
                std::ptr::copy_nonoverlapping(value.cast::<u8>(), bytes.add(offset), size);
            }
        }
        Ok(segment)
    } else if kernel.params.is_empty() {
        Ok(segment)
    } else {
        Err(format!("no arguments for `{}`", kernel.name))
    }
}

/// `hipModuleLaunchKernel`. The launch runs before the call returns; a
/// fault becomes the sticky error of the next synchronization or copy.
///
/// # Safety
///
/// `kernel_params` is null or holds one pointer per argument, each to a
/// value of the argument's size; `extra` is null or a
/// `HIP_LAUNCH_PARAM_*` list ending in `HIP_LAUNCH_PARAM_END`, naming a
/// buffer of the size it gives.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    function: HipPtr,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared: c_uint,
    stream: HipPtr,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    log(
        "hipModuleLaunchKernel",
        CallKind::Launch,
        On::Stream(stream as u64),
    );
    let mut found = Err(Refused::Handle);
    with_driver(|d| {
        found = d.launchable(function as u64, stream as u64);
        code::SUCCESS
    });
    let (loaded, kernel) = match found {
        Ok(f) => f,
        Err(Refused::Handle) => return code::INVALID_HANDLE,
        Err(Refused::Fault(fault)) => return fault_code(fault),
    };
    let grid = [grid_x, grid_y, grid_z];
    let block = [block_x, block_y, block_z];
    let work_items_fit = grid
        .iter()
        .zip(block)
        .all(|(&g, b)| u64::from(g) * u64::from(b) <= u64::from(u32::MAX));
    let checked = driver::check_shape(&kernel, &limits(), grid, block, shared).and_then(|()| {
        if work_items_fit {
            Ok(())
        } else {
            Err(format!(
                "the grid {grid:?} of blocks {block:?} exceeds 2^32 work-items"
            ))
        }
    });
    // SAFETY: the caller's contract.
    let segment = checked.and_then(|()| unsafe { kernarg_segment(&kernel, kernel_params, extra) });
    let segment = match segment {
        Ok(segment) => segment,
        Err(reason) => {
            eprintln!("tile-standin: hipModuleLaunchKernel refused: {reason}");
            return code::INVALID_VALUE;
        }
    };
    // SAFETY: a kernarg segment holding every argument at the offsets of
    // the code object's metadata, which the image's manifest agrees with.
    let ran = unsafe { driver::run(&loaded, &kernel, grid, block_x, segment.as_ptr().cast()) };
    if let Err(fault) = ran {
        with_driver(|d| {
            d.sticky.get_or_insert(fault);
            code::SUCCESS
        });
    }
    code::SUCCESS
}
