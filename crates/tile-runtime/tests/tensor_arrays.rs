//! Tensor arrays as launch arguments on the CPU device: a grouped matmul
//! over slices of tensors of different sizes, and the launch errors that
//! name the array and the tensor in it.

use tile_ir::samples;
use tile_ir::DType;
use tile_runtime::{launch, Device, KernelSpec, LaunchArg, Tensor};

fn grouped_matmul() -> KernelSpec {
    let ir = samples::grouped_matmul(16, 16, 8, DType::F32)
        .unwrap()
        .to_string();
    KernelSpec::without_images("grouped_matmul", "test", Box::leak(ir.into_boxed_str()), 4)
}

/// A `rows × cols` matrix of small integers, different per `seed`.
fn matrix(rows: usize, cols: usize, seed: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|i| ((i * 5 + seed) % 7) as f32 - 3.0)
        .collect()
}

#[test]
fn a_grouped_matmul_over_slices_of_tensors() {
    let dev = Device::cpu();
    let problems = [(20, 9, 12), (5, 33, 30), (1, 1, 1)];
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c: Vec<Tensor<f32>> = Vec::new();
    for (g, &(m, n, k)) in problems.iter().enumerate() {
        a.push(dev.tensor_from_slice(&matrix(m, k, g), &[m, k]).unwrap());
        b.push(
            dev.tensor_from_slice(&matrix(k, n, g + 3), &[k, n])
                .unwrap(),
        );
        c.push(dev.zeros::<f32>(&[m, n]).unwrap());
    }
    let mut args = [
        LaunchArg::from(&a[..]),
        LaunchArg::from(&b[..]),
        LaunchArg::from(&mut c[..]),
    ];
    launch(&dev, &grouped_matmul(), [2, 3, 3], &mut args).unwrap();
    drop(args);
    for (g, &(m, n, k)) in problems.iter().enumerate() {
        let (x, y) = (matrix(m, k, g), matrix(k, n, g + 3));
        let want: Vec<f32> = (0..m * n)
            .map(|e| (0..k).map(|l| x[e / n * k + l] * y[l * n + e % n]).sum())
            .collect();
        assert_eq!(c[g].to_vec().unwrap(), want, "problem {g}");
    }
}

#[test]
fn launch_errors_name_the_array_and_its_tensor() {
    let dev = Device::cpu();
    let a = [dev.zeros::<f32>(&[4, 4]).unwrap()];
    let b = [dev.zeros::<f32>(&[4, 4]).unwrap()];
    let c = [dev.zeros::<f32>(&[4, 4]).unwrap()];
    let err = launch(
        &dev,
        &grouped_matmul(),
        [1, 1, 1],
        &mut [(&a[..]).into(), (&b[..]).into(), (&c[..]).into()],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `grouped_matmul`, argument `c` on device cpu: expected &mut tensors<f32, 2> (the kernel writes it), found [&tensor<f32, 2>]"
    );
    let mut c = [
        dev.zeros::<f32>(&[4, 4]).unwrap(),
        dev.zeros::<f32>(&[4]).unwrap(),
    ];
    let err = launch(
        &dev,
        &grouped_matmul(),
        [1, 1, 1],
        &mut [(&a[..]).into(), (&b[..]).into(), (&mut c[..]).into()],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `grouped_matmul`, argument `c` on device cpu: expected &mut tensors<f32, 2> (the kernel writes it), found [&mut tensor<f32, 2>, &mut tensor<f32, 1>]"
    );
}

#[test]
fn every_tensor_of_an_aligned_array_is_checked() {
    let ir = "\
kernel @first(%xs: tensors<f32, 1, aligned>, %out: tensor<f32, 1>) {
  %0 = constant 0 : i32
  %1 = get_tensor %xs[%0] : tensor<f32, 1, aligned>
  %2 = partition_view %1 [4] : view<f32, [4]>
  %3 = load %2[%0] : tile<4xf32>
  %4 = partition_view %out [4] : view<f32, [4]>
  store %3, %4[%0]
}";
    let spec = KernelSpec::without_images("first", "test", ir, 4);
    let dev = Device::cpu();
    let xs = [
        dev.tensor_from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])
            .unwrap(),
        dev.zeros::<f32>(&[6]).unwrap(),
    ];
    let mut out = dev.zeros::<f32>(&[4]).unwrap();
    let err = launch(
        &dev,
        &spec,
        [1, 1, 1],
        &mut [(&xs[..]).into(), (&mut out).into()],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `first`, argument `xs` on device cpu: expected tensor<f32, 1, aligned> (contiguous rows, and its start, row strides and row length multiples of 16 bytes), found tensor 1 of shape [6] and strides [1]: its rows are 6 elements (24 bytes), not a multiple of 16 bytes"
    );
    launch(
        &dev,
        &spec,
        [1, 1, 1],
        &mut [(&xs[..1]).into(), (&mut out).into()],
    )
    .unwrap();
    assert_eq!(out.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0]);
}
