//! Kernels that check their inputs with `device_assert!`: rows of weights
//! normalized to sum to one (each weight must be non-negative, each row's
//! sum positive), and an embedding lookup whose token ids must lie in the
//! vocabulary. A false assertion fails the launch with the program, the
//! line and the message; the run shows one doing so on bad input.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

/// `out[r, :] = x[r, :] / sum(x[r, :])` for rows of non-negative weights
/// of at most `BC` columns, `BR` rows a program.
#[tile_kernel(configs(BR = 4, BC = 128))]
pub fn normalize_rows<const BR: usize, const BC: usize>(
    x: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let pid = program_id(0);
    let w = partition_view(x, [BR, BC]).load_masked(pid, 0);
    device_assert!(
        w >= 0.0,
        "block {pid} has a negative weight, {} at least",
        w.min_along(1).min_along(0)
    );
    let rows = iota::<i32>([BR]) + pid * BR;
    device_assert!(
        (w.sum(1) > 0.0) | (rows >= x.dim(0)),
        "a row of block {pid} sums to zero"
    );
    partition_view(out, [BR, BC]).store_masked(w / w.sum_keepdim(1), pid, 0);
}

/// `out[t] = weight[ids[t]]`, one token a program, `D` columns at a time;
/// an id outside the vocabulary is an error naming the token.
#[tile_kernel(configs(D = 32), num_warps = 1)]
pub fn embedding_checked<const D: usize>(
    ids: &Tensor<i32>,
    weight: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let t = program_id(0);
    let id = gather(ids, [t]);
    let vocab = weight.dim(0);
    device_assert!(
        (id >= 0) & (id < vocab),
        "token {t}: id {id} is outside the vocabulary of {vocab}"
    );
    let (vw, vo) = (partition_view(weight, [1, D]), partition_view(out, [1, D]));
    for j in 0..cdiv(weight.dim(1), D) {
        vo.store_masked(vw.load_masked(id, j), t, j);
    }
}

/// A row of the table from a result and its reference.
fn row(
    kernel: &str,
    code: tile::KernelCode,
    shape: String,
    got: &[f32],
    want: &[f64],
    time: std::time::Duration,
) -> Row {
    Row {
        kernel: kernel.into(),
        code,
        shape,
        max_error: max_error(got, want),
        tolerance: 1e-6,
        time,
    }
}

/// 1000 rows of 100 weights in [0, 4), normalized; then the same with one
/// weight negative, which must fail the launch with its assertion.
fn run_normalize(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n) = (1000, 100);
    let mut weights: Vec<f32> = rng.take(m * n).iter().map(|v| v + 2.0).collect();
    let x = dev.tensor_from_slice(&weights, &[m, n])?;
    let mut out = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(4) as u32];
    let time = timed(|| normalize_rows::<4, 128>::launch(dev, grid, (&x, &mut out)))?;
    let want: Vec<f64> = (0..m * n)
        .map(|i| {
            let r = &weights[i / n * n..][..n];
            f64::from(weights[i]) / r.iter().map(|&v| f64::from(v)).sum::<f64>()
        })
        .collect();
    let code = dev.kernel_code(&normalize_rows::<4, 128>::kernel_spec())?;
    let shape = format!("[{m}, {n}]");
    let good = row(
        "normalize rows",
        code,
        shape.clone(),
        &out.to_vec()?,
        &want,
        time,
    );

    // Row 517 (block 129) gets a negative weight: the launch must fail with
    // the assertion's message, and nothing else.
    weights[517 * n + 3] = -0.5;
    let x = dev.tensor_from_slice(&weights, &[m, n])?;
    let failed = normalize_rows::<4, 128>::launch(dev, grid, (&x, &mut out));
    let expected = "assertion failed: block 129 has a negative weight, -0.5 at least";
    let caught = matches!(&failed, Err(e) if e.to_string().ends_with(expected));
    let bad = Row {
        kernel: "normalize rows: assert".into(),
        code,
        shape,
        max_error: if caught { 0.0 } else { 1.0 },
        tolerance: 0.0,
        time: std::time::Duration::ZERO,
    };
    Ok(vec![good, bad])
}

/// 300 tokens of a vocabulary of 50 rows of 80 columns.
fn run_embedding(dev: &Device, rng: &mut Inputs) -> Result<Row, Error> {
    let (vocab, width, tokens) = (50, 80, 300);
    let weights = rng.take(vocab * width);
    let ids: Vec<i32> = rng
        .take(tokens)
        .iter()
        .map(|&v| ((v + 2.0) * 12.5) as i32 % vocab as i32)
        .collect();
    let w = dev.tensor_from_slice(&weights, &[vocab, width])?;
    let id = dev.tensor_from_slice(&ids, &[tokens])?;
    let mut out = dev.zeros::<f32>(&[tokens, width])?;
    let grid = [tokens as u32];
    let time = timed(|| embedding_checked::<32>::launch(dev, grid, (&id, &w, &mut out)))?;
    let want: Vec<f64> = (0..tokens * width)
        .map(|i| f64::from(weights[ids[i / width] as usize * width + i % width]))
        .collect();
    let code = dev.kernel_code(&embedding_checked::<32>::kernel_spec())?;
    let shape = format!("[{tokens}] of [{vocab}, {width}]");
    Ok(row(
        "embedding (checked)",
        code,
        shape,
        &out.to_vec()?,
        &want,
        time,
    ))
}

/// Runs the checked normalization (and its failing launch) and lookup.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let mut rows = run_normalize(dev, rng)?;
    rows.push(run_embedding(dev, rng)?);
    Ok(rows)
}
