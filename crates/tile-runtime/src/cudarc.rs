//! Zero-copy conversions to and from [`cudarc`]'s driver types (the
//! `cudarc` feature): a device over a `CudaContext`, a [`Stream`] over a
//! `CudaStream`, a tensor over a `CudaSlice`, and back. The runtime keeps
//! its own driver bindings; this feature adds the conversions only and
//! selects no linking mode or CUDA version of cudarc's (it asks for
//! `fallback-dynamic-loading`, which yields to whatever mode another crate
//! of the build picks, e.g. candle's `dynamic-linking`).
//!
//! Work on one allocation through both libraries must be ordered: launch
//! `tile` kernels on the slice's own stream ([`Device::stream_from_cudarc`]
//! of `slice.stream()`), or order the two streams with events.

use crate::device::Device;
use crate::error::Error;
use crate::gpu::{Owner, Queue};
use crate::stream::Stream;
use crate::tensor::Tensor;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;
use tile_ir::interp::Element;

impl Device {
    /// The CUDA device of a cudarc context, driven through that context
    /// (for `CudaContext::new(n)`, device `n`'s primary context, the one
    /// [`Device::cuda`] uses too), which the device keeps alive.
    pub fn from_cudarc(context: &Arc<CudaContext>) -> Result<Device, Error> {
        let keep: Owner = Arc::clone(context) as Owner;
        // SAFETY: the context stays alive as long as the device: `keep`
        // holds it.
        let context =
            unsafe { crate::gpu::Context::borrow_cuda(context.cu_ctx().cast(), Some(keep))? };
        Device::on(context)
    }

    /// A [`Stream`] over a cudarc stream of this device's context, which the
    /// stream keeps alive: `tile` launches on it are ordered with cudarc's
    /// work on it. A stream of another context is
    /// [`Error::DeviceMismatch`].
    pub fn stream_from_cudarc(&self, stream: &Arc<CudaStream>) -> Result<Stream, Error> {
        let context = self.same_context(stream.context(), "a cudarc stream")?;
        let owner: Owner = Arc::clone(stream) as Owner;
        // SAFETY: a stream of this device's context, kept alive by the
        // queue (`owner`).
        let queue = unsafe { Queue::borrowed(context, stream.cu_stream().cast()) }.keeping(owner);
        Ok(Stream::with(self, Some(Arc::new(queue))))
    }

    /// A tensor of `shape` (row-major) over a cudarc slice of this device's
    /// context, without a copy; the tensor (and every launch using it)
    /// keeps the slice alive. The slice must hold exactly the shape's
    /// elements ([`Error::DataLength`]).
    pub fn tensor_from_cudarc<T: Element + 'static>(
        &self,
        slice: Arc<CudaSlice<T>>,
        shape: &[usize],
    ) -> Result<Tensor<T>, Error> {
        let owner: Owner = Arc::clone(&slice) as Owner;
        // SAFETY: the tensor keeps the slice alive (`owner`).
        unsafe { self.over_cudarc(&*slice, shape, Some(owner)) }
    }

    /// A tensor of `shape` (row-major) over cudarc memory the caller keeps
    /// (a `CudaSlice`, as a candle `CustomOp` gets its input, or a
    /// `CudaView`/`CudaViewMut` of part of one), without a copy. It must
    /// hold exactly the shape's elements ([`Error::DataLength`]).
    ///
    /// # Safety
    ///
    /// The slice's memory outlives every use of the tensor and its clones:
    /// it is freed only after the launches using them are done (cudarc
    /// frees on the slice's stream, so launches queued before on that
    /// stream are), and nothing writes it meanwhile except through work
    /// ordered with those launches.
    pub unsafe fn tensor_from_cudarc_borrowed<T: Element, S: DevicePtr<T>>(
        &self,
        slice: &S,
        shape: &[usize],
    ) -> Result<Tensor<T>, Error> {
        // SAFETY: the caller's contract.
        unsafe { self.over_cudarc(slice, shape, None) }
    }

    /// A row-major tensor of `shape` over `slice`, which `owner` (or the
    /// caller) keeps alive.
    ///
    /// # Safety
    ///
    /// As [`Device::tensor_from_cudarc_borrowed`], unless `owner` holds the
    /// slice.
    unsafe fn over_cudarc<T: Element, S: DevicePtr<T>>(
        &self,
        slice: &S,
        shape: &[usize],
        owner: Option<Owner>,
    ) -> Result<Tensor<T>, Error> {
        self.same_context(slice.stream().context(), "a cudarc slice")?;
        let expected = crate::device::numel(shape, self)?;
        if slice.len() != expected {
            return Err(Error::DataLength {
                shape: shape.to_vec(),
                expected,
                found: slice.len(),
                device: self.to_string(),
            });
        }
        // The read event is recorded at once: `tile`'s launches on the
        // slice are ordered by the stream they are queued on.
        let (pointer, _read) = slice.device_ptr(slice.stream());
        let strides = crate::gpu::row_major(shape);
        // SAFETY: the slice's elements of `T` of this device's context,
        // alive as long as the tensor's uses (`owner`, or the caller's
        // contract).
        unsafe { self.tensor_from_raw(pointer, slice.len(), (shape, &strides), owner) }
    }

    /// This device's context if `context` is it, else an error naming
    /// `what`.
    fn same_context(
        &self,
        context: &Arc<CudaContext>,
        what: &str,
    ) -> Result<&Arc<crate::gpu::Context>, Error> {
        let mismatch = || Error::DeviceMismatch {
            what: format!("{what} used on a device"),
            first: format!("cuda:{} (cudarc)", context.ordinal()),
            second: self.to_string(),
        };
        let ours = self.gpu.as_ref().ok_or_else(mismatch)?;
        if ours.cuda_context() != Some(context.cu_ctx().cast()) {
            return Err(mismatch());
        }
        Ok(ours)
    }
}

