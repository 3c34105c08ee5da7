//! CPU-device tensors past the huge-page threshold (`cpu/pages.rs`): every
//! way of making one keeps its values, whatever the dtype, the layout and an
//! odd size.

use half::f16;
use tile_ir::samples;
use tile_runtime::cpu::HUGE_PAGE_THRESHOLD;
use tile_runtime::{launch, Device, KernelSpec};

/// An element count whose `f32` buffer is past the threshold and not a
/// whole number of pages.
const N: usize = HUGE_PAGE_THRESHOLD / 4 + 12_345;

#[test]
fn large_tensors_round_trip_their_values() {
    let dev = Device::cpu();
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.25 - 7.0).collect();
    let x = dev.tensor_from_slice(&xs, &[N]).unwrap();
    assert_eq!(x.to_vec().unwrap(), xs);
    assert_eq!(x.clone().to_vec().unwrap(), xs);

    let z = dev.zeros::<f32>(&[3, N]).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&v| v == 0.0));

    // Other element sizes, each past the threshold in bytes.
    let hs: Vec<f16> = (0..2 * N)
        .map(|i| f16::from_f32((i % 2000) as f32))
        .collect();
    assert_eq!(
        dev.tensor_from_slice(&hs, &[2, N])
            .unwrap()
            .to_vec()
            .unwrap(),
        hs
    );
    let bytes: Vec<u8> = (0..4 * N + 3).map(|i| (i * 31 % 251) as u8).collect();
    let b = dev.tensor_from_slice(&bytes, &[4 * N + 3]).unwrap();
    assert_eq!(b.to_vec().unwrap(), bytes);
    let longs: Vec<i64> = (0..N as i64).map(|i| i * -0x1_0000_0001).collect();
    assert_eq!(
        dev.tensor_from_slice(&longs, &[N])
            .unwrap()
            .to_vec()
            .unwrap(),
        longs
    );
}

#[test]
fn a_large_column_major_view_reads_in_logical_order() {
    let dev = Device::cpu();
    let (m, n) = (1031, 1029);
    let buffer: Vec<f32> = (0..m * n).map(|k| k as f32).collect();
    let x = dev
        .tensor_with_strides(&buffer, &[m, n], &[1, m as isize], 0)
        .unwrap();
    let got = x.to_vec().unwrap();
    for i in (0..m).step_by(97) {
        for j in (0..n).step_by(89) {
            assert_eq!(got[i * n + j], buffer[j * m + i], "[{i}, {j}]");
        }
    }
    assert_eq!(got.len(), m * n);
    let mut sorted = got.clone();
    sorted.sort_by(f32::total_cmp);
    assert_eq!(sorted, buffer);
}

#[test]
fn a_kernel_writes_a_large_output_in_place() {
    let dev = Device::cpu();
    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..N).map(|i| 0.5 * i as f32).collect();
    let x = dev.tensor_from_slice(&xs, &[N]).unwrap();
    let y = dev.tensor_from_slice(&ys, &[N]).unwrap();
    let mut out = dev.zeros::<f32>(&[N]).unwrap();
    let ir = samples::vector_add(1024).unwrap().to_string();
    let kernel =
        KernelSpec::without_images("vector_add", "test", Box::leak(ir.into_boxed_str()), 4);
    let grid = [N.div_ceil(1024) as u32, 1, 1];
    launch(
        &dev,
        &kernel,
        grid,
        &mut [(&x).into(), (&y).into(), (&mut out).into()],
    )
    .unwrap();
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}
