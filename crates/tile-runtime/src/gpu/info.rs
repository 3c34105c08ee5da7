//! What a GPU is: found by [`crate::Device::enumerate`] without opening
//! it, and kept by an opened device ([`crate::Device::info`]).

use crate::driver::GpuApi;
use std::fmt;

/// A GPU's identity and properties, as its driver reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The API it is driven through.
    pub api: GpuApi,
    /// Its ordinal among that API's devices.
    pub ordinal: usize,
    /// The name the driver reports, e.g. `NVIDIA H200`.
    pub name: String,
    /// What its code is compiled for.
    pub arch: GpuArch,
    /// Streaming multiprocessors (CUDA) or compute units (HIP).
    pub multiprocessors: u32,
    /// Its memory in bytes.
    pub memory_bytes: u64,
    /// The multiprocessors' clock in kHz (0 where the API does not say).
    pub clock_khz: u32,
    /// The memory clock in kHz (0 where the API does not say).
    pub memory_clock_khz: u32,
    /// The memory bus width in bits (0 where the API does not say).
    pub memory_bus_bits: u32,
}

/// What a GPU's code is compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuArch {
    /// A CUDA device's compute capability.
    Cuda {
        /// The major number (9 for Hopper).
        major: u32,
        /// The minor number.
        minor: u32,
    },
    /// A HIP device's `gcnArchName`, e.g. `gfx942:sramecc+:xnack-`.
    Hip(String),
}

/// `sm_90` for compute capability 9.0; the `gfx` name without its feature
/// flags for HIP (`gfx942`).
impl fmt::Display for GpuArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuArch::Cuda { major, minor } => write!(f, "sm_{major}{minor}"),
            GpuArch::Hip(name) => f.write_str(name.split(':').next().unwrap_or(name)),
        }
    }
}

impl DeviceInfo {
    /// The device as `cuda:0` or `hip:1`.
    pub fn id(&self) -> String {
        let api = match self.api {
            GpuApi::Cuda => "cuda",
            GpuApi::Hip => "hip",
        };
        format!("{api}:{}", self.ordinal)
    }

    /// The peak memory bandwidth in bytes per second the clocks imply
    /// (double data rate), or `None` where the API does not say.
    pub fn peak_bandwidth(&self) -> Option<f64> {
        (self.memory_clock_khz > 0 && self.memory_bus_bits > 0).then(|| {
            2.0 * f64::from(self.memory_clock_khz) * 1e3 * f64::from(self.memory_bus_bits) / 8.0
        })
    }
}

/// `cuda:0 NVIDIA H200 (sm_90, 132 SMs, 141 GiB)`.
impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = match self.api {
            GpuApi::Cuda => "SMs",
            GpuApi::Hip => "CUs",
        };
        write!(
            f,
            "{} {} ({}, {} {units}, {} GiB)",
            self.id(),
            self.name,
            self.arch,
            self.multiprocessors,
            self.memory_bytes >> 30
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_describe_themselves_in_one_line() {
        let h200 = DeviceInfo {
            api: GpuApi::Cuda,
            ordinal: 0,
            name: "NVIDIA H200".into(),
            arch: GpuArch::Cuda { major: 9, minor: 0 },
            multiprocessors: 132,
            memory_bytes: 141 << 30,
            clock_khz: 1_980_000,
            memory_clock_khz: 2_619_000,
            memory_bus_bits: 6144,
        };
        assert_eq!(
            h200.to_string(),
            "cuda:0 NVIDIA H200 (sm_90, 132 SMs, 141 GiB)"
        );
        assert_eq!(h200.peak_bandwidth(), Some(4_022_784_000_000.0));
        let mi300 = DeviceInfo {
            api: GpuApi::Hip,
            arch: GpuArch::Hip("gfx942:sramecc+:xnack-".into()),
            memory_clock_khz: 0,
            ..h200
        };
        assert_eq!(mi300.arch.to_string(), "gfx942");
        assert_eq!(mi300.peak_bandwidth(), None);
    }
}
