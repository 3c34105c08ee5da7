//! Edge tiles of layout views (Mojo's masked `tile`) in kernels: tile
//! extents that do not divide the view, on the CPU device and in the
//! interpreter, against plain Rust. A transpose in 32×32 tiles of a 70×45
//! matrix, `fill` and `copy_from` on edge tiles, and the error of an
//! unmasked load of a partial tile (a `tiled_iterator` that ends in edge
//! tiles is in `tests/lview_tiled_iterator.rs`).

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Tensor};

/// `out = xᵀ` for `x: [M, N]` row-major, one `[B, B]` tile per program;
/// the tiles at the right and bottom edges are partial.
#[tile_kernel(configs(M = 70, N = 45, B = 32))]
fn transpose<const M: usize, const N: usize, const B: usize>(
    x: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let (pm, pn) = (program_id(0), program_id(1));
    let t = layout_view(x, (M, N), (N, 1))
        .tile([B, B], pm, pn)
        .load_masked();
    layout_view(out, (N, M), (M, 1))
        .transpose()
        .tile([B, B], pm, pn)
        .store_masked(t);
}

/// Every 4×4 tile of `out` (`M × N` row-major, followed by other data)
/// filled with its program's number; tile `(pm, pn)` of `copy` from the
/// same tile of `x`.
#[tile_kernel(configs(M = 10, N = 7))]
fn fill_and_copy<const M: usize, const N: usize>(
    x: &Tensor<f32>,
    out: &mut Tensor<f32>,
    copy: &mut Tensor<f32>,
) {
    let (pm, pn) = (program_id(0), program_id(1));
    let id = (pm * num_programs(1) + pn) as f32;
    layout_view(out, (M, N), (N, 1))
        .tile([4, 4], pm, pn)
        .fill(id);
    layout_view(copy, (M, N), (N, 1))
        .tile([4, 4], pm, pn)
        .copy_from(layout_view(x, (M, N), (N, 1)).tile([4, 4], pm, pn));
}

/// Tile `(i, j)` of 4×4 of a 10×7 `x` loaded unmasked into `out`.
#[tile_kernel]
fn unmasked(x: &Tensor<f32>, out: &mut Tensor<f32>, i: i32, j: i32) {
    let t = layout_view(x, (10, 7), (7, 1)).tile([4, 4], i, j).load();
    layout_view(out, (4, 4), (4, 1)).store(t);
}

fn counting(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32 + 1.0).collect()
}

#[test]
fn a_transpose_in_edge_tiles_moves_every_element_once() {
    let (m, n) = (70, 45);
    let x = counting(m * n);
    let mut want = vec![0.0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            want[c * m + r] = x[r * n + c];
        }
    }
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32];
    let dev = Device::cpu();
    let xt = dev.tensor_from_slice(&x, &[m, n]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[n, m]).unwrap();
    transpose::<70, 45, 32>::launch(&dev, grid, (&xt, &mut out)).unwrap();
    assert_eq!(out.to_vec().unwrap(), want);

    let xt = HostTensor::from_vec(&[m, n], x).unwrap();
    let mut out = HostTensor::zeros(tile::ir::DType::F32, &[n, m]);
    transpose::<70, 45, 32>::interpret([grid[0], grid[1], 1], (&xt, &mut out)).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn fill_and_copy_from_stop_at_the_edge() {
    // 10×7 in tiles of 4×4: a grid of 3×2, and 5 elements after the view
    // that nothing may write.
    let (m, n, after) = (10, 7, 5);
    let x = counting(m * n);
    let mut fill_want = vec![-1.0f32; m * n + after];
    let mut copy_want = vec![-1.0f32; m * n + after];
    for r in 0..m {
        for c in 0..n {
            fill_want[r * n + c] = ((r / 4) * 2 + c / 4) as f32;
            copy_want[r * n + c] = x[r * n + c];
        }
    }
    let dev = Device::cpu();
    let xt = dev.tensor_from_slice(&x, &[m * n]).unwrap();
    let mut out = dev
        .tensor_from_slice(&vec![-1.0f32; m * n + after], &[m * n + after])
        .unwrap();
    let mut copy = dev
        .tensor_from_slice(&vec![-1.0f32; m * n + after], &[m * n + after])
        .unwrap();
    fill_and_copy::<10, 7>::launch(&dev, [3, 2], (&xt, &mut out, &mut copy)).unwrap();
    assert_eq!(out.to_vec().unwrap(), fill_want);
    assert_eq!(copy.to_vec().unwrap(), copy_want);

    let xt = HostTensor::from_vec(&[m * n], x).unwrap();
    let mut out = HostTensor::from_vec(&[m * n + after], vec![-1.0f32; m * n + after]).unwrap();
    let mut copy = out.clone();
    fill_and_copy::<10, 7>::interpret([3, 2, 1], (&xt, &mut out, &mut copy)).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), fill_want);
    assert_eq!(copy.to_vec::<f32>().unwrap(), copy_want);
}

#[test]
fn an_unmasked_load_of_a_partial_tile_is_an_error() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&counting(70), &[70]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[16]).unwrap();
    // Tile (1, 0) is whole.
    unmasked::launch(&dev, [1], (&x, &mut out, 1, 0)).unwrap();
    let want: Vec<f32> = (0..16)
        .map(|e| ((4 + e / 4) * 7 + e % 4 + 1) as f32)
        .collect();
    assert_eq!(out.to_vec().unwrap(), want);
    // Tile (2, 1) has 2 rows and 3 columns.
    let err = unmasked::launch(&dev, [1], (&x, &mut out, 2, 1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the layout view is an edge tile of 2 element(s) along mode 0, not the whole tile an unmasked access needs (use the masked form)")
            && err.contains("lview_load"),
        "{err}"
    );
    let xt = HostTensor::from_vec(&[70], counting(70)).unwrap();
    let mut out = HostTensor::zeros(tile::ir::DType::F32, &[16]);
    let err = unmasked::interpret([1, 1, 1], (&xt, &mut out, 2, 1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("element [2, 0] of the layout view (4,4):(7,1) is past the edge tile's extent 2 along mode 0 (use the masked form)"),
        "{err}"
    );
}
