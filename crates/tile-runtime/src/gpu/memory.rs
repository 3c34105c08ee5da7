//! Device memory and the tensors in it: buffers the runtime allocated
//! (freed on drop) or memory another owner lends ([`Buffer::foreign`]),
//! and [`GpuTensor`], a layout over a buffer.
//!
//! Host copies of an existing buffer (reading a tensor back, writing into
//! it) first wait for the whole device, so they see every queued launch's
//! writes and no launch still reads what they overwrite, whichever stream
//! the launch was on; a new buffer is filled on the device's own stream,
//! which is synchronized before the tensor is handed out.

use super::backend::Pattern;
use super::Context;
use crate::error::Error;
use std::any::Any;
use std::sync::Arc;
use tile_ir::interp::{HostBuffer, HostTensor};
use tile_ir::DType;

/// Something that keeps foreign device memory alive while a tensor uses
/// it (an allocation of another library, an `Arc` of it).
pub type Owner = Arc<dyn Any + Send + Sync>;

/// Device memory.
#[derive(Debug)]
pub(crate) struct Buffer {
    pub(crate) context: Arc<Context>,
    /// The device address (0 for an empty buffer, which owns no memory).
    pub(crate) pointer: u64,
    pub(crate) bytes: usize,
    /// Who frees the memory: the runtime on drop, or another owner.
    lender: Option<Lender>,
}

/// The owner of foreign memory, if one was given.
struct Lender {
    _owner: Option<Owner>,
}

impl std::fmt::Debug for Lender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("foreign")
    }
}

impl Buffer {
    /// `bytes` of new device memory, not initialized.
    pub(crate) fn new(context: &Arc<Context>, bytes: usize) -> Result<Buffer, Error> {
        let pointer = if bytes == 0 {
            0
        } else {
            context.backend.alloc(bytes)?
        };
        Ok(Buffer {
            context: Arc::clone(context),
            pointer,
            bytes,
            lender: None,
        })
    }

    /// Memory another owner allocated, which the runtime never frees.
    ///
    /// # Safety
    ///
    /// `pointer` is device memory of `context`'s device holding `bytes`,
    /// valid for reads and writes by kernels until the buffer drops (the
    /// last tensor over it and the last launch using it are done).
    pub(crate) unsafe fn foreign(
        context: &Arc<Context>,
        pointer: u64,
        bytes: usize,
        owner: Option<Owner>,
    ) -> Buffer {
        Buffer {
            context: Arc::clone(context),
            pointer,
            bytes,
            lender: Some(Lender { _owner: owner }),
        }
    }

    /// New device memory holding `data`.
    pub(crate) fn upload(context: &Arc<Context>, data: &[u8]) -> Result<Buffer, Error> {
        let buffer = Buffer::new(context, data.len())?;
        buffer.write(data)?;
        Ok(buffer)
    }

    /// Copies `data` (at most the buffer's size) to the start of the buffer
    /// through the device's own stream, and waits for it.
    fn write(&self, data: &[u8]) -> Result<(), Error> {
        if data.is_empty() {
            return Ok(());
        }
        debug_assert!(data.len() <= self.bytes);
        let queue = self.context.own_stream();
        // SAFETY: `data` stays borrowed until the stream is synchronized
        // below; the buffer holds at least `data.len()` bytes.
        unsafe {
            self.context
                .backend
                .upload(self.pointer, data.as_ptr(), data.len(), queue)?;
        }
        self.context.backend.stream_synchronize(queue)
    }

    /// The buffer's bytes, once every queued launch has run.
    fn read(&self) -> Result<HostBuffer, Error> {
        let mut data = HostBuffer::zeroed(self.bytes);
        if self.bytes > 0 {
            self.context.backend.synchronize()?;
            let queue = self.context.own_stream();
            // SAFETY: `data` is exclusively borrowed until the stream is
            // synchronized below; the buffer holds `bytes`.
            unsafe {
                self.context.backend.download(
                    data.as_mut_ptr(),
                    self.pointer,
                    self.bytes,
                    queue,
                )?;
            }
            self.context.backend.stream_synchronize(queue)?;
        }
        Ok(data)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.bytes > 0 && self.lender.is_none() {
            if let Err(e) = self.context.backend.free(self.pointer) {
                tracing::warn!(device = %self.context, error = %e, "freeing device memory failed");
            }
        }
    }
}

