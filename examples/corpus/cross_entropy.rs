//! Cross-entropy loss and its gradient in one pass over the logits, as
//! Liger-Kernel computes them (`liger_kernel/ops/cross_entropy.py`,
//! `liger_cross_entropy_kernel`, without label smoothing, with the mean
//! over the rows whose target is not ignored): one program per row reads
//! the target's logit, finds the row's maximum and sum of exponentials
//! online over blocks of the vocabulary, then overwrites the logits with
//! the gradient `(softmax − onehot) / n` and stores the row's loss
//! `(logsumexp − x[y]) / n`. A row whose target is `ignore_index` gets a
//! zero gradient and loss. Liger's launcher takes blocks of
//! `min(65536 / 2, next_power_of_two(V))` = 32768 for LLaMA's 32000-word
//! vocabulary and 32 warps, 16 on ROCm (a wavefront there is 64 lanes).

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 32768),
    num_warps = 32,
    num_warps(gfx942 = 16),
    aligned(x),
    approx_math,
    allow(spills),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn cross_entropy<const BLOCK: usize>(
    x: &mut Tensor<f32, 2>,
    y: &Tensor<i64>,
    loss: &mut Tensor<f32>,
    n_non_ignore: f32,
    ignore_index: i64,
) {
    let row = program_id(0);
    let vocab = x.dim(1);
    let blocks = cdiv(vocab, BLOCK);
    let target = gather(y, [row]);
    let vx = partition_view(x, [1, BLOCK]);
    let vloss = partition_view(loss, [1]);
    if target == ignore_index {
        for i in 0..blocks {
            vx.store_masked(0.0, row, i);
        }
        vloss.store(0.0, row);
    } else {
        let label = target as i32;
        let x_y = gather(x, [row, label]);
        let mut m = full([1, 1], f32::NEG_INFINITY);
        let mut d = zeros::<f32>([1, 1]);
        for i in 0..blocks {
            let block = vx.load_masked_with(Padding::NegInf, row, i);
            let m_new = m.max(block.max_along_keepdim(1));
            d = d * (m - m_new).exp() + (block - m_new).exp().sum_keepdim(1);
            m = m_new;
        }
        let lse = m + d.ln();
        for i in 0..blocks {
            let block = vx.load_masked_with(Padding::NegInf, row, i);
            let g = (block - m).exp() / d / n_non_ignore;
            let column = iota::<i32>([1, BLOCK]) + i * BLOCK;
            vx.store_masked(select(column == label, g + -1.0 / n_non_ignore, g), row, i);
        }
        vloss.store(((lse - x_y) / n_non_ignore).reshape([1]), row);
    }
}

/// Loss and gradient of rows over LLaMA's vocabulary, one row ignored.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, vocab, ignore) = (4, 32000, -100i64);
    let logits: Vec<f32> = rng.take(rows * vocab).iter().map(|v| v * 4.0).collect();
    let targets = [17i64, ignore, 31999, 4096];
    let kept = targets.iter().filter(|&&t| t != ignore).count() as f32;
    let y = dev.tensor_from_slice(&targets, &[rows])?;
    let fresh = || dev.tensor_from_slice(&logits, &[rows, vocab]);
    let mut x = fresh()?;
    let mut loss = dev.zeros::<f32>(&[rows])?;
    let grid = [rows as u32];
    cross_entropy::<32768>::launch(dev, grid, (&mut x, &y, &mut loss, kept, ignore))?;
    let (mut want_grad, mut want_loss) = (Vec::new(), Vec::new());
    let n = f64::from(kept);
    for (row, &t) in logits.chunks(vocab).zip(&targets) {
        if t == ignore {
            want_grad.extend(std::iter::repeat_n(0.0, vocab));
            want_loss.push(0.0);
            continue;
        }
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f64 = row.iter().map(|&v| f64::from(v - max).exp()).sum();
        let lse = f64::from(max) + sum.ln();
        want_grad.extend(row.iter().enumerate().map(|(j, &v)| {
            let p = (f64::from(v) - lse).exp();
            (p - f64::from(u8::from(j as i64 == t))) / n
        }));
        want_loss.push((lse - f64::from(row[t as usize])) / n);
    }
    // In place: the timed launches overwrite copies.
    let err = max_error(&x.to_vec()?, &want_grad).max(max_error(&loss.to_vec()?, &want_loss));
    let mut x2 = fresh()?;
    let time = timed(|| {
        cross_entropy::<32768>::launch(dev, grid, (&mut x2, &y, &mut loss, kept, ignore))
    })?;
    Ok(vec![Row {
        kernel: "cross_entropy".into(),
        code: dev.kernel_code(&cross_entropy::<32768>::kernel_spec())?,
        shape: format!("[{rows}, {vocab}] f32"),
        max_error: err,
        tolerance: 1e-5,
        time,
    }])
}
