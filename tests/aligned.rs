//! `aligned(...)`: tensors the kernel promises aligned are accessed in
//! whole vectors with no run-time test, and every launch checks the
//! promise first, on every device and in `interpret`, with an error that
//! names the argument, its layout and what it breaks.

use tile::ir::interp::HostTensor;
use tile::runtime::cpu::HostIsa;
use tile::{tile_kernel, Device, Error, KernelCode, Tensor};

/// Each row scaled by its maximum, `BC` columns at a time; `scale` is no
/// tensor the promise covers.
#[tile_kernel(aligned(x, out), configs(BC = 16))]
fn by_row_max<const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>, scale: &Tensor<f32>) {
    let (row, block) = (program_id(0), program_id(1));
    let t = partition_view(x, [1, BC]).load_masked_with(Padding::NegInf, row, block);
    let s = partition_view(scale, [1]).load(0).reshape([1, 1]);
    partition_view(out, [1, BC]).store_masked(t / t.max_along_keepdim(1) * s, row, block);
}

/// Plain Rust for `by_row_max` over `rows` rows of `cols`, blocks of 16.
fn expected(x: &[f32], cols: usize, scale: f32) -> Vec<f32> {
    x.chunks(cols)
        .flat_map(|row| {
            row.chunks(16).flat_map(move |block| {
                let max = block.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                block.iter().map(move |v| v / max * scale)
            })
        })
        .collect()
}

fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 29 + 3) % 41) as f32 + 1.0).collect()
}

#[test]
fn aligned_rows_with_a_pitch_and_a_partial_block_give_the_plain_result() {
    let dev = Device::cpu();
    // The host code, which takes the rows' stride as 1, is what runs.
    let code = dev.kernel_code(&by_row_max::<16>::kernel_spec()).unwrap();
    assert_eq!(
        code,
        HostIsa::best_here().map_or(KernelCode::Interpreter, KernelCode::Host)
    );
    let (rows, cols, pitch) = (3, 20, 24);
    let x = values(rows * cols);
    let mut padded = vec![-5.0f32; 4 + rows * pitch];
    for r in 0..rows {
        padded[4 + r * pitch..][..cols].copy_from_slice(&x[r * cols..][..cols]);
    }
    let xt = dev
        .tensor_with_strides(&padded, &[rows, cols], &[pitch as isize, 1], 4)
        .unwrap();
    let scale = dev.tensor_from_slice(&[2.0f32], &[1]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[rows, cols]).unwrap();
    by_row_max::<16>::launch(&dev, [rows as u32, 2], (&xt, &mut out, &scale)).unwrap();
    assert_eq!(out.to_vec().unwrap(), expected(&x, cols, 2.0));
    // The interpreter, the oracle, agrees.
    let hx = HostTensor::from_vec(&[rows, cols], x.clone()).unwrap();
    let hs = HostTensor::from_vec(&[1], vec![2.0f32]).unwrap();
    let mut hout = HostTensor::zeros(tile::ir::DType::F32, &[rows, cols]);
    by_row_max::<16>::interpret([rows as u32, 2], (&hx, &mut hout, &hs)).unwrap();
    assert_eq!(hout.to_vec::<f32>().unwrap(), expected(&x, cols, 2.0));
}

#[test]
fn a_launch_with_a_misaligned_tensor_is_an_error_naming_it() {
    let dev = Device::cpu();
    let scale = dev.tensor_from_slice(&[1.0f32], &[1]).unwrap();
    let launch = |x: &Tensor<f32>, out: &mut Tensor<f32>| {
        by_row_max::<16>::launch(&dev, [2, 2], (x, out, &scale)).unwrap_err()
    };
    let mut out: Tensor<f32> = dev.zeros(&[2, 20]).unwrap();
    // Rows of 18 elements: 72 bytes.
    let narrow = dev.tensor_from_slice(&values(36), &[2, 18]).unwrap();
    let mut narrow_out: Tensor<f32> = dev.zeros(&[2, 18]).unwrap();
    let err = launch(&narrow, &mut narrow_out);
    assert!(matches!(err, Error::ArgumentMismatch { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "kernel `by_row_max`, argument `x` on device cpu: expected tensor<f32, 2, aligned> (contiguous rows, and its start, row strides and row length multiples of 16 bytes), found shape [2, 18] and strides [18, 1]: its rows are 18 elements (72 bytes), not a multiple of 16 bytes"
    );
    // A start 2 elements (8 bytes) into the buffer.
    let shifted = dev
        .tensor_with_strides(&values(44), &[2, 20], &[20, 1], 2)
        .unwrap();
    assert_eq!(
        launch(&shifted, &mut out).to_string(),
        "kernel `by_row_max`, argument `x` on device cpu: expected tensor<f32, 2, aligned> (contiguous rows, and its start, row strides and row length multiples of 16 bytes), found shape [2, 20] and strides [20, 1]: its start is 8 bytes into its buffer, not a multiple of 16"
    );
    // An output with rows 22 elements apart.
    let x = dev.tensor_from_slice(&values(40), &[2, 20]).unwrap();
    let mut pitched = dev
        .tensor_with_strides(&[0.0f32; 44], &[2, 20], &[22, 1], 0)
        .unwrap();
    assert_eq!(
        launch(&x, &mut pitched).to_string(),
        "kernel `by_row_max`, argument `out` on device cpu: expected tensor<f32, 2, aligned> (contiguous rows, and its start, row strides and row length multiples of 16 bytes), found shape [2, 20] and strides [22, 1]: the stride of axis 0 is 22 elements (88 bytes), not a multiple of 16 bytes"
    );
    // Column-major rows are not contiguous.
    let columns = dev
        .tensor_with_strides(&values(40), &[2, 20], &[1, 2], 0)
        .unwrap();
    assert!(launch(&columns, &mut out)
        .to_string()
        .ends_with("its rows are not contiguous: the innermost stride is 2, not 1"));
    // Nothing ran.
    assert_eq!(out.to_vec().unwrap(), vec![0.0; 40]);
}

#[test]
fn the_kernel_info_says_which_tensors_are_promised_aligned() {
    let aligned: Vec<(&str, bool)> = by_row_max::<16>::INFO
        .params
        .iter()
        .map(|p| (p.name, p.aligned))
        .collect();
    assert_eq!(aligned, [("x", true), ("out", true), ("scale", false)]);
    let ir = by_row_max::<16>::ir();
    assert!(
        ir.starts_with("kernel @by_row_max(%x: tensor<f32, 2, aligned>, %out: tensor<f32, 2, aligned>, %scale: tensor<f32, 1>)"),
        "{ir}"
    );
}

#[test]
fn interpret_checks_the_promise_too() {
    let hx = HostTensor::from_vec(&[2, 18], values(36)).unwrap();
    let hs = HostTensor::from_vec(&[1], vec![1.0f32]).unwrap();
    let mut hout = HostTensor::zeros(tile::ir::DType::F32, &[2, 18]);
    let err = by_row_max::<16>::interpret([2, 2], (&hx, &mut hout, &hs)).unwrap_err();
    assert!(
        err.to_string()
            .contains("its rows are 18 elements (72 bytes), not a multiple of 16 bytes"),
        "{err}"
    );
}
