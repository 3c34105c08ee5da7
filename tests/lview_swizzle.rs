//! Swizzled layout views in kernels (CuTe's swizzled layouts, Mojo's
//! `Swizzle`): a tensor written into swizzled storage and read back, on the
//! CPU device and in the interpreter, against `Swizzle::apply`.

use tile::ir::interp::HostTensor;
use tile::ir::layout::Swizzle;
use tile::ir::DType;
use tile::{tile_kernel, Device, Tensor};

/// Rows `8p..8p+8` of `x` (`R × C`, row-major) stored through the swizzle
/// `Sw<2,2,3>` of `out`'s row-major view.
#[tile_kernel(configs(R = 16, C = 16))]
fn swizzle_write<const R: usize, const C: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let t = layout_view(x, (R, C), (C, 1)).tile([8, C], pid, 0).load();
    layout_view(out, (R, C), (C, 1))
        .swizzle(2, 2, 3)
        .tile([8, C], pid, 0)
        .store(t);
}

/// `back` from `out` through the same swizzle, applied after the tile this
/// time (a separate launch: the stores of other programs are not ordered
/// before this program's loads).
#[tile_kernel(configs(R = 16, C = 16))]
fn swizzle_read<const R: usize, const C: usize>(out: &Tensor<f32>, back: &mut Tensor<f32>) {
    let pid = program_id(0);
    let t = layout_view(out, (R, C), (C, 1))
        .tile([8, C], pid, 0)
        .swizzle(2, 2, 3)
        .load();
    layout_view(back, (R, C), (C, 1))
        .tile([8, C], pid, 0)
        .store(t);
}

#[test]
fn a_swizzled_store_scatters_and_a_swizzled_load_gathers_back() {
    let sw: Swizzle = "Sw<2,2,3>".parse().unwrap();
    let x: Vec<f32> = (0..256).map(|i| i as f32 * 0.5).collect();
    let mut want = vec![0.0f32; 256];
    for (i, &v) in x.iter().enumerate() {
        want[sw.apply(i as i64) as usize] = v;
    }
    let dev = Device::cpu();
    let xt = dev.tensor_from_slice(&x, &[256]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[256]).unwrap();
    let mut back: Tensor<f32> = dev.zeros(&[256]).unwrap();
    swizzle_write::<16, 16>::launch(&dev, [2], (&xt, &mut out)).unwrap();
    assert_eq!(out.to_vec().unwrap(), want);
    swizzle_read::<16, 16>::launch(&dev, [2], (&out, &mut back)).unwrap();
    assert_eq!(back.to_vec().unwrap(), x);

    let xh = HostTensor::from_vec(&[256], x.clone()).unwrap();
    let mut oh = HostTensor::zeros(DType::F32, &[256]);
    let mut bh = HostTensor::zeros(DType::F32, &[256]);
    swizzle_write::<16, 16>::interpret([2, 1, 1], (&xh, &mut oh)).unwrap();
    assert_eq!(oh.to_vec::<f32>().unwrap(), want);
    swizzle_read::<16, 16>::interpret([2, 1, 1], (&oh, &mut bh)).unwrap();
    assert_eq!(bh.to_vec::<f32>().unwrap(), x);
}
