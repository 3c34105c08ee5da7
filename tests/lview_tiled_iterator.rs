//! Mojo's `tiled_iterator` on layout views, walked by `for`: a matmul whose
//! K loop zips the tiles of `a`'s row and `b`'s column (for a K its tiles
//! divide, and one whose last tiles are edge tiles), and a sum of the first
//! tiles of each row (`take`), on the CPU device and in the interpreter,
//! against plain Rust.

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Tensor};

/// `c = a · b` for `a: [M, K]`, `b: [K, N]` row-major, one `[BM, BN]` tile
/// of `c` per program; the K loop walks `a`'s tiles along its columns and
/// `b`'s along its rows in step. With a K of 50 the last tiles are edge
/// tiles, whose padding zeros add nothing.
#[tile_kernel(
    configs(M = 32, N = 48, K = 64, BM = 16, BN = 16, BK = 16),
    configs(M = 32, N = 16, K = 50, BM = 16, BN = 16, BK = 16)
)]
fn matmul<
    const M: usize,
    const N: usize,
    const K: usize,
    const BM: usize,
    const BN: usize,
    const BK: usize,
>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pm, pn) = (program_id(0), program_id(1));
    let va = layout_view(a, (M, K), (K, 1));
    let vb = layout_view(b, (K, N), (N, 1));
    let mut acc = zeros::<f32>([BM, BN]);
    for (ta, tb) in va
        .tiled_iterator([BM, BK], 1, pm, 0)
        .zip(vb.tiled_iterator([BK, BN], 0, 0, pn))
    {
        acc = dot_ieee(ta.load_masked(), tb.load_masked(), acc);
    }
    layout_view(c, (M, N), (N, 1))
        .tile([BM, BN], pm, pn)
        .store(acc);
}

/// `out[r]` = the sum of row `r`'s first `blocks` tiles of 8 from tile
/// `from` on (all of them when fewer remain).
#[tile_kernel(configs(R = 4, C = 40))]
fn partial_rows<const R: usize, const C: usize>(
    x: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
    from: i32,
    blocks: i32,
) {
    let mut total = zeros::<f32>([R, 1]);
    for t in layout_view(x, (R, C), (C, 1))
        .tiled_iterator([R, 8], 1, 0, from)
        .take(blocks)
    {
        total = total + t.load().sum_keepdim(1);
    }
    layout_view(out, (R, 1), (1, 1)).store(total);
}

fn matmul_reference(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize)) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc = a[i * k + p].mul_add(b[p * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
    c
}

/// `a` and `b` of `(m, n, k)`, their product on the CPU device and in the
/// interpreter by `launch` and `interpret`, and the reference product.
fn check_matmul(
    (m, n, k): (usize, usize, usize),
    launch: impl Fn(&Device, &Tensor<f32>, &Tensor<f32>, &mut Tensor<f32>),
    interpret: impl Fn(&HostTensor, &HostTensor, &mut HostTensor),
) {
    let dev = Device::cpu();
    let a: Vec<f32> = (0..m * k)
        .map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.0)
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|i| ((i * 5) % 11) as f32 * 0.5 - 2.0)
        .collect();
    let want = matmul_reference(&a, &b, (m, n, k));
    let at = dev.tensor_from_slice(&a, &[m, k]).unwrap();
    let bt = dev.tensor_from_slice(&b, &[k, n]).unwrap();
    let mut c: Tensor<f32> = dev.zeros(&[m, n]).unwrap();
    launch(&dev, &at, &bt, &mut c);
    assert_eq!(c.to_vec().unwrap(), want, "{m}x{n}x{k} on the CPU device");
    let ah = HostTensor::from_vec(&[m, k], a).unwrap();
    let bh = HostTensor::from_vec(&[k, n], b).unwrap();
    let mut ch = HostTensor::zeros(tile::ir::DType::F32, &[m, n]);
    interpret(&ah, &bh, &mut ch);
    assert_eq!(ch.to_vec::<f32>().unwrap(), want, "{m}x{n}x{k} interpreted");
}

#[test]
fn a_zipped_walk_drives_a_matmuls_k_loop() {
    check_matmul(
        (32, 48, 64),
        |dev, a, b, c| {
            matmul::<32, 48, 64, 16, 16, 16>::launch(dev, [2, 3], (a, b, c)).unwrap();
        },
        |a, b, c| {
            matmul::<32, 48, 64, 16, 16, 16>::interpret([2, 3], (a, b, c)).unwrap();
        },
    );
}

#[test]
fn a_walk_ends_in_edge_tiles() {
    check_matmul(
        (32, 16, 50),
        |dev, a, b, c| {
            matmul::<32, 16, 50, 16, 16, 16>::launch(dev, [2, 1], (a, b, c)).unwrap();
        },
        |a, b, c| {
            matmul::<32, 16, 50, 16, 16, 16>::interpret([2, 1], (a, b, c)).unwrap();
        },
    );
}

#[test]
fn take_stops_a_walk_early_and_the_view_ends_it() {
    let dev = Device::cpu();
    let x: Vec<f32> = (0..4 * 40).map(|i| (i % 17) as f32 - 8.0).collect();
    let xt = dev.tensor_from_slice(&x, &[4, 40]).unwrap();
    // Five tiles of 8 per row: from tile 1, two tiles; from tile 3, all
    // that remain (two) though ten are asked; from tile 5, none.
    for (from, blocks, tiles) in [(1, 2, 1..3), (3, 10, 3..5), (5, 3, 5..5)] {
        let want: Vec<f32> = x
            .chunks(40)
            .map(|row| {
                tiles
                    .clone()
                    .map(|t| row[t * 8..(t + 1) * 8].iter().sum::<f32>())
                    .sum::<f32>()
            })
            .collect();
        let mut out: Tensor<f32> = dev.zeros(&[4, 1]).unwrap();
        partial_rows::<4, 40>::launch(&dev, [1], (&xt, &mut out, from, blocks)).unwrap();
        let got = out.to_vec().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-4, "from {from}: {got:?} vs {want:?}");
        }
        let mut oh = HostTensor::zeros(tile::ir::DType::F32, &[4, 1]);
        let xh = HostTensor::from_vec(&[4, 40], x.clone()).unwrap();
        partial_rows::<4, 40>::interpret([1], (&xh, &mut oh, from, blocks)).unwrap();
        assert_eq!(oh.to_vec::<f32>().unwrap(), got, "from {from}");
    }
}
