//! Finding the machine's GPUs without opening them: how many each API
//! reports, and what each is.

use crate::device::Device;
use crate::driver::GpuApi;
use crate::error::Error;
use crate::gpu::{self, DeviceInfo};

impl Device {
    /// The number of GPUs `api`'s driver reports: [`Error::NoDriver`]
    /// without the driver (one line naming the libraries looked for).
    pub fn count(api: GpuApi) -> Result<usize, Error> {
        crate::driver::count(api)
    }

    /// Every GPU of every API on this machine, CUDA's first, with its
    /// properties; an API without a driver contributes none (logged at
    /// info level, as is a device whose properties cannot be read).
    pub fn enumerate() -> Vec<DeviceInfo> {
        let mut found = Vec::new();
        for api in [GpuApi::Cuda, GpuApi::Hip] {
            match gpu::enumerate(api) {
                Ok(devices) => found.extend(devices),
                Err(why) => tracing::info!(reason = %why, "no {} devices", api.name()),
            }
        }
        found
    }

    /// What this GPU is (`None` for the CPU).
    pub fn info(&self) -> Option<&DeviceInfo> {
        self.gpu.as_ref().map(|context| context.info())
    }
}
