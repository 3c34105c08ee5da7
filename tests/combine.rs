//! Reductions and scans with a combine function written in the kernel
//! (`x.reduce(axis, |a, b| ..)`, `reduce((v, i), axis, ..)`, `x.scan(..)`,
//! a `#[tile_fn]` helper as the function) on the CPU device and in the
//! interpreter, against plain Rust folding in the same order.

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Tensor};

/// Per row of `x` (`[R, C]` blocks): the largest `|x|` with its first column
/// (a two-tile reduce), the builtin `argmax` of `|x|` to compare, and the
/// decayed running sum `acc · decay + x` along the row (a scan whose
/// closure reads the kernel's `decay`).
#[tile_kernel(configs(R = 4, C = 32))]
fn rows<const R: usize, const C: usize>(
    x: &Tensor<f32, 2>,
    best: &mut Tensor<f32, 2>,
    at: &mut Tensor<i32, 2>,
    builtin: &mut Tensor<i32, 2>,
    decayed: &mut Tensor<f32, 2>,
    decay: f32,
) {
    let pid = program_id(0);
    let t = partition_view(x, [R, C]).load(pid, 0).abs();
    let cols = iota::<i32>([1, C]).broadcast_to([R, C]);
    let (m, i) = reduce_keepdim((t, cols), 1, |(a, ai), (b, bi)| {
        let take = b > a;
        (select(take, b, a), select(take, bi, ai))
    });
    partition_view(best, [R, 1]).store(m, pid, 0);
    partition_view(at, [R, 1]).store(i, pid, 0);
    partition_view(builtin, [R, 1]).store(t.argmax_keepdim(1), pid, 0);
    let d = t.scan(1, |acc, next| acc * decay + next);
    partition_view(decayed, [R, C]).store(d, pid, 0);
}

#[test]
fn two_tile_reductions_and_scans_fold_rows_left_to_right() {
    let dev = Device::cpu();
    let (rows_n, cols_n) = (8, 32);
    let x: Vec<f32> = (0..rows_n * cols_n)
        .map(|i| ((i * 53 + 7) % 61) as f32 * 0.5 - 15.0)
        .collect();
    let decay = 0.75f32;
    let mut want_best = Vec::new();
    let mut want_at = Vec::new();
    let mut want_decayed = Vec::new();
    for row in x.chunks(cols_n) {
        let abs: Vec<f32> = row.iter().map(|v| v.abs()).collect();
        let (mut m, mut i) = (abs[0], 0);
        for (k, &v) in abs.iter().enumerate().skip(1) {
            if v > m {
                (m, i) = (v, k as i32);
            }
        }
        want_best.push(m);
        want_at.push(i);
        let mut acc = abs[0];
        want_decayed.push(acc);
        for &v in &abs[1..] {
            acc = acc * decay + v;
            want_decayed.push(acc);
        }
    }
    let xt = dev.tensor_from_slice(&x, &[rows_n, cols_n]).unwrap();
    let mut best: Tensor<f32> = dev.zeros(&[rows_n, 1]).unwrap();
    let mut at: Tensor<i32> = dev.zeros(&[rows_n, 1]).unwrap();
    let mut builtin: Tensor<i32> = dev.zeros(&[rows_n, 1]).unwrap();
    let mut decayed: Tensor<f32> = dev.zeros(&[rows_n, cols_n]).unwrap();
    rows::<4, 32>::launch(
        &dev,
        [2],
        (&xt, &mut best, &mut at, &mut builtin, &mut decayed, decay),
    )
    .unwrap();
    assert_eq!(best.to_vec().unwrap(), want_best);
    assert_eq!(at.to_vec().unwrap(), want_at);
    assert_eq!(builtin.to_vec().unwrap(), want_at);
    assert_eq!(decayed.to_vec().unwrap(), want_decayed);
    // The interpreter agrees.
    let xh = HostTensor::from_vec(&[rows_n, cols_n], x).unwrap();
    let mut best = HostTensor::zeros(tile::ir::DType::F32, &[rows_n, 1]);
    let mut at = HostTensor::zeros(tile::ir::DType::I32, &[rows_n, 1]);
    let mut builtin = HostTensor::zeros(tile::ir::DType::I32, &[rows_n, 1]);
    let mut decayed = HostTensor::zeros(tile::ir::DType::F32, &[rows_n, cols_n]);
    rows::<4, 32>::interpret(
        [2],
        (&xh, &mut best, &mut at, &mut builtin, &mut decayed, decay),
    )
    .unwrap();
    assert_eq!(best.to_vec::<f32>().unwrap(), want_best);
    assert_eq!(at.to_vec::<i32>().unwrap(), want_at);
    assert_eq!(decayed.to_vec::<f32>().unwrap(), want_decayed);
}

/// `out[p]` = the alternating fold `((x0 − x1) − x2) …` of block `p` of
/// `x`, by a helper (not associative: only the left-to-right order gives
/// it), to a scalar.
#[tile_kernel(configs(B = 16))]
fn alternating<const B: usize>(x: &Tensor<i64>, out: &mut Tensor<i64>) {
    #[tile_fn]
    fn minus(acc: Tile, next: Tile) -> Tile {
        acc - next
    }
    let pid = program_id(0);
    let t = partition_view(x, [B]).load(pid);
    let folded = t.reduce(0, minus);
    partition_view(out, [1]).store(full([1], folded), pid);
}

#[test]
fn a_helper_folds_a_block_to_a_scalar_in_order() {
    let dev = Device::cpu();
    let x: Vec<i64> = (0..48).map(|i| i * i - 40).collect();
    let want: Vec<i64> = x
        .chunks(16)
        .map(|b| b[1..].iter().fold(b[0], |acc, v| acc - v))
        .collect();
    let xt = dev.tensor_from_slice(&x, &[48]).unwrap();
    let mut out: Tensor<i64> = dev.zeros(&[3]).unwrap();
    alternating::<16>::launch(&dev, [3], (&xt, &mut out)).unwrap();
    assert_eq!(out.to_vec().unwrap(), want);
    let mut out = HostTensor::zeros(tile::ir::DType::I64, &[3]);
    alternating::<16>::interpret([3], (&HostTensor::from_vec(&[48], x).unwrap(), &mut out))
        .unwrap();
    assert_eq!(out.to_vec::<i64>().unwrap(), want);
}
