//! Tensors on a device.

use crate::error::Error;
use crate::gpu::GpuTensor;
use std::marker::PhantomData;
use tile_ir::interp::{Element, HostTensor};
use tile_tensor::descriptor::{StrideOrder, TensorDescriptor};

/// A tensor of elements `T` on a device.
#[derive(Clone, Debug)]
pub struct Tensor<T: Element> {
    pub(crate) storage: Storage,
    element: PhantomData<T>,
}

/// Where a tensor's elements are.
#[derive(Debug)]
pub(crate) enum Storage {
    /// In host memory (the CPU device).
    Host(HostTensor),
    /// In a GPU's memory.
    Gpu(GpuTensor),
}

/// A host tensor's clone gets a buffer of its own, made as the CPU device
/// makes one (advised for huge pages when large, before the copy writes it);
/// a GPU tensor's clone shares the buffer until a launch writes one of them.
impl Clone for Storage {
    fn clone(&self) -> Self {
        match self {
            Storage::Host(h) => {
                let mut buffer = crate::cpu::pages::huge_page_buffer(h.data().len());
                buffer.copy_from_slice(h.data());
                Storage::Host(
                    HostTensor::from_buffer_with_strides(
                        h.dtype(),
                        h.shape(),
                        h.strides(),
                        h.offset(),
                        buffer,
                    )
                    .expect("a copy of a valid layout is valid"),
                )
            }
            Storage::Gpu(g) => Storage::Gpu(g.clone()),
        }
    }
}

impl<T: Element> Tensor<T> {
    pub(crate) fn new(storage: Storage) -> Self {
        Tensor {
            storage,
            element: PhantomData,
        }
    }

    /// The extents, outermost first.
    pub fn shape(&self) -> &[usize] {
        match &self.storage {
            Storage::Host(h) => h.shape(),
            Storage::Gpu(g) => g.shape(),
        }
    }

    /// The strides in elements (row-major unless made by
    /// [`crate::Device::tensor_with_strides`]).
    pub fn strides(&self) -> &[isize] {
        match &self.storage {
            Storage::Host(h) => h.strides(),
            Storage::Gpu(g) => g.strides(),
        }
    }

    /// The tensor's layout as Composable Kernel's descriptor: its lengths
    /// and strides (`tile_tensor::descriptor`, explicit strides), from which
    /// [`TensorDescriptor::element_space_size`] and offsets follow. A layout
    /// CK cannot describe (a negative stride, made by
    /// [`crate::Device::tensor_with_strides`]) is an
    /// [`Error::InvalidTensor`] naming the shape, the reason and the device.
    pub fn descriptor(&self) -> Result<TensorDescriptor, Error> {
        let strides: Vec<i64> = self.strides().iter().map(|&s| s as i64).collect();
        TensorDescriptor::with_strides(self.shape(), &strides, StrideOrder::Bypass).map_err(|e| {
            Error::InvalidTensor {
                shape: self.shape().to_vec(),
                reason: format!("no CK descriptor for strides {:?}: {e}", self.strides()),
                device: self.device(),
            }
        })
    }

    /// The device the tensor lives on, as `cpu` or `cuda:0`.
    pub fn device(&self) -> String {
        match &self.storage {
            Storage::Host(_) => "cpu".into(),
            Storage::Gpu(g) => g.device(),
        }
    }

    /// The tensor as an `ndarray` array (row-major), copied to the host.
    #[cfg(feature = "ndarray")]
    pub fn to_ndarray(&self) -> Result<ndarray::ArrayD<T>, Error> {
        let data = self.to_vec()?;
        ndarray::ArrayD::from_shape_vec(self.shape(), data).map_err(|e| Error::InvalidTensor {
            shape: self.shape().to_vec(),
            reason: e.to_string(),
            device: self.device(),
        })
    }

