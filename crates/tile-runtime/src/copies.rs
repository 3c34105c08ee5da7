//! Copies between host and device queued on a [`Stream`]: the host's data
//! goes through pinned memory the stream owns and reuses (`gpu/queue.rs`),
//! so a copy returns once queued, runs in order with the stream's
//! launches, and the host may reuse its slice at once. On the CPU they are
//! done when they return.

use crate::error::Error;
use crate::gpu::{Copying, Queued};
use crate::stream::Stream;
use crate::tensor::{Storage, Tensor};
use std::sync::Arc;
use tile_ir::interp::{Element, HostBuffer, HostTensor};

impl Stream {
    /// Queues writing `data` (one value per element, row-major) into
    /// `tensor`, in place, after the launches queued before it; later
    /// launches on the stream see the values. Returns once queued: `data`
    /// is copied into pinned staging memory first. A GPU tensor must be
    /// row-major ([`Error::InvalidTensor`]) and of the stream's device.
    pub fn upload<T: Element>(&self, tensor: &mut Tensor<T>, data: &[T]) -> Result<(), Error> {
        self.usable(|| "upload".to_string())?;
        self.not_capturing("an upload")?;
        let expected: usize = tensor.shape().iter().product();
        if data.len() != expected {
            return Err(Error::DataLength {
                shape: tensor.shape().to_vec(),
                expected,
                found: data.len(),
                device: tensor.device(),
            });
        }
        let Some(queue) = self.queue() else {
            return tensor.copy_from_slice(data);
        };
        let device = tensor.device();
        let Storage::Gpu(gpu) = &mut tensor.storage else {
            return Err(self.elsewhere(device));
        };
        if !Arc::ptr_eq(&gpu.buffer.context, &queue.context) {
            return Err(self.elsewhere(device));
        }
        row_major(gpu.shape(), gpu.strides(), &device)?;
        gpu.make_unique(queue.raw)?;
        let bytes = data.len() * T::DTYPE.size_bytes();
        if bytes == 0 {
            return Ok(());
        }
        let staging = queue.staging(bytes)?;
        // SAFETY: the staging buffer holds at least `bytes` and is ours
        // until the copy is done (it returns to the slab at the stream's
        // synchronization).
        let host = unsafe { std::slice::from_raw_parts_mut(staging.host(), bytes) };
        T::write_le_slice(data, host);
        // SAFETY: the staging buffer stays untouched until the stream is
        // synchronized, and the tensor's buffer alive (both held by the
        // queued record); the tensor's elements are `bytes` long from its
        // base (row-major, validated when made).
        unsafe {
            queue
                .context
                .upload(gpu.device_ptr(), staging.host(), bytes, queue.raw)?;
        }
        self.queue_record(Queued::Copy(Copying {
            queue: Arc::clone(queue),
            staging,
            _buffer: Arc::clone(&gpu.buffer),
        }));
        Ok(())
    }

