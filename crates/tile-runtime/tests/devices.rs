//! Asking for GPUs on a machine without them: clean, typed errors naming the
//! API, the libraries tried and why, never a panic; `Device::best` falls
//! back to the CPU. (On a machine with a driver the tests say they were
//! skipped.)

use tile_runtime::driver::GpuApi;
use tile_runtime::{Device, DeviceKind, Error};

fn expect_no_gpu(api: GpuApi, result: Result<Device, Error>) {
    match result {
        Err(Error::NoDriver {
            api: name,
            tried,
            reason,
        }) => {
            assert_eq!(name, api.name());
            assert_eq!(tried, api.libraries().join(", "));
            assert!(!reason.is_empty());
            let message = Error::NoDriver {
                api: name,
                tried: tried.clone(),
                reason: reason.clone(),
            }
            .to_string();
            assert!(
                message.starts_with(&format!(
                    "no {} driver: none of {tried} could be loaded (",
                    api.name()
                )),
                "{message}"
            );
        }
        Ok(_) | Err(Error::NoDevice { .. } | Error::DriverCall { .. }) => {
            println!("skipped: this machine has a {} driver", api.name());
        }
        other => panic!("unexpected result for {}: {other:?}", api.name()),
    }
}

#[test]
fn cuda_without_a_driver_is_a_clean_error() {
    expect_no_gpu(GpuApi::Cuda, Device::cuda(0));
}

#[test]
fn hip_without_a_runtime_is_a_clean_error() {
    expect_no_gpu(GpuApi::Hip, Device::hip(0));
}

#[test]
fn the_best_device_without_gpus_is_the_cpu() {
    let device = Device::best().expect("the CPU is always there");
    if device.kind() != DeviceKind::Cpu {
        println!("skipped: this machine has a GPU, {device}");
        return;
    }
    assert_eq!(device.to_string(), "cpu");
    device
        .synchronize()
        .expect("the CPU has nothing to wait for");
}

#[test]
fn gpu_errors_read_well() {
    let no_device = Error::NoDevice {
        api: "CUDA",
        ordinal: 2,
        available: 1,
    };
    assert_eq!(
        no_device.to_string(),
        "no CUDA device 2: the driver reports 1 device(s)"
    );
    let call = Error::DriverCall {
        api: "HIP",
        call: "initialization".into(),
        code: 100,
        name: "hipErrorNoDevice",
    };
    assert_eq!(
        call.to_string(),
        "HIP driver call failed while initialization: hipErrorNoDevice (100)"
    );
}
