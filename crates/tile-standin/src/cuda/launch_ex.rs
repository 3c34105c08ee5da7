//! `cuLaunchKernelEx` (CUDA 12.0): a launch described by a
//! `CUlaunchConfig` with launch attributes, of which the stand-in takes
//! programmatic stream serialization (programmatic dependent launch:
//! the launch may start before the one before it on its stream finishes,
//! and waits for it at `griddepcontrol.wait`). Launches run one after
//! another here, so it changes nothing but is checked and logged.

use super::module::{launch, Shape};
use super::{code, CUresult, Handle};
use std::ffi::{c_uint, c_void};

/// `CU_LAUNCH_ATTRIBUTE_IGNORE`.
const ATTRIBUTE_IGNORE: u32 = 0;
/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`.
const ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: u32 = 6;
/// `CUDA_ERROR_NOT_SUPPORTED`.
const NOT_SUPPORTED: CUresult = 801;

/// `CUlaunchAttribute`: an id, padding to 8 bytes, a 64-byte value union.
#[repr(C)]
pub struct LaunchAttribute {
    /// `CUlaunchAttributeID`.
    pub id: u32,
    /// Padding to the value's alignment.
    pub pad: [u8; 4],
    /// `CUlaunchAttributeValue`: for programmatic stream serialization an
    /// `int` in its first 4 bytes.
    pub value: [u64; 8],
}

/// `CUlaunchConfig`.
#[repr(C)]
pub struct LaunchConfig {
    /// `gridDimX`, `gridDimY`, `gridDimZ`.
    pub grid: [c_uint; 3],
    /// `blockDimX`, `blockDimY`, `blockDimZ`.
    pub block: [c_uint; 3],
    /// `sharedMemBytes`.
    pub shared: c_uint,
    /// `hStream`.
    pub stream: Handle,
    /// `attrs`.
    pub attrs: *mut LaunchAttribute,
    /// `numAttrs`.
    pub num_attrs: c_uint,
}

/// `cuLaunchKernelEx`: `config`'s launch of `function`. Attributes other
/// than ignored ones and programmatic stream serialization (0 or 1) are
/// `CUDA_ERROR_NOT_SUPPORTED`; the launch is then `cuLaunchKernel`'s.
///
/// # Safety
///
/// `config` points to a `CUlaunchConfig` whose `attrs` holds `numAttrs`
/// attributes; `kernel_params` as for `cuLaunchKernel`.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const LaunchConfig,
    function: Handle,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    if config.is_null() {
        return code::INVALID_VALUE;
    }
    // SAFETY: a `CUlaunchConfig` (the caller's contract).
    let config = unsafe { &*config };
    let attributes: &[LaunchAttribute] = match (config.attrs.is_null(), config.num_attrs) {
        (_, 0) => &[],
        (true, _) => return code::INVALID_VALUE,
        // SAFETY: `numAttrs` attributes (the caller's contract).
        (false, n) => unsafe { std::slice::from_raw_parts(config.attrs, n as usize) },
    };
    for attribute in attributes {
        match attribute.id {
            ATTRIBUTE_IGNORE => {}
            ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION => {
                let allowed = attribute.value[0] as u32;
                if allowed > 1 {
                    return code::INVALID_VALUE;
                }
            }
            _ => return NOT_SUPPORTED,
        }
    }
    let shape = Shape {
        grid: config.grid,
        block: config.block,
        shared: config.shared,
    };
    // SAFETY: the caller's contract.
    unsafe {
        launch(
            "cuLaunchKernelEx",
            function,
            shape,
            config.stream,
            (kernel_params, extra),
        )
    }
}
