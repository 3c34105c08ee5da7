//! The tensor maps a kernel whose image copies with the TMA takes (sm_90a,
//! sm_100a and sm_103a; `tile_abi::tma`): which ones its PTX says it takes, checked against the
//! driver's requirements for each tensor argument, then encoded by the
//! driver's `cuTensorMapEncodeTiled` (looked up in the driver library at
//! run time: drivers older than CUDA 12 do not have it).

use crate::driver::{self, GpuApi};
use std::ffi::{c_int, c_void};
use tile_abi::tma::{TensorMap, MAP_BYTES};
use tile_ir::DType;

/// `cuTensorMapEncodeTiled`'s C signature.
type EncodeTiled = unsafe extern "C" fn(
    *mut c_void,
    u32,
    u32,
    *mut c_void,
    *const u64,
    *const u64,
    *const u32,
    *const u32,
    u32,
    u32,
    u32,
    u32,
) -> c_int;

/// A `CUtensorMap`: 128 bytes, 64-byte aligned, as the driver writes it.
#[repr(C, align(64))]
struct Encoded([u8; MAP_BYTES]);

/// `CUtensorMapDataType` of `dtype`, for the dtypes a box may hold: the
/// 8-bit floats as `UINT8` (the copy moves bytes, and its zero fill is
/// their +0).
fn data_type(dtype: DType) -> Option<u32> {
    match dtype {
        DType::U8 | DType::I8 | DType::F8E4M3 | DType::F8E5M2 => Some(0),
        DType::U16 => Some(1),
        DType::U32 => Some(2),
        DType::I32 => Some(3),
        DType::U64 => Some(4),
        DType::I64 => Some(5),
        DType::F16 => Some(6),
        DType::F32 => Some(7),
        DType::F64 => Some(8),
        DType::BF16 => Some(9),
        _ => None,
    }
}

/// The driver's encoding of `map` (a map `TensorMap::new` accepted), or
/// why the driver gave none.
pub(crate) fn encode(map: &TensorMap) -> Result<[u8; MAP_BYTES], String> {
    let lib = driver::library(GpuApi::Cuda).map_err(|e| e.to_string())?;
    // SAFETY: `EncodeTiled` is `cuTensorMapEncodeTiled`'s signature in
    // `cuda.h` (its enums are C ints).
    let encode = unsafe { lib.get::<EncodeTiled>(b"cuTensorMapEncodeTiled\0") }
        .map_err(|e| format!("the driver has no cuTensorMapEncodeTiled (CUDA 12 or later): {e}"))?;
    let tma_box = map.tma_box;
    let dtype = data_type(tma_box.dtype)
        .ok_or_else(|| format!("no tensor-map data type for {}", tma_box.dtype))?;
    let dims = map.dims;
    let strides = [map.row_stride];
    let box_dims = [tma_box.cols as u32, tma_box.rows as u32];
    let element_strides = [1u32, 1];
    let mut out = Encoded([0; MAP_BYTES]);
    // SAFETY: `out` is 128 writable bytes, 64-byte aligned; the arrays hold
    // `rank` = 2 dims, box dims and element strides and one stride, alive
    // for the call; the global address is a device pointer the driver only
    // records. Swizzle 3 is 128 bytes, interleave, L2 promotion and the
    // out-of-bounds fill 0 (none, none, zeros).
    let status = unsafe {
        encode(
            out.0.as_mut_ptr().cast(),
            dtype,
            2,
            map.base as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            box_dims.as_ptr(),
            element_strides.as_ptr(),
            0,
            3,
            0,
            0,
        )
    };
    if status != 0 {
        return Err(format!("cuTensorMapEncodeTiled failed (CUresult {status})"));
    }
    Ok(out.0)
}
