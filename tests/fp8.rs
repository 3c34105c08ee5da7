//! FP8 in kernels: tensors of `f8e4m3` and `f8e5m2`, casts into them
//! (rounded to nearest even, saturating) and out of them (exact), and a
//! `dot` of FP8 tiles accumulated in `f32`, on the CPU device and through
//! the interpreter, against plain Rust.

use tile::ir::interp::HostTensor;
use tile::{f16, f8e4m3, f8e5m2, tile_kernel, Device};

/// `x` scaled and cast into both formats; the E4M3 values back in `f32`.
#[tile_kernel(configs(B = 8))]
fn quantize<const B: usize>(
    x: &Tensor<f32>,
    scale: f32,
    q4: &mut Tensor<f8e4m3>,
    q5: &mut Tensor<f8e5m2>,
    back: &mut Tensor<f32>,
) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid) * scale;
    let (e4, e5) = (v.cast::<f8e4m3>(), v.cast::<f8e5m2>());
    partition_view(q4, [B]).store_masked(e4, pid);
    partition_view(q5, [B]).store_masked(e5, pid);
    partition_view(back, [B]).store_masked(e4.cast::<f32>(), pid);
}

#[test]
fn casts_into_fp8_round_and_saturate_on_the_cpu_device_and_the_interpreter() {
    let xs = [
        0.0f32,
        1.0,
        -1.0625,
        1.1875,
        448.0,
        500.0,
        -1e9,
        3e-3,
        57344.0,
        1e6,
        f32::INFINITY,
        0.3,
    ];
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&xs, &[xs.len()]).unwrap();
    let mut q4 = dev.zeros::<f8e4m3>(&[xs.len()]).unwrap();
    let mut q5 = dev.zeros::<f8e5m2>(&[xs.len()]).unwrap();
    let mut back = dev.zeros::<f32>(&[xs.len()]).unwrap();
    let grid = [xs.len().div_ceil(8) as u32];
    quantize::<8>::launch(&dev, grid, (&x, 1.0, &mut q4, &mut q5, &mut back)).unwrap();
    let want4: Vec<f8e4m3> = xs.iter().map(|&v| f8e4m3::from_f64(v.into())).collect();
    let want5: Vec<f8e5m2> = xs.iter().map(|&v| f8e5m2::from_f64(v.into())).collect();
    let bits4 = |v: &[f8e4m3]| v.iter().map(|x| x.to_bits()).collect::<Vec<u8>>();
    let bits5 = |v: &[f8e5m2]| v.iter().map(|x| x.to_bits()).collect::<Vec<u8>>();
    assert_eq!(bits4(&q4.to_vec().unwrap()), bits4(&want4));
    assert_eq!(bits5(&q5.to_vec().unwrap()), bits5(&want5));
    let back = back.to_vec().unwrap();
    // Ties to even (1.0625 → 1.0, 1.1875 → 1.25), saturation (500, -1e9,
    // infinity → ±448), subnormals (3e-3 is 1.54 steps of 2⁻⁹: 2 steps),
    // exact widening.
    assert_eq!(
        &back[..8],
        [0.0, 1.0, -1.0, 1.25, 448.0, 448.0, -448.0, 0.00390625]
    );
    assert_eq!(back[10], 448.0);
    // E5M2 saturates at 57344, infinities included.
    assert_eq!(q5.to_vec().unwrap()[9].to_f32(), 57344.0);
    assert_eq!(q5.to_vec().unwrap()[10].to_f32(), 57344.0);

    let hx = HostTensor::from_vec(&[xs.len()], xs.to_vec()).unwrap();
    let mut h4 = HostTensor::from_vec(&[xs.len()], vec![f8e4m3::from_bits(0); xs.len()]).unwrap();
    let mut h5 = HostTensor::from_vec(&[xs.len()], vec![f8e5m2::from_bits(0); xs.len()]).unwrap();
    let mut hb = HostTensor::from_vec(&[xs.len()], vec![0.0f32; xs.len()]).unwrap();
    quantize::<8>::interpret(grid, (&hx, 1.0, &mut h4, &mut h5, &mut hb)).unwrap();
    assert_eq!(hb.to_vec::<f32>().unwrap(), back);
    let h4: Vec<f8e4m3> = h4.to_vec().unwrap();
    assert_eq!(bits4(&h4), bits4(&want4));
}

