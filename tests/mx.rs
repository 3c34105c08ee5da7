//! OCP Microscaling formats in kernels: a row-wise MXFP4 quantization (one
//! `f8e8m0` scale per 32 elements, `f4e2m1` elements, an FP6 copy) and its
//! dequantization, on the CPU device and through the interpreter, against
//! plain Rust.

use tile::ir::interp::HostTensor;
use tile::{f4e2m1, f6e3m2, f8e8m0, tile_kernel, Device};

/// The largest power of two of E2M1 (emax_elem in OCP MX: 6 = 1.5 · 2²).
const E2M1_EMAX: f32 = 4.0;

/// Each block of 32 elements of a row scaled by 2^(⌊log₂ amax⌋ − 2), OCP
/// MX's shared scale for E2M1, then cast (saturating: |x / scale| may
/// reach 8) into FP4 and FP6.
#[tile_kernel(configs(BR = 4))]
fn mx_quantize<const BR: usize>(
    x: &Tensor<f32, 2>,
    q4: &mut Tensor<f4e2m1, 2>,
    q6: &mut Tensor<f6e3m2, 2>,
    scales: &mut Tensor<f8e8m0, 2>,
) {
    let (rows, block) = (program_id(0), program_id(1));
    let t = partition_view(x, [BR, 32]).load_masked(rows, block);
    let scale = (t.abs().max_along_keepdim(1) / 4.0).cast::<f8e8m0>();
    let scaled = t / scale.cast::<f32>();
    partition_view(q4, [BR, 32]).store_masked(scaled.cast::<f4e2m1>(), rows, block);
    partition_view(q6, [BR, 32]).store_masked(scaled.cast::<f6e3m2>(), rows, block);
    partition_view(scales, [BR, 1]).store_masked(scale, rows, block);
}

/// The FP4 elements times their block's scale, in f32.
#[tile_kernel(configs(BR = 4))]
fn mx_dequantize<const BR: usize>(
    q4: &Tensor<f4e2m1, 2>,
    scales: &Tensor<f8e8m0, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let (rows, block) = (program_id(0), program_id(1));
    let q = partition_view(q4, [BR, 32]).load_masked(rows, block);
    let s = partition_view(scales, [BR, 1]).load_masked(rows, block);
    let values = q.cast::<f32>() * s.cast::<f32>();
    partition_view(out, [BR, 32]).store_masked(values, rows, block);
}

/// [`mx_quantize`]'s FP4 elements packed two to a byte along the row, as
/// quantized checkpoints store them, with the scales.
#[tile_kernel(configs(BR = 4))]
fn mx_quantize_packed<const BR: usize>(
    x: &Tensor<f32, 2>,
    packed: &mut Tensor<u8, 2>,
    scales: &mut Tensor<f8e8m0, 2>,
) {
    let (rows, block) = (program_id(0), program_id(1));
    let t = partition_view(x, [BR, 32]).load_masked(rows, block);
    let scale = (t.abs().max_along_keepdim(1) / 4.0).cast::<f8e8m0>();
    let q = (t / scale.cast::<f32>()).cast::<f4e2m1>();
    partition_view(packed, [BR, 16]).store_masked(q.pack_fp4(1), rows, block);
    partition_view(scales, [BR, 1]).store_masked(scale, rows, block);
}

/// The packed FP4 elements times their block's scale, in f32.
#[tile_kernel(configs(BR = 4))]
fn mx_dequantize_packed<const BR: usize>(
    packed: &Tensor<u8, 2>,
    scales: &Tensor<f8e8m0, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let (rows, block) = (program_id(0), program_id(1));
    let q = partition_view(packed, [BR, 16])
        .load_masked(rows, block)
        .unpack_fp4(1);
    let s = partition_view(scales, [BR, 1]).load_masked(rows, block);
    let values = q.cast::<f32>() * s.cast::<f32>();
    partition_view(out, [BR, 32]).store_masked(values, rows, block);
}

/// The reference quantization of `x` (`rows` × `cols`, `cols` a multiple
/// of 32): FP4 elements, FP6 elements, scales.
fn reference(x: &[f32], cols: usize) -> (Vec<f4e2m1>, Vec<f6e3m2>, Vec<f8e8m0>) {
    let (mut q4, mut q6, mut scales) = (Vec::new(), Vec::new(), Vec::new());
    for block in x.chunks(32) {
        let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = f8e8m0::from_f32(amax / E2M1_EMAX);
        for &v in block {
            let scaled = v / scale.to_f32();
            q4.push(f4e2m1::from_f32(scaled));
            q6.push(f6e3m2::from_f32(scaled));
        }
        scales.push(scale);
    }
    assert_eq!(scales.len(), x.len() / cols * (cols / 32));
    (q4, q6, scales)
}

