//! `while` loops in kernels on the CPU device and in the interpreter,
//! against plain Rust: Newton's square root run until a block converges (a
//! tile carried, the condition a reduction), a scalar search, nesting with
//! `for` and `if`, a loop that never runs, and the iteration limit.

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Error, Tensor};

/// Newton's iteration for `sqrt(a)` on each block of `B` elements, until
/// every element of the block is within `tol` (or 40 steps); `steps[p]` is
/// the number of steps program `p` took.
#[tile_kernel(configs(B = 16))]
fn newton_sqrt<const B: usize>(
    a: &Tensor<f32>,
    root: &mut Tensor<f32>,
    steps: &mut Tensor<i32>,
    tol: f32,
) {
    let pid = program_id(0);
    let x = partition_view(a, [B]).load(pid);
    let mut r = x + 1.0;
    let mut n = 0;
    while n < 40 && (r * r - x).abs().max_along(0) > tol {
        r = (r + x / r) * 0.5;
        n += 1;
    }
    partition_view(root, [B]).store(r, pid);
    partition_view(steps, [1]).store(full([1], n), pid);
}

fn newton_reference(a: &[f32], block: usize, tol: f32) -> (Vec<f32>, Vec<i32>) {
    let mut roots = Vec::new();
    let mut steps = Vec::new();
    for chunk in a.chunks(block) {
        let mut r: Vec<f32> = chunk.iter().map(|x| x + 1.0).collect();
        let mut n = 0;
        let error = |r: &[f32]| {
            r.iter()
                .zip(chunk)
                .map(|(r, x)| (r * r - x).abs())
                .fold(f32::NEG_INFINITY, f32::max)
        };
        while n < 40 && error(&r) > tol {
            for (r, x) in r.iter_mut().zip(chunk) {
                *r = (*r + x / *r) * 0.5;
            }
            n += 1;
        }
        roots.extend(r);
        steps.push(n);
    }
    (roots, steps)
}

#[test]
fn newton_runs_until_each_block_converges() {
    let dev = Device::cpu();
    // Block p holds values near 10^p: later blocks need more steps.
    let a: Vec<f32> = (0..64)
        .map(|i| 10f32.powi(i / 16) * (1.0 + (i % 16) as f32 * 0.37))
        .collect();
    let (want_roots, want_steps) = newton_reference(&a, 16, 1e-3);
    assert!(
        want_steps.windows(2).all(|w| w[0] < w[1]),
        "the blocks take different step counts: {want_steps:?}"
    );
    let at = dev.tensor_from_slice(&a, &[64]).unwrap();
    let mut root: Tensor<f32> = dev.zeros(&[64]).unwrap();
    let mut steps: Tensor<i32> = dev.zeros(&[4]).unwrap();
    newton_sqrt::<16>::launch(&dev, [4], (&at, &mut root, &mut steps, 1e-3)).unwrap();
    assert_eq!(root.to_vec().unwrap(), want_roots);
    assert_eq!(steps.to_vec().unwrap(), want_steps);
    // The interpreter agrees.
    let at = HostTensor::from_vec(&[64], a).unwrap();
    let mut root = HostTensor::zeros(tile::ir::DType::F32, &[64]);
    let mut steps = HostTensor::zeros(tile::ir::DType::I32, &[4]);
    newton_sqrt::<16>::interpret([4], (&at, &mut root, &mut steps, 1e-3)).unwrap();
    assert_eq!(root.to_vec::<f32>().unwrap(), want_roots);
    assert_eq!(steps.to_vec::<i32>().unwrap(), want_steps);
}

/// For each program's row of `x` (`[rows, n]`), the index of the first
/// block of `B` columns holding an element above `limit` (`-1` if none),
/// found by a scan over the blocks that stops at the first hit; `visited`
/// counts the blocks read.
#[tile_kernel(configs(B = 8))]
fn first_block_above<const B: usize>(x: &Tensor<f32, 2>, found: &mut Tensor<i32, 2>, limit: f32) {
    let pid = program_id(0);
    let blocks = cdiv(x.dim(1), B as i32);
    let view = partition_view(x, [1, B]);
    let mut k = 0;
    let mut hit = -1;
    let mut visited = 0;
    while hit < 0 && k < blocks {
        let t = view.load_masked(pid, k);
        if t.max_along(1).max_along(0) > limit {
            hit = k;
        }
        visited += 1;
        k += 1;
    }
    let out = iota::<i32>([1, 2]);
    partition_view(found, [1, 2]).store(select(out == 0, hit, visited), pid, 0);
}

