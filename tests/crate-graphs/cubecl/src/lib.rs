//! A `tile` kernel on memory an engine on cubecl's CUDA runtime allocated
//! through cudarc, on the engine's stream, without a copy; the output
//! stays the engine's (an `Arc<CudaSlice>` it keeps a handle to).

use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;
use tile_runtime::{launch_on, Device, Error, KernelSpec};

/// Runs `kernel` (signature `(x: &Tensor<f32>, out: &mut Tensor<f32>)`,
/// `block` elements per program) from `input` into `output`, both of
/// `n` elements, on `stream`, and waits for it.
pub fn run(
    device: &Device,
    (kernel, block): (&KernelSpec, usize),
    (input, output): (Arc<CudaSlice<f32>>, Arc<CudaSlice<f32>>),
    stream: &Arc<CudaStream>,
) -> Result<(), Error> {
    let n = input.len();
    let x = device.tensor_from_cudarc(input, &[n])?;
    let mut out = device.tensor_from_cudarc(output, &[n])?;
    let on_engine = device.stream_from_cudarc(stream)?;
    let grid = [n.div_ceil(block) as u32, 1, 1];
    launch_on(&on_engine, kernel, grid, &mut [(&x).into(), (&mut out).into()])?;
    on_engine.synchronize()
}