/// Rows with ordinary values, a zero row, and rows of tiny, huge and mixed
/// magnitudes; 5 rows, so the last program's tile is partial.
fn inputs(cols: usize) -> Vec<f32> {
    let mut x = Vec::new();
    let mut state = 0x2545_f491u32;
    for row in 0..5 {
        for c in 0..cols {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let unit = (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            x.push(match row {
                1 => 0.0,
                2 => unit * 1e-30,
                3 => unit * 3e30,
                4 if c % 7 == 0 => 100.0 + unit,
                _ => unit * 13.0,
            });
        }
    }
    x
}

fn bits<T: Copy>(v: &[T], to_bits: fn(T) -> u8) -> Vec<u8> {
    v.iter().map(|&x| to_bits(x)).collect()
}

#[test]
fn mxfp4_quantization_matches_plain_rust_on_the_cpu_device_and_the_interpreter() {
    let (rows, cols) = (5usize, 64usize);
    let xs = inputs(cols);
    let (want4, want6, want_scales) = reference(&xs, cols);
    let grid = [rows.div_ceil(4) as u32, (cols / 32) as u32];

    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&xs, &[rows, cols]).unwrap();
    let mut q4 = dev.zeros::<f4e2m1>(&[rows, cols]).unwrap();
    let mut q6 = dev.zeros::<f6e3m2>(&[rows, cols]).unwrap();
    let mut scales = dev.zeros::<f8e8m0>(&[rows, cols / 32]).unwrap();
    mx_quantize::<4>::launch(&dev, grid, (&x, &mut q4, &mut q6, &mut scales)).unwrap();
    assert_eq!(
        bits(&q4.to_vec().unwrap(), f4e2m1::to_bits),
        bits(&want4, f4e2m1::to_bits)
    );
    assert_eq!(
        bits(&q6.to_vec().unwrap(), f6e3m2::to_bits),
        bits(&want6, f6e3m2::to_bits)
    );
    assert_eq!(
        bits(&scales.to_vec().unwrap(), f8e8m0::to_bits),
        bits(&want_scales, f8e8m0::to_bits)
    );
    // The zero row's scale is the least, 2^-127. In the row of mixed
    // magnitudes, amax ≈ 100 gives the scale 2^⌊log₂ 25⌋ = 16, against which
    // the values near 100 (6.25 scaled) saturate to 6.
    assert_eq!(want_scales[2].to_bits(), 0);
    assert_eq!(want_scales[8].to_f32(), 16.0);
    assert_eq!(want4[4 * cols].to_f32(), 6.0);

    let mut out = dev.zeros::<f32>(&[rows, cols]).unwrap();
    mx_dequantize::<4>::launch(&dev, grid, (&q4, &scales, &mut out)).unwrap();
    let want_out: Vec<f32> = want4
        .iter()
        .enumerate()
        .map(|(i, q)| q.to_f32() * want_scales[i / 32].to_f32())
        .collect();
    assert_eq!(out.to_vec().unwrap(), want_out);

    let host = |v: Vec<f32>| HostTensor::from_vec(&[rows, cols], v).unwrap();
    let mut h4 =
        HostTensor::from_vec(&[rows, cols], vec![f4e2m1::from_bits(0); rows * cols]).unwrap();
    let mut h6 =
        HostTensor::from_vec(&[rows, cols], vec![f6e3m2::from_bits(0); rows * cols]).unwrap();
    let mut hs =
        HostTensor::from_vec(&[rows, cols / 32], vec![f8e8m0::from_bits(0); rows * 2]).unwrap();
    let grid3 = [grid[0], grid[1], 1];
    mx_quantize::<4>::interpret(grid3, (&host(xs), &mut h4, &mut h6, &mut hs)).unwrap();
    let h4: Vec<f4e2m1> = h4.to_vec().unwrap();
    let hs: Vec<f8e8m0> = hs.to_vec().unwrap();
    assert_eq!(bits(&h4, f4e2m1::to_bits), bits(&want4, f4e2m1::to_bits));
    assert_eq!(
        bits(&hs, f8e8m0::to_bits),
        bits(&want_scales, f8e8m0::to_bits)
    );
}

#[test]
fn packed_mxfp4_matches_plain_rust_on_the_cpu_device_and_the_interpreter() {
    let (rows, cols) = (5usize, 64usize);
    let xs = inputs(cols);
    let (want4, _, want_scales) = reference(&xs, cols);
    let want_packed = f4e2m1::pack_pairs(&want4);
    let grid = [rows.div_ceil(4) as u32, (cols / 32) as u32];

    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&xs, &[rows, cols]).unwrap();
    let mut packed = dev.zeros::<u8>(&[rows, cols / 2]).unwrap();
    let mut scales = dev.zeros::<f8e8m0>(&[rows, cols / 32]).unwrap();
    mx_quantize_packed::<4>::launch(&dev, grid, (&x, &mut packed, &mut scales)).unwrap();
    assert_eq!(packed.to_vec().unwrap(), want_packed);

    let mut out = dev.zeros::<f32>(&[rows, cols]).unwrap();
    mx_dequantize_packed::<4>::launch(&dev, grid, (&packed, &scales, &mut out)).unwrap();
    let want_out: Vec<f32> = want4
        .iter()
        .enumerate()
        .map(|(i, q)| q.to_f32() * want_scales[i / 32].to_f32())
        .collect();
    assert_eq!(out.to_vec().unwrap(), want_out);

    let mut hp = HostTensor::from_vec(&[rows, cols / 2], vec![0u8; rows * cols / 2]).unwrap();
    let mut hs =
        HostTensor::from_vec(&[rows, cols / 32], vec![f8e8m0::from_bits(0); rows * 2]).unwrap();
    let x = HostTensor::from_vec(&[rows, cols], xs).unwrap();
    let grid3 = [grid[0], grid[1], 1];
    mx_quantize_packed::<4>::interpret(grid3, (&x, &mut hp, &mut hs)).unwrap();
    assert_eq!(hp.to_vec::<u8>().unwrap(), want_packed);
}
