//! Mojo `LayoutTensor`'s `fill` and `copy_from` on layout views, on the CPU
//! device and in the interpreter, against plain Rust: `fill` sets every
//! element of a view, `copy_from` copies element `i` to element `i` in
//! CuTe's colexicographic order, between views of different shapes and
//! strides.

use tile::ir::interp::HostTensor;
use tile::ir::DType;
use tile::{tile_kernel, Device, Tensor};

/// Rows `2p` and `2p + 1` of `out` (`M × N`, row-major) set to `value`.
#[tile_kernel(configs(M = 8, N = 4))]
fn fill_rows<const M: usize, const N: usize>(out: &mut Tensor<f32, 2>, value: f32) {
    let pid = program_id(0);
    layout_view(out, (M, N), (N, 1))
        .tile([2, N], pid, 0)
        .fill(value);
}

/// `y` (a `3 × 2` row-major view) from `x` (a `2 × 3` row-major view),
/// element `i` to element `i` in colexicographic order; and the first
/// column of `z` from `x`'s first row, through views of one shape and
/// other strides.
#[tile_kernel]
fn reshaping_copy(x: &Tensor<i32>, y: &mut Tensor<i32>, z: &mut Tensor<i32>) {
    layout_view(y, (3, 2), (2, 1)).copy_from(layout_view(x, (2, 3), (3, 1)));
    layout_view(z, (3,), (4,)).copy_from(layout_view(x, (3,), (1,)));
}

#[test]
fn fill_sets_every_element_of_the_view() {
    let dev = Device::cpu();
    let mut out: Tensor<f32> = dev.tensor_from_slice(&[-1.0f32; 32], &[8, 4]).unwrap();
    fill_rows::<8, 4>::launch(&dev, [3], (&mut out, 2.5)).unwrap();
    let want: Vec<f32> = (0..32).map(|i| if i < 24 { 2.5 } else { -1.0 }).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
fn copy_from_pairs_elements_in_colexicographic_order() {
    let x: Vec<i32> = (10..16).collect();
    // Element i of a row-major R × C view sits at (i % R) * C + i / R.
    let at = |i: usize, rows: usize, cols: usize| (i % rows) * cols + i / rows;
    let mut y_want = vec![0; 6];
    for i in 0..6 {
        y_want[at(i, 3, 2)] = x[at(i, 2, 3)];
    }
    let mut z_want = vec![0; 12];
    for i in 0..3 {
        z_want[4 * i] = x[i];
    }

    let dev = Device::cpu();
    let xt = dev.tensor_from_slice(&x, &[6]).unwrap();
    let mut y: Tensor<i32> = dev.zeros(&[6]).unwrap();
    let mut z: Tensor<i32> = dev.zeros(&[12]).unwrap();
    reshaping_copy::launch(&dev, [1], (&xt, &mut y, &mut z)).unwrap();
    assert_eq!(y.to_vec().unwrap(), y_want);
    assert_eq!(z.to_vec().unwrap(), z_want);

    let xt = HostTensor::from_vec(&[6], x).unwrap();
    let mut y = HostTensor::zeros(DType::I32, &[6]);
    let mut z = HostTensor::zeros(DType::I32, &[12]);
    reshaping_copy::interpret([1], (&xt, &mut y, &mut z)).unwrap();
    assert_eq!(y.to_vec::<i32>().unwrap(), y_want);
    assert_eq!(z.to_vec::<i32>().unwrap(), z_want);
}