    /// Overwrites the tensor's elements with `data`, in row-major order,
    /// in place (no new memory; on a GPU, once every queued launch on the
    /// device is done). `data` must hold one value per element
    /// ([`Error::DataLength`]); clones made before keep their values.
    pub fn copy_from_slice(&mut self, data: &[T]) -> Result<(), Error> {
        let expected: usize = self.shape().iter().product();
        if data.len() != expected {
            return Err(Error::DataLength {
                shape: self.shape().to_vec(),
                expected,
                found: data.len(),
                device: self.device(),
            });
        }
        let mut bytes = vec![0u8; data.len() * T::DTYPE.size_bytes()];
        T::write_le_slice(data, &mut bytes);
        match &mut self.storage {
            Storage::Gpu(g) => g.write(&bytes),
            Storage::Host(h) => {
                let layout = (h.shape().to_vec(), h.strides().to_vec(), h.offset());
                let size = h.dtype().size_bytes();
                crate::gpu::scatter(h.data_mut(), &bytes, (&layout.0, &layout.1, layout.2), size);
                Ok(())
            }
        }
    }

    /// Sets every element to `value`, in place: on a GPU a fill queued on
    /// the device (once every queued launch is done) where one writes the
    /// value's bytes, which holds for every row-major tensor of 1- or
    /// 4-byte elements; otherwise through the host. Clones made before
    /// keep their values.
    pub fn fill(&mut self, value: T) -> Result<(), Error> {
        let mut element = vec![0u8; T::DTYPE.size_bytes()];
        T::write_le_slice(&[value], &mut element);
        match &mut self.storage {
            Storage::Gpu(g) => g.fill(&element),
            Storage::Host(_) => {
                let n: usize = self.shape().iter().product();
                self.copy_from_slice(&vec![value; n])
            }
        }
    }

    /// The elements `range` along `axis`, as a tensor over the same memory
    /// (no copy): its extent along `axis` is the range's length and its
    /// first element the range's start. As with a clone, a launch that
    /// writes the slice or the tensor gives the written one its own copy
    /// first, so neither sees the other's later writes. An axis or range
    /// outside the shape is [`Error::InvalidTensor`].
    pub fn slice(&self, axis: usize, range: std::ops::Range<usize>) -> Result<Tensor<T>, Error> {
        let shape = self.shape();
        let invalid = |reason: String| Error::InvalidTensor {
            shape: shape.to_vec(),
            reason,
            device: self.device(),
        };
        let extent = *shape
            .get(axis)
            .ok_or_else(|| invalid(format!("no axis {axis} to slice")))?;
        if range.start > range.end || range.end > extent {
            return Err(invalid(format!(
                "the range {range:?} of axis {axis} is not within 0..{extent}"
            )));
        }
        let mut sliced = shape.to_vec();
        sliced[axis] = range.len();
        let strides = self.strides().to_vec();
        let storage = match &self.storage {
            Storage::Gpu(g) => Storage::Gpu(g.slice(axis, range.start, &sliced)),
            Storage::Host(h) => {
                let shift = range.start as isize * strides[axis];
                let offset = usize::try_from(h.offset() as isize + shift)
                    .map_err(|_| invalid("the slice starts before the buffer".into()))?;
                let mut buffer = crate::cpu::pages::huge_page_buffer(h.data().len());
                buffer.copy_from_slice(h.data());
                Storage::Host(
                    HostTensor::from_buffer_with_strides(
                        h.dtype(),
                        &sliced,
                        &strides,
                        offset,
                        buffer,
                    )
                    .map_err(|e| invalid(e.to_string()))?,
                )
            }
        };
        Ok(Tensor::new(storage))
    }

    /// The elements in row-major order, copied to the host.
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        let downloaded;
        let host = match &self.storage {
            Storage::Host(h) => h,
            Storage::Gpu(g) => {
                downloaded = g.download()?;
                &downloaded
            }
        };
        host.to_vec::<T>().map_err(|e| Error::InvalidTensor {
            shape: host.shape().to_vec(),
            reason: e.to_string(),
            device: self.device(),
        })
    }
}
