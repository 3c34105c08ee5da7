//! A candle `CustomOp1::cuda_fwd`, shaped as candle calls it, running a
//! `tile` kernel on candle's memory and stream without a copy. candle's
//! `CudaStorage::as_cuda_slice::<f32>()` gives the input as
//! `&CudaSlice<f32>` and `CudaDevice::cuda_stream()` its stream; the op
//! allocates its output with cudarc on that stream and returns it, which
//! candle wraps with `CudaStorage::wrap_cuda_slice`. (candle itself is not
//! a dependency here: its CUDA build compiles kernels with `nvcc`; its
//! types at this boundary are cudarc's, which are.)

use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;
use tile_runtime::{launch_on, Device, Error, KernelSpec};

/// `out = kernel(input)` for an elementwise `tile` kernel of signature
/// `(x: &Tensor<f32>, out: &mut Tensor<f32>)` whose programs each handle
/// `block` elements, on candle's stream.
pub fn cuda_fwd(
    device: &Device,
    kernel: &KernelSpec,
    block: usize,
    (input, stream): (&CudaSlice<f32>, &Arc<CudaStream>),
) -> Result<CudaSlice<f32>, Error> {
    let n = input.len();
    let output = stream.alloc_zeros::<f32>(n).map_err(|e| Error::Unsupported {
        what: format!("allocating the output through cudarc ({e})"),
        device: device.to_string(),
    })?;
    let on_candle = device.stream_from_cudarc(stream)?;
    // SAFETY: candle keeps `input` and `output` alive past this op and
    // frees them on `stream`, after the launch queued on it here; nothing
    // else writes them meanwhile.
    let x = unsafe { device.tensor_from_cudarc_borrowed(input, &[n]) }?;
    // SAFETY: as above.
    let mut out = unsafe { device.tensor_from_cudarc_borrowed(&output, &[n]) }?;
    let grid = [n.div_ceil(block) as u32, 1, 1];
    launch_on(&on_candle, kernel, grid, &mut [(&x).into(), (&mut out).into()])?;
    // The launch's device checks are read when `on_candle` is synchronized:
    // here, when it drops, since candle goes on queueing on the stream.
    Ok(output)
}
