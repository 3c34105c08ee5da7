//! Tensors on a device.

use crate::error::Error;
use std::marker::PhantomData;
use tile_ir::interp::{Element, HostTensor};

/// A tensor of elements `T` on a device.
#[derive(Clone, Debug)]
pub struct Tensor<T: Element> {
    pub(crate) host: HostTensor,
    element: PhantomData<T>,
}

impl<T: Element> Tensor<T> {
    pub(crate) fn new(host: HostTensor) -> Self {
        Tensor {
            host,
            element: PhantomData,
        }
    }

    /// The extents, outermost first.
    pub fn shape(&self) -> &[usize] {
        self.host.shape()
    }

    /// The strides in elements (row-major unless made by
    /// [`crate::Device::tensor_with_strides`]).
    pub fn strides(&self) -> &[isize] {
        self.host.strides()
    }

    /// The tensor as an `ndarray` array (row-major), copied to the host.
    #[cfg(feature = "ndarray")]
    pub fn to_ndarray(&self) -> Result<ndarray::ArrayD<T>, Error> {
        let data = self.to_vec()?;
        ndarray::ArrayD::from_shape_vec(self.shape(), data).map_err(|e| Error::InvalidTensor {
            shape: self.shape().to_vec(),
            reason: e.to_string(),
            device: "cpu".into(),
        })
    }

    /// The elements in row-major order, copied to the host.
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        self.host.to_vec::<T>().map_err(|e| Error::InvalidTensor {
            shape: self.host.shape().to_vec(),
            reason: e.to_string(),
            device: "cpu".into(),
        })
    }
}