    /// Queues reading `tensor` back to the host after the launches queued
    /// before it; [`Download::wait`] gives the values. A GPU tensor must be
    /// row-major ([`Error::InvalidTensor`]) and of the stream's device.
    pub fn download<T: Element>(&self, tensor: &Tensor<T>) -> Result<Download<'_, T>, Error> {
        self.usable(|| "download".to_string())?;
        self.not_capturing("a download")?;
        let Some(queue) = self.queue() else {
            return Ok(Download {
                stream: self,
                state: State::Done(tensor.to_vec()?),
            });
        };
        let device = tensor.device();
        let Storage::Gpu(gpu) = &tensor.storage else {
            return Err(self.elsewhere(device));
        };
        if !Arc::ptr_eq(&gpu.buffer.context, &queue.context) {
            return Err(self.elsewhere(device));
        }
        row_major(gpu.shape(), gpu.strides(), &device)?;
        let shape = gpu.shape().to_vec();
        let bytes = shape.iter().product::<usize>() * T::DTYPE.size_bytes();
        let staging = queue.staging(bytes.max(1))?;
        if bytes > 0 {
            // SAFETY: the staging buffer holds at least `bytes` and is not
            // read until the stream is synchronized; the tensor's buffer is
            // kept alive by the returned record.
            unsafe {
                queue
                    .context
                    .download(staging.host(), gpu.device_ptr(), bytes, queue.raw)?;
            }
        }
        Ok(Download {
            stream: self,
            state: State::Queued {
                copying: Some(Copying {
                    queue: Arc::clone(queue),
                    staging,
                    _buffer: Arc::clone(&gpu.buffer),
                }),
                shape,
                bytes,
            },
        })
    }

    /// An error while a graph is being captured: a copy's staging memory
    /// is the stream's until its next synchronization, not a graph's.
    fn not_capturing(&self, what: &str) -> Result<(), Error> {
        if self.capturing() {
            return Err(Error::Unsupported {
                what: format!("{what} inside a graph capture"),
                device: self.device().to_string(),
            });
        }
        Ok(())
    }

    /// The error of a copy of a tensor of `device` on this stream.
    fn elsewhere(&self, device: String) -> Error {
        Error::DeviceMismatch {
            what: "a copy on a stream".into(),
            first: device,
            second: self.device().to_string(),
        }
    }
}

/// An error unless the layout is row-major (the elements one after
/// another from the first).
fn row_major(shape: &[usize], strides: &[isize], device: &str) -> Result<(), Error> {
    if strides == crate::gpu::row_major(shape).as_slice() {
        return Ok(());
    }
    Err(Error::InvalidTensor {
        shape: shape.to_vec(),
        reason: format!("an asynchronous copy needs a row-major tensor, not strides {strides:?}"),
        device: device.to_string(),
    })
}

/// A read of a tensor queued on a stream ([`Stream::download`]).
#[derive(Debug)]
pub struct Download<'s, T: Element> {
    stream: &'s Stream,
    state: State<T>,
}

#[derive(Debug)]
enum State<T> {
    /// Read already (the CPU).
    Done(Vec<T>),
    /// In flight on the stream.
    Queued {
        copying: Option<Copying>,
        shape: Vec<usize>,
        bytes: usize,
    },
}

impl<T: Element> Download<'_, T> {
    /// Synchronizes the stream ([`Stream::synchronize`], which reports the
    /// launches before the copy) and returns the values, row-major.
    pub fn wait(mut self) -> Result<Vec<T>, Error> {
        let (copying, shape, bytes) = match &mut self.state {
            State::Done(values) => return Ok(std::mem::take(values)),
            State::Queued {
                copying,
                shape,
                bytes,
            } => (copying.take(), std::mem::take(shape), *bytes),
        };
        let copying = copying.expect("a queued download has its copy until waited for");
        let synchronized = self.stream.synchronize();
        let mut data = HostBuffer::zeroed(bytes);
        // SAFETY: the stream is synchronized, so the copy into the staging
        // buffer (of at least `bytes`) is done and nothing writes it.
        unsafe { std::ptr::copy_nonoverlapping(copying.staging.host(), data.as_mut_ptr(), bytes) };
        copying.release();
        synchronized?;
        let host =
            HostTensor::from_buffer(T::DTYPE, &shape, data).map_err(|e| Error::InvalidTensor {
                shape: shape.clone(),
                reason: e.to_string(),
                device: self.stream.device().to_string(),
            })?;
        host.to_vec::<T>().map_err(|e| Error::InvalidTensor {
            shape,
            reason: e.to_string(),
            device: self.stream.device().to_string(),
        })
    }
}

/// A download dropped before it was waited for leaves its copy to the
/// stream, which releases it when synchronized.
impl<T: Element> Drop for Download<'_, T> {
    fn drop(&mut self) {
        if let State::Queued { copying, .. } = &mut self.state {
            if let Some(copying) = copying.take() {
                self.stream.queue_record(Queued::Copy(copying));
            }
        }
    }
}