impl Stream {
    /// The stream as a cudarc stream of `context` (this stream's device's),
    /// without taking it over: cudarc's work on it is ordered with `tile`'s.
    ///
    /// # Safety
    ///
    /// The returned stream (and whatever cudarc made that holds it) is not
    /// used after this `Stream` is dropped.
    pub unsafe fn to_cudarc(&self, context: &Arc<CudaContext>) -> Result<Arc<CudaStream>, Error> {
        self.device().same_context(context, "a cudarc context")?;
        let raw = self.as_raw().expect("a CUDA device's stream has a handle");
        // SAFETY: a live stream of `context` (checked above), used no
        // longer than this `Stream` lives (the caller's contract).
        Ok(unsafe { context.wrap_borrowed_stream(raw.cast()) })
    }
}

/// A tensor's memory seen as a cudarc slice, for as long as the tensor is
/// borrowed; the memory stays the tensor's (dropping this does not free
/// it).
#[derive(Debug)]
pub struct CudarcSlice<'t, T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    /// The borrow of the tensor whose memory this is.
    tensor: PhantomData<&'t [T]>,
}

impl<T> Deref for CudarcSlice<'_, T> {
    type Target = CudaSlice<T>;

    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> Drop for CudarcSlice<'_, T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; the slice is leaked (its memory is the
        // tensor's), so cudarc never frees it.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        slice.leak();
    }
}

impl<T: Element> Tensor<T> {
    /// The tensor's elements as a cudarc slice on `stream` (a stream of the
    /// tensor's device's context), without a copy, for cudarc to read while
    /// the tensor is borrowed. The tensor must be row-major
    /// ([`Error::InvalidTensor`] otherwise).
    pub fn as_cudarc(&self, stream: &Arc<CudaStream>) -> Result<CudarcSlice<'_, T>, Error> {
        let pointer = self.device_ptr().ok_or_else(|| Error::Unsupported {
            what: "a cudarc slice of a CPU tensor".into(),
            device: self.device(),
        })?;
        if self.strides() != crate::gpu::row_major(self.shape()).as_slice() {
            return Err(Error::InvalidTensor {
                shape: self.shape().to_vec(),
                reason: format!(
                    "a cudarc slice needs a row-major tensor, not strides {:?}",
                    self.strides()
                ),
                device: self.device(),
            });
        }
        let len = self.shape().iter().product();
        // SAFETY: the tensor's `len` elements of `T` at `pointer` are live
        // while it is borrowed, which the returned value's lifetime keeps;
        // the slice is leaked on drop, never freed; it is only read (the
        // `Deref` gives `&CudaSlice`).
        let slice = unsafe { stream.upgrade_device_ptr::<T>(pointer, len) };
        Ok(CudarcSlice {
            slice: ManuallyDrop::new(slice),
            tensor: PhantomData,
        })
    }
}