/// A tensor in GPU memory: a buffer and the layout of the elements in it
/// (validated when made, so every reachable element lies inside the
/// buffer). Clones share the buffer until a kernel writes one of them,
/// which then gets its own copy.
#[derive(Clone, Debug)]
pub struct GpuTensor {
    pub(crate) buffer: Arc<Buffer>,
    /// One per tensor sharing `buffer`: what decides whether a write needs
    /// a copy (queued launches hold the buffer too, but they are not
    /// sharers: the stream orders them).
    sharers: Arc<()>,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<isize>,
    offset: usize,
}

impl GpuTensor {
    /// A tensor over `buffer` with the layout `layout` (a layout of `bytes`
    /// of `dtype` elements that `HostTensor` accepts).
    pub(crate) fn over(
        buffer: Buffer,
        dtype: DType,
        (shape, strides, offset): (&[usize], &[isize], usize),
    ) -> GpuTensor {
        GpuTensor {
            buffer: Arc::new(buffer),
            sharers: Arc::new(()),
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
        }
    }

    /// Copies a host tensor (its whole buffer, layout kept) to `context`.
    pub(crate) fn upload(context: &Arc<Context>, host: &HostTensor) -> Result<GpuTensor, Error> {
        let buffer = Buffer::upload(context, host.data())?;
        Ok(Self::over(
            buffer,
            host.dtype(),
            (host.shape(), host.strides(), host.offset()),
        ))
    }

    /// A row-major tensor of `shape` in new memory of `context`, zeroed on
    /// the device (no host buffer is made or copied).
    pub(crate) fn zeros(
        context: &Arc<Context>,
        dtype: DType,
        shape: &[usize],
    ) -> Result<GpuTensor, Error> {
        let elements: usize = shape.iter().product();
        let buffer = Buffer::new(context, elements * dtype.size_bytes())?;
        if buffer.bytes > 0 {
            let queue = context.own_stream();
            let zeros = Pattern::Bytes {
                value: 0,
                count: buffer.bytes,
            };
            context.backend.fill(buffer.pointer, zeros, queue)?;
            context.backend.stream_synchronize(queue)?;
        }
        let strides = row_major(shape);
        Ok(Self::over(buffer, dtype, (shape, &strides, 0)))
    }

    /// Copies the tensor back to the host.
    pub(crate) fn download(&self) -> Result<HostTensor, Error> {
        let data = self.buffer.read()?;
        HostTensor::from_buffer_with_strides(
            self.dtype,
            &self.shape,
            &self.strides,
            self.offset,
            data,
        )
        .map_err(|e| Error::InvalidTensor {
            shape: self.shape.clone(),
            reason: e.to_string(),
            device: self.device(),
        })
    }