#[test]
fn a_search_stops_at_the_first_hit() {
    let dev = Device::cpu();
    let (rows, n) = (5, 37);
    // Row r's first value above 10 is at column 9r - 1 (none in row 0,
    // and none in row 4, where 35 is past the end of the 37 columns ... and
    // where a value exactly at the limit does not count).
    let mut x = vec![0.0f32; rows * n];
    for r in 1..rows - 1 {
        x[r * n + 9 * r - 1] = 11.0;
        x[r * n + n - 1] = 50.0;
    }
    x[(rows - 1) * n + 3] = 10.0;
    let want: Vec<i32> = (0..rows)
        .flat_map(|r| {
            let row = &x[r * n..(r + 1) * n];
            let blocks = n.div_ceil(8);
            let hit =
                (0..blocks).find(|&k| row[k * 8..((k + 1) * 8).min(n)].iter().any(|&v| v > 10.0));
            match hit {
                Some(k) => [k as i32, k as i32 + 1],
                None => [-1, blocks as i32],
            }
        })
        .collect();
    assert_eq!(want[2..4], [1, 2]);
    let xt = dev.tensor_from_slice(&x, &[rows, n]).unwrap();
    let mut found: Tensor<i32> = dev.zeros(&[rows, 2]).unwrap();
    first_block_above::<8>::launch(&dev, [rows as u32], (&xt, &mut found, 10.0)).unwrap();
    assert_eq!(found.to_vec().unwrap(), want);
    let xt = HostTensor::from_vec(&[rows, n], x).unwrap();
    let mut found = HostTensor::zeros(tile::ir::DType::I32, &[rows, 2]);
    first_block_above::<8>::interpret([rows as u32], (&xt, &mut found, 10.0)).unwrap();
    assert_eq!(found.to_vec::<i32>().unwrap(), want);
}

/// `out[p] = Σ_{i < p} (number of halvings from 2^i down to 1)`: a `while`
/// inside a `for`, then a `for` inside a `while` that does not run when
/// `skip` holds.
#[tile_kernel]
fn nested(out: &mut Tensor<i64>, skip: bool) {
    let pid = program_id(0);
    let mut total = 0i64;
    for i in 0..pid {
        let mut v = 1i64 << (i as i64);
        while v > 1 {
            v = v / 2;
            total += 1;
        }
    }
    let mut rounds = 0;
    while !skip && rounds < 2 {
        for _ in 0..3 {
            total += 100;
        }
        rounds += 1;
    }
    partition_view(out, [1]).store(full([1], total), pid);
}

#[test]
fn while_and_for_nest_both_ways() {
    let dev = Device::cpu();
    for skip in [false, true] {
        let mut out: Tensor<i64> = dev.zeros(&[6]).unwrap();
        nested::launch(&dev, [6], (&mut out, skip)).unwrap();
        let extra = if skip { 0 } else { 600 };
        let want: Vec<i64> = (0..6).map(|p| p * (p - 1) / 2 + extra).collect();
        assert_eq!(out.to_vec().unwrap(), want, "skip = {skip}");
        let mut out = HostTensor::zeros(tile::ir::DType::I64, &[6]);
        nested::interpret([6], (&mut out, skip)).unwrap();
        assert_eq!(out.to_vec::<i64>().unwrap(), want, "skip = {skip}");
    }
}

/// Counts up from `start` by `step` while below `end`.
#[tile_kernel]
fn count(out: &mut Tensor<i64>, start: i64, end: i64, step: i64) {
    let mut i = start;
    let mut n = 0i64;
    while i < end {
        i += step;
        n += 1;
    }
    partition_view(out, [1]).store(full([1], n), 0);
}

#[test]
fn a_loop_past_the_iteration_limit_is_an_error_naming_it() {
    let dev = Device::cpu();
    let mut out: Tensor<i64> = dev.zeros(&[1]).unwrap();
    count::launch(&dev, [1], (&mut out, 0, 1000, 1)).unwrap();
    assert_eq!(out.to_vec().unwrap(), [1000]);
    // A step of 0 never reaches the end: the CPU device stops it.
    let err = count::launch(&dev, [1], (&mut out, 0, 1, 0)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("kernel `count` failed on device cpu: program (0, 0, 0): `while i < end {..}` at tests/while_loops.rs:"),
        "{text}"
    );
    assert!(text.contains("iterations"), "{text}");
}
