//! Fused row softmax: a block of rows per program instance, masked columns
//! read as -inf.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, DeviceKind, Error};

// Four rows per program for GPUs, eight on the CPU (only there: no GPU code is
// built for it), where the host code folds the eight rows of a tile with one
// vector op per column.
#[tile_kernel(configs(BR = 4, BC = 256), configs(BR = 8, BC = 256, targets = "host"))]
pub fn softmax<const BR: usize, const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid = program_id(0);
    // Columns past the end read as -inf and add exp(-inf) = 0 to the sum.
    let t = partition_view(x, [BR, BC]).load_masked_with(Padding::NegInf, pid, 0);
    let e = (t - t.max_along_keepdim(1)).exp();
    partition_view(out, [BR, BC]).store_masked(e / e.sum_keepdim(1), pid, 0);
}

/// The plain-Rust reference, in f64.
pub fn reference(x: &[f32], cols: usize) -> Vec<f64> {
    let mut want = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f64> = row.iter().map(|&v| f64::from(v - max).exp()).collect();
        let sum: f64 = e.iter().sum();
        want.extend(e.iter().map(|v| v / sum));
    }
    want
}

/// Softmax of each row of a matrix whose shape leaves partial tiles.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols) = (301, 200);
    let xs = rng.take(rows * cols);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let mut out = dev.zeros::<f32>(&[rows, cols])?;
    let (time, code) = if dev.kind() == DeviceKind::Cpu {
        let grid = [rows.div_ceil(8) as u32];
        let time = timed(|| softmax::<8, 256>::launch(dev, grid, (&x, &mut out)))?;
        (time, dev.kernel_code(&softmax::<8, 256>::kernel_spec())?)
    } else {
        let grid = [rows.div_ceil(4) as u32];
        let time = timed(|| softmax::<4, 256>::launch(dev, grid, (&x, &mut out)))?;
        (time, dev.kernel_code(&softmax::<4, 256>::kernel_spec())?)
    };
    Ok(vec![Row {
        kernel: "softmax".into(),
        code,
        shape: format!("[{rows}, {cols}]"),
        max_error: max_error(&out.to_vec()?, &reference(&xs, cols)),
        tolerance: 1e-6,
        time,
    }])
}
