//! A CUDA device before it is opened: its handle from its ordinal, its
//! attributes, and the properties `Device::enumerate` reports.

use super::sys::{attribute, Api, CuDevice};
use super::{check, initialized};
use crate::driver::GpuApi;
use crate::error::Error;
use crate::gpu::info::{DeviceInfo, GpuArch};
use std::ffi::{c_char, c_int};

/// Reads the properties of device `ordinal` without creating a context.
pub(crate) fn describe(ordinal: usize) -> Result<DeviceInfo, Error> {
    let api = initialized()?;
    let device = device_of(api, ordinal)?;
    properties(api, device, ordinal)
}

/// The `CUdevice` of `ordinal`, or [`Error::NoDevice`].
pub(super) fn device_of(api: &Api, ordinal: usize) -> Result<CuDevice, Error> {
    let mut count: c_int = 0;
    // SAFETY: the out-pointer is a valid `int`.
    check("counting devices", unsafe {
        (api.device_count)(&mut count)
    })?;
    let available = usize::try_from(count).unwrap_or(0);
    let index = c_int::try_from(ordinal)
        .ok()
        .filter(|_| ordinal < available)
        .ok_or(Error::NoDevice {
            api: "CUDA",
            ordinal,
            available,
        })?;
    let mut device: CuDevice = 0;
    // SAFETY: the out-pointer is valid; `index` is below the count.
    check("getting the device", unsafe {
        (api.device_get)(&mut device, index)
    })?;
    Ok(device)
}

pub(super) fn attribute(api: &Api, device: CuDevice, which: c_int) -> Result<u32, Error> {
    let mut value: c_int = 0;
    // SAFETY: `device` is a valid handle from `cuDeviceGet`; the
    // out-pointer is a valid `int`.
    check("reading the device's attributes", unsafe {
        (api.device_attribute)(&mut value, which, device)
    })?;
    Ok(value.max(0) as u32)
}

/// The name, compute capability, multiprocessors, memory and clocks of
/// `device`.
pub(super) fn properties(api: &Api, device: CuDevice, ordinal: usize) -> Result<DeviceInfo, Error> {
    let mut buffer = [0 as c_char; 256];
    // SAFETY: the buffer holds `len` bytes, which the call NUL-terminates.
    check("naming the device", unsafe {
        (api.device_name)(buffer.as_mut_ptr(), buffer.len() as c_int, device)
    })?;
    let bytes: Vec<u8> = buffer
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let mut memory = 0usize;
    // SAFETY: the out-pointer is a valid `size_t`.
    check("reading the device's memory", unsafe {
        (api.device_total_mem)(&mut memory, device)
    })?;
    let read = |which| attribute(api, device, which);
    let major = read(attribute::CAPABILITY_MAJOR)?;
    let minor = read(attribute::CAPABILITY_MINOR)?;
    Ok(DeviceInfo {
        api: GpuApi::Cuda,
        ordinal,
        name: String::from_utf8_lossy(&bytes).into_owned(),
        arch: GpuArch::Cuda { major, minor },
        multiprocessors: read(attribute::MULTIPROCESSORS)?.max(1),
        memory_bytes: memory as u64,
        clock_khz: read(attribute::CLOCK_RATE_KHZ)?,
        memory_clock_khz: read(attribute::MEMORY_CLOCK_KHZ)?,
        memory_bus_bits: read(attribute::MEMORY_BUS_BITS)?,
    })
}
