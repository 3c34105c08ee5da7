//! Devices: where tensors live and kernels run.

use crate::error::Error;
use crate::kernel::ModuleCache;
use crate::tensor::Tensor;
use std::fmt;
use tile_ir::interp::{Element, HostTensor};

/// The kind of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// The host CPU. Kernels run through the tile IR's reference interpreter
    /// until the host back end lands.
    Cpu,
}

/// A device with its module cache (each kernel specialization is loaded
/// once per device).
#[derive(Debug)]
pub struct Device {
    kind: DeviceKind,
    pub(crate) modules: ModuleCache,
}

impl Device {
    /// The host CPU.
    pub fn cpu() -> Device {
        Device {
            kind: DeviceKind::Cpu,
            modules: ModuleCache::default(),
        }
    }

    /// The best device this build supports on this machine. The CPU is the
    /// only device kind so far, so this is [`Device::cpu`].
    pub fn best() -> Result<Device, Error> {
        Ok(Device::cpu())
    }

    /// The kind of this device.
    pub fn kind(&self) -> DeviceKind {
        self.kind
    }

    /// A tensor of `shape` (row-major) holding `data`.
    pub fn tensor_from_slice<T: Element>(
        &self,
        data: &[T],
        shape: &[usize],
    ) -> Result<Tensor<T>, Error> {
        let expected = numel(shape, self)?;
        if data.len() != expected {
            return Err(Error::DataLength {
                shape: shape.to_vec(),
                expected,
                found: data.len(),
                device: self.to_string(),
            });
        }
        let host = HostTensor::from_vec(shape, data.to_vec())
            .map_err(|e| self.invalid(shape, e.to_string()))?;
        Ok(Tensor::new(host))
    }

    /// A tensor of `shape` (row-major) filled with zeros.
    pub fn zeros<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>, Error> {
        numel(shape, self)?;
        Ok(Tensor::new(HostTensor::zeros(T::DTYPE, shape)))
    }

    fn invalid(&self, shape: &[usize], reason: String) -> Error {
        Error::InvalidTensor {
            shape: shape.to_vec(),
            reason,
            device: self.to_string(),
        }
    }
}

/// The number of elements of `shape`, or an error for a shape a kernel
/// cannot take (no axes, or more than `i32::MAX` along an axis).
fn numel(shape: &[usize], device: &Device) -> Result<usize, Error> {
    if shape.is_empty() {
        return Err(device.invalid(shape, "a tensor needs at least one axis".into()));
    }
    if let Some(axis) = shape.iter().position(|&d| d > i32::MAX as usize) {
        return Err(device.invalid(
            shape,
            format!(
                "axis {axis} exceeds the largest extent a kernel indexes, {}",
                i32::MAX
            ),
        ));
    }
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| device.invalid(shape, "the number of elements overflows".into()))
}

/// Devices print as `cpu`.
impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            DeviceKind::Cpu => f.pad("cpu"),
        }
    }
}
