//! The five example kernels written with the macro, launched on the CPU
//! device through the runtime, with partial edge tiles; results checked. The
//! crate forbids unsafe code: the expansion's one `unsafe` block (vouching
//! for its own compiled images) must not trip the lint in user crates.
#![forbid(unsafe_code)]
use tile::{tile_kernel, Device, Tensor};

#[tile_kernel(configs(BLOCK = 256))]
fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let px = partition_view(x, [BLOCK]);
    let py = partition_view(y, [BLOCK]);
    partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
}

#[tile_kernel(configs(BR = 2, BC = 64))]
fn softmax<const BR: usize, const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid = program_id(0);
    let t = partition_view(x, [BR, BC]).load_masked_with(Padding::NegInf, pid, 0);
    let e = (t - t.max_along_keepdim(1)).exp();
    partition_view(out, [BR, BC]).store_masked(e / e.sum_keepdim(1), pid, 0);
}

#[tile_kernel(configs(BR = 2, BC = 64))]
fn layernorm<const BR: usize, const BC: usize>(
    x: &Tensor<f32, 2>,
    w: &Tensor<f32>,
    bias: &Tensor<f32>,
    out: &mut Tensor<f32, 2>,
    eps: f32,
) {
    let pid = program_id(0);
    let cols = x.dim(1);
    let n = cols.cast::<f32>();
    let t = partition_view(x, [BR, BC]).load_masked(pid, 0);
    let mean = t.sum_keepdim(1) / n;
    let centered = select(iota::<i32>([BC]) < cols, t - mean, 0.0);
    let rstd = ((centered * centered).sum_keepdim(1) / n + eps).rsqrt();
    let wt = partition_view(w, [BC]).load_masked(0);
    let bt = partition_view(bias, [BC]).load_masked(0);
    partition_view(out, [BR, BC]).store_masked(centered * rstd * wt + bt, pid, 0);
}

#[tile_kernel(configs(BM = 16, BN = 16, BK = 8), num_warps = 2)]
fn matmul<const BM: usize, const BN: usize, const BK: usize>(a: &Tensor<f32, 2>, b: &Tensor<f32, 2>, c: &mut Tensor<f32, 2>) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let va = partition_view(a, [BM, BK]);
    let vb = partition_view(b, [BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

#[tile_kernel(configs(BM = 16, BN = 8))]
fn transpose<const BM: usize, const BN: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let t = partition_view(x, [BM, BN]).load_masked(pid_m, pid_n);
    partition_view(out, [BN, BM]).store_masked(t.transpose(), pid_n, pid_m);
}

fn data(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 37 + seed * 11) % 23) as f32 / 7.0 - 1.5).collect()
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} != {w}");
    }
}

fn main() -> Result<(), tile::Error> {
    let dev = Device::cpu();

    let n = 600;
    let (xs, ys) = (data(n, 1), data(n, 2));
    let x = dev.tensor_from_slice(&xs, &[n])?;
    let y = dev.tensor_from_slice(&ys, &[n])?;
    let mut out: Tensor<f32> = dev.zeros(&[n])?;
    vector_add::<256>::launch(&dev, [3], (&x, &y, &mut out))?;
    close(&out.to_vec()?, &xs.iter().zip(&ys).map(|(a, b)| a + b).collect::<Vec<_>>());

    let (rows, cols) = (5, 50);
    let xs = data(rows * cols, 3);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let mut out: Tensor<f32> = dev.zeros(&[rows, cols])?;
    softmax::<2, 64>::launch(&dev, [3], (&x, &mut out))?;
    let got = out.to_vec()?;
    for r in 0..rows {
        let row = &xs[r * cols..(r + 1) * cols];
        let m = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let s: f32 = row.iter().map(|v| (v - m).exp()).sum();
        close(&got[r * cols..(r + 1) * cols], &row.iter().map(|v| (v - m).exp() / s).collect::<Vec<_>>());
    }

    let (ws, bs) = (data(cols, 4), data(cols, 5));
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let b = dev.tensor_from_slice(&bs, &[cols])?;
    let mut out: Tensor<f32> = dev.zeros(&[rows, cols])?;
    layernorm::<2, 64>::launch(&dev, [3], (&x, &w, &b, &mut out, 1e-5))?;
    let got = out.to_vec()?;
    for r in 0..rows {
        let row = &xs[r * cols..(r + 1) * cols];
        let mean = row.iter().sum::<f32>() / cols as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / cols as f32;
        let want: Vec<f32> = (0..cols).map(|c| (row[c] - mean) / (var + 1e-5).sqrt() * ws[c] + bs[c]).collect();
        close(&got[r * cols..(r + 1) * cols], &want);
    }

    let (m, k, nn) = (20, 12, 18);
    let (av, bv) = (data(m * k, 6), data(k * nn, 7));
    let a = dev.tensor_from_slice(&av, &[m, k])?;
    let bt = dev.tensor_from_slice(&bv, &[k, nn])?;
    let mut c: Tensor<f32> = dev.zeros(&[m, nn])?;
    matmul::<16, 16, 8>::launch(&dev, [2, 2], (&a, &bt, &mut c))?;
    let want: Vec<f32> = (0..m * nn).map(|i| (0..k).map(|p| av[(i / nn) * k + p] * bv[p * nn + i % nn]).sum()).collect();
    close(&c.to_vec()?, &want);
    assert_eq!(matmul::<16, 16, 8>::INFO.num_warps, 2);

    let mut t: Tensor<f32> = dev.zeros(&[k, m])?;
    transpose::<16, 8>::launch(&dev, [2, 2], (&a, &mut t))?;
    close(&t.to_vec()?, &(0..m * k).map(|i| av[(i % m) * k + i / m]).collect::<Vec<_>>());

    // A rank mismatch is caught at launch and reported as an error.
    let flat = dev.tensor_from_slice(&xs, &[rows * cols])?;
    let mut out: Tensor<f32> = dev.zeros(&[rows, cols])?;
    assert!(softmax::<2, 64>::launch(&dev, [1], (&flat, &mut out)).is_err());
    Ok(())
}
