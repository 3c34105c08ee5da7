//! `device_assert!` in kernels on the CPU device and in the interpreter: a
//! true condition costs nothing visible, a false one fails the launch with
//! the kernel, the program, the Rust line and the formatted message, and
//! stops the stream it ran on.

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Error, Tensor};

#[tile_kernel(configs(B = 16))]
fn bounded_copy<const B: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>, limit: f32, tag: u8) {
    let pid = program_id(0);
    device_assert!(limit > 0.0, "the limit {limit} is not positive");
    let t = partition_view(x, [B]).load(pid);
    device_assert!(
        t < limit,
        "program {} holds {} (tag {tag:?})",
        pid,
        t.max_along(0)
    );
    partition_view(y, [B]).store(t, pid);
}

/// The assertion's message and where it stands in this file.
const ELEMENT_LINE: u32 = 14;

fn input(bad: Option<usize>) -> Vec<f32> {
    let mut x: Vec<f32> = (0..64).map(|i| (i % 5) as f32).collect();
    if let Some(i) = bad {
        x[i] = 7.25;
    }
    x
}

#[test]
fn a_true_assertion_lets_the_kernel_run() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&input(None), &[64]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[64]).unwrap();
    bounded_copy::<16>::launch(&dev, [4], (&x, &mut y, 5.0, 9)).unwrap();
    assert_eq!(y.to_vec().unwrap(), input(None));
}

#[test]
fn a_false_element_fails_with_the_program_line_and_message() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&input(Some(37)), &[64]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[64]).unwrap();
    let err = bounded_copy::<16>::launch(&dev, [4], (&x, &mut y, 5.0, 9)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("kernel `bounded_copy` failed on device cpu: program (2, 0, 0): `device_assert!(..)` at tests/device_assert.rs:"),
        "{text}"
    );
    assert!(text.contains(&format!(":{ELEMENT_LINE}:")), "{text}");
    assert!(
        text.ends_with("assertion failed: program 2 holds 7.25 (tag 9)"),
        "{text}"
    );
    // The interpreter says the same, and which element failed.
    let mut y = HostTensor::zeros(tile::ir::DType::F32, &[64]);
    let x = HostTensor::from_vec(&[64], input(Some(37))).unwrap();
    let err = bounded_copy::<16>::interpret([4], (&x, &mut y, 5.0, 9)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("assertion failed at element [5]: program 2 holds 7.25 (tag 9)"),
        "{err}"
    );
}

#[test]
fn a_false_scalar_condition_formats_a_captured_variable() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&input(None), &[64]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[64]).unwrap();
    let err = bounded_copy::<16>::launch(&dev, [4], (&x, &mut y, -0.5, 9)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("assertion failed: the limit -0.5 is not positive"),
        "{err}"
    );
    // Program 0 fails first, before its store.
    assert_eq!(y.to_vec().unwrap()[..16], [0.0; 16]);
}

#[test]
fn a_failed_assertion_stops_its_stream() {
    let dev = Device::cpu();
    let stream = dev.stream().unwrap();
    let x = dev.tensor_from_slice(&input(Some(3)), &[64]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[64]).unwrap();
    let first = bounded_copy::<16>::launch_on(&stream, [4], (&x, &mut y, 5.0, 1)).unwrap_err();
    let good = dev.tensor_from_slice(&input(None), &[64]).unwrap();
    let mut z: Tensor<f32> = dev.zeros(&[64]).unwrap();
    let err = bounded_copy::<16>::launch_on(&stream, [4], (&good, &mut z, 5.0, 1)).unwrap_err();
    assert!(matches!(err, Error::StreamFailed { .. }), "{err:?}");
    assert!(err.to_string().contains(&first.to_string()), "{err}");
    assert_eq!(z.to_vec().unwrap(), [0.0; 64]);
    // Other streams, and plain launches, go on.
    bounded_copy::<16>::launch(&dev, [4], (&good, &mut z, 5.0, 1)).unwrap();
    assert_eq!(z.to_vec().unwrap(), input(None));
}
