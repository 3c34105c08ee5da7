//! `cuTensorMapEncodeTiled` (CUDA driver API §6.30) for what the TMA
//! images of `tile` ask: 2-D tiled maps of boxes of 128-byte rows under the
//! 128-byte swizzle, out-of-bounds elements zero. The map it writes is
//! `tile_abi::tma`'s encoding, which the emulation images read back: a real
//! driver writes its own, which only the hardware reads.

use super::{code, CUresult};
use crate::calls::{CallKind, On};
use std::ffi::c_void;
use tile_abi::tma::{TensorMap, TmaBox, MAP_BYTES};
use tile_ir::DType;

/// `CU_TENSOR_MAP_SWIZZLE_128B`.
const SWIZZLE_128B: u32 = 3;

/// The dtype of a `CUtensorMapDataType`, for the ones the boxes hold.
fn dtype_of(code: u32) -> Option<DType> {
    match code {
        0 => Some(DType::U8),
        1 => Some(DType::U16),
        2 => Some(DType::U32),
        3 => Some(DType::I32),
        4 => Some(DType::U64),
        5 => Some(DType::I64),
        6 => Some(DType::F16),
        7 => Some(DType::F32),
        8 => Some(DType::F64),
        9 => Some(DType::BF16),
        _ => None,
    }
}

/// `cuTensorMapEncodeTiled`: writes the map of a 2-D tensor for boxes of
/// 128-byte rows, 128-byte swizzle, no interleave, element strides of 1
/// and zero fill; anything else, or a tensor the driver would refuse
/// (`tile_abi::tma::TensorMap::new`), is `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// `map` is valid for a write of 128 bytes; `dims` and `box_dims` hold
/// `rank` values, `strides` `rank - 1`, `element_strides` `rank`.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the driver API's signature
pub unsafe extern "C" fn cuTensorMapEncodeTiled(
    map: *mut c_void,
    dtype: u32,
    rank: u32,
    address: *mut c_void,
    dims: *const u64,
    strides: *const u64,
    box_dims: *const u32,
    element_strides: *const u32,
    interleave: u32,
    swizzle: u32,
    _l2_promotion: u32,
    oob_fill: u32,
) -> CUresult {
    super::log("cuTensorMapEncodeTiled", CallKind::Other, On::Nothing);
    if map.is_null() || dims.is_null() || strides.is_null() || box_dims.is_null() {
        return code::INVALID_VALUE;
    }
    if rank != 2 || interleave != 0 || swizzle != SWIZZLE_128B || oob_fill != 0 {
        return code::INVALID_VALUE;
    }
    // SAFETY: the caller's contract: two dims, box dims and element
    // strides, one stride.
    let (dims, stride, box_dims) = unsafe {
        (
            [*dims, *dims.add(1)],
            *strides,
            [*box_dims, *box_dims.add(1)],
        )
    };
    if !element_strides.is_null() {
        // SAFETY: as above.
        let unit = unsafe { [*element_strides, *element_strides.add(1)] };
        if unit != [1, 1] {
            return code::INVALID_VALUE;
        }
    }
    let Some(dtype) = dtype_of(dtype) else {
        return code::INVALID_VALUE;
    };
    let size = dtype.size_bytes() as u64;
    let Some(tma_box) = TmaBox::new(dtype, box_dims[1] as usize) else {
        return code::INVALID_VALUE;
    };
    if tma_box.cols as u32 != box_dims[0] || stride % size != 0 {
        return code::INVALID_VALUE;
    }
    let (Ok(rows), Ok(cols)) = (usize::try_from(dims[1]), usize::try_from(dims[0])) else {
        return code::INVALID_VALUE;
    };
    let row_stride = (stride / size) as isize;
    let tensor = (dtype, &[rows, cols][..], &[row_stride, 1][..]);
    match TensorMap::new(address as u64, tensor, tma_box) {
        Ok(encoded) => {
            let bytes = encoded.to_bytes();
            // SAFETY: the caller's contract: 128 writable bytes at `map`.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.cast::<u8>(), MAP_BYTES) };
            code::SUCCESS
        }
        Err(_) => code::INVALID_VALUE,
    }
}
