//! Embedding lookup as Liger-Kernel computes it
//! (`liger_kernel/ops/experimental/embedding.py`, `embedding_forward_kernel`):
//! a program per block of `BM` ids and `BN` columns gathers the rows of the
//! table at the ids into the output. Liger's launcher takes
//! `next_power_of_two(min(128, dim))` for both blocks and Triton's default
//! 4 warps.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(
    configs(BM = 128, BN = 128),
    aligned(table, out),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn embedding<const BM: usize, const BN: usize>(
    ids: &Tensor<i64>,
    table: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let rows = iota::<i32>([BM, 1]) + pid_m * BM;
    let cols = iota::<i32>([1, BN]) + pid_n * BN;
    let inside = (rows < ids.dim(0)) & (cols < table.dim(1));
    let at = partition_view(ids, [BM])
        .load_masked(pid_m)
        .cast::<i32>()
        .reshape([BM, 1]);
    let found = gather(table, [at, cols], inside, 0.0);
    partition_view(out, [BM, BN]).store_masked(found, pid_m, pid_n);
}

/// 130 lookups (a partial block of ids) of rows of 512 columns.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (count, words, dim) = (130, 1000, 512);
    let weights = rng.take(words * dim);
    let picks: Vec<i64> = rng
        .take(count)
        .iter()
        .map(|v| ((v + 2.0) / 4.0 * words as f32) as i64)
        .collect();
    let ids = dev.tensor_from_slice(&picks, &[count])?;
    let table = dev.tensor_from_slice(&weights, &[words, dim])?;
    let mut out = dev.zeros::<f32>(&[count, dim])?;
    let grid = [count.div_ceil(128) as u32, dim.div_ceil(128) as u32];
    let time = timed(|| embedding::<128, 128>::launch(dev, grid, (&ids, &table, &mut out)))?;
    let want: Vec<f64> = picks
        .iter()
        .flat_map(|&i| {
            weights[i as usize * dim..][..dim]
                .iter()
                .map(|&v| f64::from(v))
        })
        .collect();
    Ok(vec![Row {
        kernel: "embedding".into(),
        code: dev.kernel_code(&embedding::<128, 128>::kernel_spec())?,
        shape: format!("{count} ids, [{words}, {dim}] f32"),
        max_error: max_error(&out.to_vec()?, &want),
        tolerance: 0.0,
        time,
    }])
}