/// `x` cast into both formats without saturation, from `f32` and from
/// `f16`, and E5M2 into E4M3.
#[tile_kernel(configs(B = 16))]
fn quantize_nonsaturating<const B: usize>(
    x: &Tensor<f32>,
    q4: &mut Tensor<f8e4m3>,
    q5: &mut Tensor<f8e5m2>,
    h4: &mut Tensor<f8e4m3>,
    via5: &mut Tensor<f8e4m3>,
) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid);
    partition_view(q4, [B]).store_masked(v.cast_nonsaturating::<f8e4m3>(), pid);
    let e5 = v.cast_nonsaturating::<f8e5m2>();
    partition_view(q5, [B]).store_masked(e5, pid);
    let h = v.cast::<f16>();
    partition_view(h4, [B]).store_masked(h.cast_nonsaturating::<f8e4m3>(), pid);
    partition_view(via5, [B]).store_masked(e5.cast_nonsaturating::<f8e4m3>(), pid);
}

/// The OCP non-saturating conversion: to nearest even with an unbounded
/// exponent, then an infinity (E5M2) or the NaN (E4M3) past the largest
/// finite value.
fn nonsaturating_e4m3(x: f64) -> u8 {
    if x.is_nan() || x.abs() > 464.0 {
        return 0x7f;
    }
    f8e4m3::from_f64(x).to_bits()
}

fn nonsaturating_e5m2(x: f64) -> u8 {
    if !x.is_nan() && x.abs() >= 61440.0 {
        return if x < 0.0 { 0xfc } else { 0x7c };
    }
    f8e5m2::from_f64(x).to_bits()
}

#[test]
fn nonsaturating_casts_overflow_to_infinity_or_nan() {
    let dev = Device::cpu();
    let xs = [
        0.0f32,
        -0.0,
        1.0,
        448.0,
        463.9,
        464.0,
        464.1,
        -500.0,
        57344.0,
        61439.0,
        61440.0,
        -61440.0,
        1e6,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3e-3,
        -2.5,
        240.0,
        30000.0,
    ];
    let n = xs.len();
    let x = dev.tensor_from_slice(&xs, &[n]).unwrap();
    let z4 = vec![f8e4m3::from_bits(0); n];
    let z5 = vec![f8e5m2::from_bits(0); n];
    let mut q4 = dev.tensor_from_slice(&z4, &[n]).unwrap();
    let mut q5 = dev.tensor_from_slice(&z5, &[n]).unwrap();
    let mut h4 = dev.tensor_from_slice(&z4, &[n]).unwrap();
    let mut via5 = dev.tensor_from_slice(&z4, &[n]).unwrap();
    let grid = [n.div_ceil(16) as u32];
    quantize_nonsaturating::<16>::launch(&dev, grid, (&x, &mut q4, &mut q5, &mut h4, &mut via5))
        .unwrap();
    let bits4 = |t: &tile::Tensor<f8e4m3>| -> Vec<u8> {
        t.to_vec().unwrap().iter().map(|v| v.to_bits()).collect()
    };
    let bits5: Vec<u8> = q5.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    let want4: Vec<u8> = xs.iter().map(|&v| nonsaturating_e4m3(v.into())).collect();
    let want5: Vec<u8> = xs.iter().map(|&v| nonsaturating_e5m2(v.into())).collect();
    assert_eq!(bits4(&q4), want4);
    assert_eq!(bits5, want5);
    let halves: Vec<u8> = xs
        .iter()
        .map(|&v| nonsaturating_e4m3(f16::from_f32(v).to_f64()))
        .collect();
    assert_eq!(bits4(&h4), halves);
    let via: Vec<u8> = want5
        .iter()
        .map(|&b| nonsaturating_e4m3(f8e5m2::from_bits(b).to_f64()))
        .collect();
    assert_eq!(bits4(&via5), via);
    // A few values by hand: 464 is a tie that stays at 448 in E4M3; 61440
    // is a tie that goes up to E5M2's infinity.
    assert_eq!(want4[5], f8e4m3::from_f64(448.0).to_bits());
    assert_eq!(want4[6], 0x7f);
    assert_eq!(want5[10], 0x7c);
    assert_eq!(want5[9], f8e5m2::from_f64(57344.0).to_bits());
    // The interpreter agrees bit for bit.
    let host = |v: &[f8e4m3]| HostTensor::from_vec(&[n], v.to_vec()).unwrap();
    let (mut w4, mut w5, mut wh, mut wv) = (
        host(&z4),
        HostTensor::from_vec(&[n], z5.clone()).unwrap(),
        host(&z4),
        host(&z4),
    );
    quantize_nonsaturating::<16>::interpret(
        [grid[0], 1, 1],
        (
            &HostTensor::from_vec(&[n], xs.to_vec()).unwrap(),
            &mut w4,
            &mut w5,
            &mut wh,
            &mut wv,
        ),
    )
    .unwrap();
    let host_bits = |t: &HostTensor| t.data().to_vec();
    assert_eq!(host_bits(&w4), bits4(&q4));
    assert_eq!(host_bits(&w5), bits5);
    assert_eq!(host_bits(&wh), bits4(&h4));
    assert_eq!(host_bits(&wv), bits4(&via5));
}
