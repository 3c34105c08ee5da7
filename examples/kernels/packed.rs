//! Sequences packed one after another, as embedding and attention kernels
//! take a batch of different lengths: rows `cu[b] .. cu[b + 1]` of `x` are
//! sequence `b` (`cu` the cumulative lengths, PyTorch's and FlashAttention's
//! `cu_seqlens`). One program averages one sequence's rows (the mean
//! pooling of sentence-embedding models) through a window of `x` that
//! starts at the sequence's first row and holds its rows only: a partition
//! view of `x.window([start, 0], [len, D])` masks the rows past the
//! sequence as it masks rows past a tensor, wherever `start` falls.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(configs(BR = 16, D = 64))]
pub fn mean_pool<const BR: usize, const D: usize>(
    x: &Tensor<f32, 2>,
    cu: &Tensor<i32>,
    out: &mut Tensor<f32, 2>,
) {
    let b = program_id(0);
    let start = gather(cu, [b]);
    let len = gather(cu, [b + 1]) - start;
    let rows = partition_view(x.window([start, 0], [len, D]), [BR, D]);
    let mut sum = zeros::<f32>([D]);
    for i in 0..rows.num_tiles(0) {
        sum = sum + rows.load_masked(i, 0).sum(0);
    }
    let mean = sum / (len.max(1) as f32);
    partition_view(out, [1, D]).store_masked(mean.reshape([1, D]), b, 0);
}

/// The plain-Rust reference: each sequence's mean row (zeros for an empty
/// one).
pub fn reference(x: &[f32], cu: &[i32], d: usize) -> Vec<f64> {
    let mut want = Vec::new();
    for b in 0..cu.len() - 1 {
        let (start, end) = (cu[b] as usize, cu[b + 1] as usize);
        for c in 0..d {
            let sum: f64 = (start..end).map(|r| f64::from(x[r * d + c])).sum();
            want.push(sum / (end - start).max(1) as f64);
        }
    }
    want
}

/// The cumulative lengths of sequences of 37, 0, 1, 16 and 90 rows (none a
/// multiple of the block but one, one empty).
pub fn cumulative_lengths() -> Vec<i32> {
    let mut cu = vec![0];
    for len in [37, 0, 1, 16, 90] {
        cu.push(cu.last().copied().unwrap_or(0) + len);
    }
    cu
}

/// Mean pooling of five packed sequences of 64 features.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let d = 64;
    let cu = cumulative_lengths();
    let rows = *cu.last().unwrap_or(&0) as usize;
    let batch = cu.len() - 1;
    let xs = rng.take(rows * d);
    let x = dev.tensor_from_slice(&xs, &[rows, d])?;
    let lengths = dev.tensor_from_slice(&cu, &[cu.len()])?;
    let mut out = dev.zeros::<f32>(&[batch, d])?;
    let time =
        timed(|| mean_pool::<16, 64>::launch(dev, [batch as u32], (&x, &lengths, &mut out)))?;
    Ok(vec![Row {
        kernel: "mean_pool (packed sequences)".into(),
        code: dev.kernel_code(&mean_pool::<16, 64>::kernel_spec())?,
        shape: format!("{batch} sequences of {rows} rows, [{rows}, {d}]"),
        max_error: max_error(&out.to_vec()?, &reference(&xs, &cu, d)),
        tolerance: 1e-5,
        time,
    }])
}
