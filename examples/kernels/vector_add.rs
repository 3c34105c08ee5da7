//! Vector add: one masked tile per program instance.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(configs(BLOCK = 1024))]
pub fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let (px, py) = (partition_view(x, [BLOCK]), partition_view(y, [BLOCK]));
    partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
}

/// The plain-Rust reference.
pub fn reference(x: &[f32], y: &[f32]) -> Vec<f64> {
    x.iter().zip(y).map(|(a, b)| f64::from(a + b)).collect()
}

/// Adds two vectors of a length that leaves a partial last tile.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let n = 100_003;
    let (xs, ys) = (rng.take(n), rng.take(n));
    let x = dev.tensor_from_slice(&xs, &[n])?;
    let y = dev.tensor_from_slice(&ys, &[n])?;
    let mut out = dev.zeros::<f32>(&[n])?;
    let grid = [n.div_ceil(1024) as u32];
    let time = timed(|| vector_add::<1024>::launch(dev, grid, (&x, &y, &mut out)))?;
    Ok(vec![Row {
        kernel: "vector_add".into(),
        code: dev.kernel_code(&vector_add::<1024>::kernel_spec())?,
        shape: format!("[{n}]"),
        max_error: max_error(&out.to_vec()?, &reference(&xs, &ys)),
        tolerance: 0.0,
        time,
    }])
}
