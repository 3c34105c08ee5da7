//! Kernels on what another library owns: device memory, streams and CUDA
//! contexts made elsewhere (an engine's allocator, cudarc, candle, a
//! framework's stream), wrapped without copies. Each constructor is
//! `unsafe` and states what the caller guarantees; everything a launch
//! checks (dtypes, ranks, bounds, overlap of written tensors, alignment)
//! applies to the wrapped tensors as to the runtime's own.

use crate::device::{numel, Device};
use crate::error::Error;
use crate::gpu::{Buffer, Context, GpuTensor, Owner, Queue};
use crate::stream::Stream;
use crate::tensor::{Storage, Tensor};
use std::ffi::c_void;
use std::sync::Arc;
use tile_ir::interp::Element;

impl Device {
    /// A tensor of `shape` and `strides` (in elements, any sign) over
    /// `len` elements of `T` at device address `pointer` of this GPU,
    /// which the runtime never frees. Element `[i, j, ..]` is at
    /// `pointer + (i·strides[0] + j·strides[1] + ..)·size_of::<T>()`; every
    /// such element must lie among the `len` (checked: [`Error::InvalidTensor`]),
    /// as must `pointer`'s alignment to `T`. `owner`, when given, is kept
    /// alive as long as the tensor, its clones and the launches that use
    /// them: pass the allocation's owner (an `Arc` of another library's
    /// buffer) to tie the memory's life to the tensor's.
    ///
    /// # Safety
    ///
    /// `pointer` is device memory of this device (its context, for CUDA),
    /// holding `len` elements of `T`, readable and writable by kernels
    /// until the tensor, its clones and every launch using them are done
    /// (kept alive by `owner`, or by the caller). While a launch on it may
    /// run, no one else writes the memory, nor reads what the kernel
    /// writes, except through work ordered after the launch on its stream
    /// (or after an [`crate::Event`] recorded behind it).
    pub unsafe fn tensor_from_raw<T: Element>(
        &self,
        pointer: u64,
        len: usize,
        (shape, strides): (&[usize], &[isize]),
        owner: Option<Owner>,
    ) -> Result<Tensor<T>, Error> {
        let context = self.gpu_context("a tensor over device memory", shape)?;
        numel(shape, self)?;
        let size = T::DTYPE.size_bytes();
        let invalid = |reason: String| self.invalid(shape, reason);
        if strides.len() != shape.len() {
            return Err(invalid(format!(
                "{} strides for {} axes",
                strides.len(),
                shape.len()
            )));
        }
        if pointer == 0 && len > 0 {
            return Err(invalid("the device pointer is null".into()));
        }
        if !pointer.is_multiple_of(size as u64) {
            return Err(invalid(format!(
                "the device pointer {pointer:#x} is not aligned to its {size}-byte elements"
            )));
        }
        if let Some(reach) = reach(shape, strides) {
            let (low, high) = reach;
            if low < 0 || high >= len as i128 {
                return Err(invalid(format!(
                    "strides {strides:?} reach elements {low} to {high}, outside the {len} given"
                )));
            }
        }
        let bytes = len
            .checked_mul(size)
            .ok_or_else(|| invalid("the number of bytes overflows".into()))?;
        // SAFETY: the caller's contract: `len` elements of this device's
        // memory at `pointer`, alive as long as the buffer (or `owner`).
        let buffer = unsafe { Buffer::foreign(context, pointer, bytes, owner) };
        let tensor = GpuTensor::over(buffer, T::DTYPE, (shape, strides, 0));
        Ok(Tensor::new(Storage::Gpu(tensor)))
    }

    /// A [`Stream`] over a stream of this GPU another library made
    /// (`CUstream`, `hipStream_t`; null is the legacy default stream),
    /// which the runtime never destroys: launches on it are ordered with
    /// that library's work on it.
    ///
    /// # Safety
    ///
    /// `raw` is a stream of this device (its context, for CUDA) that stays
    /// valid until the returned `Stream` is dropped (which waits for it).
    pub unsafe fn stream_from_raw(&self, raw: *mut c_void) -> Result<Stream, Error> {
        let context = self.gpu_context("a stream from a raw handle", &[])?;
        // SAFETY: the caller's contract.
        let queue = unsafe { Queue::borrowed(context, raw) };
        Ok(Stream::with(self, Some(Arc::new(queue))))
    }

    /// The CUDA device of a context another library made (`CUcontext`;
    /// e.g. cudarc's `CudaContext::cu_ctx`, or a primary context it
    /// retained), driven through that context, which the runtime never
    /// destroys.
    ///
    /// # Safety
    ///
    /// `context` is a live `CUcontext` that stays valid until the device,
    /// and every tensor, stream and event made on it, are dropped.
    pub unsafe fn from_raw_cuda_context(context: *mut c_void) -> Result<Device, Error> {
        // SAFETY: the caller's contract.
        let context = unsafe { Context::borrow_cuda(context, None)? };
        Device::on(context)
    }

    /// The opened GPU, or an error saying `what` (of `shape`, for a
    /// tensor) needs one.
    fn gpu_context(&self, what: &str, shape: &[usize]) -> Result<&Arc<Context>, Error> {
        let Some(context) = &self.gpu else {
            return Err(match shape {
                [] => Error::Unsupported {
                    what: what.to_string(),
                    device: self.to_string(),
                },
                _ => self.invalid(shape, format!("{what} needs a GPU device")),
            });
        };
        Ok(context)
    }
}

/// The lowest and highest element offsets `shape` and `strides` reach, or
/// `None` for a shape without elements.
fn reach(shape: &[usize], strides: &[isize]) -> Option<(i128, i128)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut low, mut high) = (0i128, 0i128);
    for (&extent, &stride) in shape.iter().zip(strides) {
        let span = (extent as i128 - 1) * stride as i128;
        low += span.min(0);
        high += span.max(0);
    }
    Some((low, high))
}

impl<T: Element> Tensor<T> {
    /// The device address of element `[0, .., 0]`, for passing to another
    /// library; `None` on the CPU. It stays valid while this tensor (or a
    /// clone sharing its memory) lives.
    pub fn device_ptr(&self) -> Option<u64> {
        match &self.storage {
            Storage::Gpu(g) => Some(g.device_ptr()),
            Storage::Host(_) => None,
        }
    }
}
