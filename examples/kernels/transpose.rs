//! Transpose, twice: by moving a tile (`transpose()` on the loaded tile,
//! partial edge tiles masked), and through layout views alone (the tile of
//! `x` stored into the same tile of the transposed view of `out`, no data
//! movement op), as Mojo's `LayoutTensor` does it.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(configs(BM = 32, BN = 32))]
pub fn transpose<const BM: usize, const BN: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    // Consecutive program ids walk along the rows of `x`, which are read
    // in order; the output's rows are written a tile at a time.
    let (pid_n, pid_m) = (program_id(0), program_id(1));
    let t = partition_view(x, [BM, BN]).load_masked(pid_m, pid_n);
    partition_view(out, [BN, BM]).store_masked(t.transpose(), pid_n, pid_m);
}

/// Layout views are static (CuTe layouts), so the matrix shape is a
/// compile-time parameter and the tiles divide it.
#[tile_kernel(configs(M = 224, N = 160, BM = 32, BN = 32))]
pub fn transpose_lview<const M: usize, const N: usize, const BM: usize, const BN: usize>(
    x: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let t = layout_view(x, (M, N), (N, 1))
        .tile([BM, BN], pid_m, pid_n)
        .load();
    let out_t = layout_view(out, (N, M), (M, 1)).transpose();
    out_t.tile([BM, BN], pid_m, pid_n).store(t);
}

/// The plain-Rust reference.
pub fn reference(x: &[f32], m: usize, n: usize) -> Vec<f64> {
    let mut want = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            want[j * m + i] = f64::from(x[i * n + j]);
        }
    }
    want
}

/// Both transposes; the first on a shape that leaves partial tiles.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n) = (333, 177);
    let xs = rng.take(m * n);
    let x = dev.tensor_from_slice(&xs, &[m, n])?;
    let mut out = dev.zeros::<f32>(&[n, m])?;
    let grid = [n.div_ceil(32) as u32, m.div_ceil(32) as u32];
    let time = timed(|| transpose::<32, 32>::launch(dev, grid, (&x, &mut out)))?;
    let tile_row = Row {
        kernel: "transpose".into(),
        code: dev.kernel_code(&transpose::<32, 32>::kernel_spec())?,
        shape: format!("[{m}, {n}]"),
        max_error: max_error(&out.to_vec()?, &reference(&xs, m, n)),
        tolerance: 0.0,
        time,
    };

    let (m, n) = (224, 160);
    let xs = rng.take(m * n);
    let x = dev.tensor_from_slice(&xs, &[m, n])?;
    let mut out = dev.zeros::<f32>(&[n, m])?;
    let grid = [(m / 32) as u32, (n / 32) as u32];
    let time = timed(|| transpose_lview::<224, 160, 32, 32>::launch(dev, grid, (&x, &mut out)))?;
    let view_row = Row {
        kernel: "transpose (layout view)".into(),
        code: dev.kernel_code(&transpose_lview::<224, 160, 32, 32>::kernel_spec())?,
        shape: format!("[{m}, {n}]"),
        max_error: max_error(&out.to_vec()?, &reference(&xs, m, n)),
        tolerance: 0.0,
        time,
    };
    Ok(vec![tile_row, view_row])
}
