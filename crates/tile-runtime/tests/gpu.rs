//! Launching on a real GPU. This machine has none: each test finds no
//! driver and prints that it was skipped. On a machine with a CUDA driver,
//! vector add runs from the PTX the emitter's snapshot test pins (sm_80,
//! four warps), and a host tensor passed to it is refused before the launch.

use tile_ir::samples;
use tile_runtime::{launch, Device, Error, Image, ImageKind, KernelSpec};

/// The sm_80 PTX of `samples::vector_add(1024)`, without the snapshot's header.
fn vector_add_ptx() -> &'static [u8] {
    let snapshot = include_str!(
        "../../tile-codegen/tests/snapshots/emit_snapshots__vector_add.sm_80.ptx.snap"
    );
    let body = snapshot
        .splitn(3, "---\n")
        .nth(2)
        .expect("an insta snapshot has a header between two `---` lines");
    body.as_bytes()
}

fn vector_add(images: &'static [Image]) -> KernelSpec {
    let ir = samples::vector_add(1024).unwrap().to_string();
    // SAFETY: the images are the emitter's snapshot of this very IR
    // (`vector_add(1024)` lowered with four warps), whose bounds checks are
    // all proven away.
    unsafe {
        KernelSpec::new(
            "vector_add",
            "BLOCK=1024",
            Box::leak(ir.into_boxed_str()),
            4,
            images,
            &[],
            &[],
        )
    }
}

/// The device, or `None` (after saying so) when this machine has none.
fn gpu(device: Result<Device, Error>, api: &str) -> Option<Device> {
    match device {
        Ok(device) => Some(device),
        // No library, no device, or a driver that finds no usable GPU
        // (`cuInit` failing with CUDA_ERROR_NO_DEVICE, as in containers).
        Err(e @ (Error::NoDriver { .. } | Error::NoDevice { .. } | Error::DriverCall { .. })) => {
            println!("skipped: no {api} device ({e})");
            None
        }
        Err(e) => panic!("{api} device 0 was found but did not open: {e}"),
    }
}

#[test]
fn vector_add_on_cuda() {
    let Some(dev) = gpu(Device::cuda(0), "CUDA") else {
        return;
    };
    let images: &'static [Image] = Box::leak(Box::new([Image {
        kind: ImageKind::Ptx,
        target: "sm_80",
        bytes: vector_add_ptx(),
        shared_memory_bytes: 0,
        block_threads: 128,
    }]));
    let kernel = vector_add(images);
    let n = 5000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..n).map(|i| 0.25 * i as f32).collect();
    let x = dev.tensor_from_slice(&xs, &[n]).unwrap();
    let y = dev.tensor_from_slice(&ys, &[n]).unwrap();
    let mut out = dev.zeros::<f32>(&[n]).unwrap();
    let grid = [n.div_ceil(1024) as u32, 1, 1];
    let result = launch(
        &dev,
        &kernel,
        grid,
        &mut [(&x).into(), (&y).into(), (&mut out).into()],
    );
    match result {
        // A device below sm_80 has no image: the error lists the target.
        Err(Error::NoImage { compiled, .. }) => assert_eq!(compiled, "sm_80"),
        other => {
            other.unwrap();
            dev.synchronize().unwrap();
            let want: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
            assert_eq!(out.to_vec().unwrap(), want);
            // A host tensor is refused before anything runs.
            let host = Device::cpu().tensor_from_slice(&xs, &[n]).unwrap();
            let refused = launch(
                &dev,
                &kernel,
                grid,
                &mut [(&host).into(), (&y).into(), (&mut out).into()],
            );
            assert!(
                matches!(refused, Err(Error::WrongDevice { ref argument, .. }) if argument == "x"),
                "{refused:?}"
            );
        }
    }
}

#[test]
fn hip_without_an_image_lists_the_compiled_targets() {
    let Some(dev) = gpu(Device::hip(0), "HIP") else {
        return;
    };
    let kernel = vector_add(&[]);
    let x = dev.tensor_from_slice(&[1.0f32; 4], &[4]).unwrap();
    let mut out = dev.zeros::<f32>(&[4]).unwrap();
    let err = launch(
        &dev,
        &kernel,
        [1, 1, 1],
        &mut [(&x).into(), (&x).into(), (&mut out).into()],
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::NoImage { ref compiled, .. } if compiled == "none"),
        "{err}"
    );
    assert_eq!(out.to_vec().unwrap(), [0.0f32; 4]);
}