    /// Overwrites the tensor's elements with `data`, its elements in
    /// row-major order (as many as the tensor has), in place: clones made
    /// before keep their values.
    pub(crate) fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        self.make_unique(self.buffer.context.own_stream())?;
        let size = self.dtype.size_bytes();
        let image = if self.strides == row_major(&self.shape) && data.len() == self.buffer.bytes {
            // No launch may still read what this overwrites.
            self.buffer.context.backend.synchronize()?;
            data.to_vec()
        } else if self.strides == row_major(&self.shape) {
            let start = self.offset * size;
            let mut image = self.buffer.read()?.to_vec();
            image[start..start + data.len()].copy_from_slice(data);
            image
        } else {
            // Scatter into the current contents, keeping what lies between
            // the elements.
            let mut image = self.buffer.read()?.to_vec();
            scatter(
                &mut image,
                data,
                (&self.shape, &self.strides, self.offset),
                size,
            );
            image
        };
        self.buffer.write(&image)
    }

    /// Sets every element to `element` (its bytes), in place: with a
    /// fill on the device when the tensor is row-major and a byte or word
    /// fill writes the value (every 1- and 4-byte value, 2- and 8-byte ones
    /// whose halves repeat), else through the host.
    pub(crate) fn fill(&mut self, element: &[u8]) -> Result<(), Error> {
        let elements: usize = self.shape.iter().product();
        let bytes = elements * element.len();
        let pattern = Pattern::of(element, bytes, self.base());
        if self.strides != row_major(&self.shape) || pattern.is_none() {
            let data: Vec<u8> = element.iter().copied().cycle().take(bytes).collect();
            return self.write(&data);
        }
        let context = Arc::clone(&self.buffer.context);
        self.make_unique(context.own_stream())?;
        if let Some(pattern) = pattern.filter(|_| bytes > 0) {
            // No launch may still read what this overwrites.
            context.backend.synchronize()?;
            let queue = context.own_stream();
            context.backend.fill(self.base(), pattern, queue)?;
            context.backend.stream_synchronize(queue)?;
        }
        Ok(())
    }

    /// The tensor's elements from `start` on along `axis`, `shape` in all:
    /// a clone over the same buffer (the layout stays inside it: `start`
    /// and the new extent lie within the old one).
    pub(crate) fn slice(&self, axis: usize, start: usize, shape: &[usize]) -> GpuTensor {
        let mut view = self.clone();
        let offset = self.offset as isize + start as isize * self.strides[axis];
        view.offset = usize::try_from(offset).unwrap_or(self.offset);
        view.shape = shape.to_vec();
        view
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The extents, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Where element `[0, .., 0]` lies in the tensor's buffer, in
    /// elements (the drivers align buffers to at least 256 bytes).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The device the tensor lives on, as `cuda:0`.
    pub fn device(&self) -> String {
        self.buffer.context.to_string()
    }

    /// The device address of element `[0, .., 0]`.
    pub fn device_ptr(&self) -> u64 {
        self.base()
    }

    /// The address of element `[0, .., 0]`.
    pub(crate) fn base(&self) -> u64 {
        self.buffer.pointer + (self.offset * self.dtype.size_bytes()) as u64
    }

    /// Gives the tensor a buffer of its own if a clone shares it, copied
    /// on `stream`.
    pub(crate) fn make_unique(&mut self, stream: super::backend::Raw) -> Result<(), Error> {
        if Arc::get_mut(&mut self.sharers).is_some() {
            return Ok(());
        }
        let context = &self.buffer.context;
        let copy = Buffer::new(context, self.buffer.bytes)?;
        if copy.bytes > 0 {
            context
                .backend
                .copy(copy.pointer, self.buffer.pointer, copy.bytes, stream)?;
        }
        self.buffer = Arc::new(copy);
        self.sharers = Arc::new(());
        Ok(())
    }
}

/// The strides of a row-major tensor of `shape`, in elements.
pub(crate) fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for (stride, &extent) in strides.iter_mut().zip(shape).rev() {
        *stride = step;
        step *= extent as isize;
    }
    strides
}

/// Writes `data`, elements of `size` bytes in row-major order, into
/// `image` at the offsets the layout `(shape, strides, offset)` gives
/// (validated: every element lies in `image`).
pub(crate) fn scatter(
    image: &mut [u8],
    data: &[u8],
    (shape, strides, offset): (&[usize], &[isize], usize),
    size: usize,
) {
    for (i, element) in data.chunks_exact(size).enumerate() {
        let mut rest = i;
        let mut at = offset as isize;
        for (&extent, &stride) in shape.iter().zip(strides).rev() {
            at += (rest % extent) as isize * stride;
            rest /= extent;
        }
        let at = at as usize * size;
        image[at..at + size].copy_from_slice(element);
    }
}
