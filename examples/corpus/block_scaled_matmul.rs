//! The block-scaled matrix multiplication of Triton's tutorial
//! (`python/tutorials/10-block-scaled-matmul.py`, read at
//! 02ef6b5bc2009967dca78dba5809f4cb49890983, `block_scaled_matmul_kernel`
//! for the format "mxfp8"): E4M3 elements with one E8M0 scale per 32 along
//! K (OCP MXFP8), an f32 accumulator over `BK`-wide slabs of K, each a
//! `dot_scaled` (Triton's `tl.dot_scaled(a, scale_a, "e4m3", b, scale_b,
//! "e4m3", acc)`), the tile rounded to f16 as the tutorial's check and
//! benchmark store it, and program ids that walk M first. The tutorial
//! targets Blackwell's block-scaled tensor cores through TMA, with B stored
//! `[N, K]` and its scales packed in 128-row blocks that it unpacks to the
//! `[M, K / 32]` and `[N, K / 32]` `tl.dot_scaled` takes; this port (and
//! the Triton kernel it is compared with) reads plain tensors: B `[K, N]`
//! and the scales stored as `dot_scaled` takes them, loads and stores
//! masked at the edges where TMA clips. 128×128×128 tiles (the tutorial's
//! MXFP8 `BLOCK_K`; its 128×256 tile on 4 warps keeps the accumulator in
//! Blackwell's tensor memory, which no target here has), 8 warps, and the
//! tutorial's 4 stages.

use super::{product, widen_f16};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, f16, f8e4m3, f8e8m0, tile_kernel, Device, Error};

#[tile_kernel(
    configs(BM = 128, BN = 128, BK = 128),
    num_warps = 8,
    num_stages = 4,
    aligned(a, a_scale, b, b_scale, c),
    allow(spills),
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn block_scaled_matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f8e4m3, 2>,
    a_scale: &Tensor<f8e8m0, 2>,
    b: &Tensor<f8e4m3, 2>,
    b_scale: &Tensor<f8e8m0, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let pid = program_id(0);
    let tiles_m = cdiv(a.dim(0), BM);
    let (pid_m, pid_n) = (pid % tiles_m, pid / tiles_m);
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let sa = partition_view(a_scale, [BM, BK / 32]);
    let sb = partition_view(b_scale, [BN, BK / 32]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot_scaled(
            va.load_masked(pid_m, kk),
            sa.load_masked(pid_m, kk),
            vb.load_masked(kk, pid_n),
            sb.load_masked(pid_n, kk),
            acc,
        );
    }
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

/// Elements rounded to E4M3 from inputs in [-3, 3), and their values.
fn e4m3s(rng: &mut Inputs, n: usize) -> (Vec<f8e4m3>, Vec<f32>) {
    let stored: Vec<f8e4m3> = rng
        .take(n)
        .into_iter()
        .map(|v| f8e4m3::from_f32(v * 1.5))
        .collect();
    let values = stored.iter().map(|e| e.to_f32()).collect();
    (stored, values)
}

/// E8M0 scales, powers of two from 2⁻² to 2², and their values.
fn e8m0s(rng: &mut Inputs, n: usize) -> (Vec<f8e8m0>, Vec<f32>) {
    let stored: Vec<f8e8m0> = rng
        .take(n)
        .into_iter()
        .map(|v| f8e8m0::from_f32(v.round().exp2()))
        .collect();
    let values = stored.iter().map(|s| s.to_f32()).collect();
    (stored, values)
}

/// An operand as the product sees it (docs/semantics.md, "dot_scaled"):
/// each element times its group's scale, rounded to bf16. `values` holds
/// `rows × k` elements, row-major, or for B (`transposed`) `k × rows`;
/// `scales` holds `rows × k / 32`.
fn scaled(values: &[f32], scales: &[f32], (rows, k): (usize, usize), transposed: bool) -> Vec<f32> {
    let groups = k / 32;
    (0..values.len())
        .map(|i| {
            let (row, kk) = if transposed {
                (i % rows, i / rows)
            } else {
                (i / k, i % k)
            };
            bf16::from_f32(values[i] * scales[row * groups + kk / 32]).to_f32()
        })
        .collect()
}

/// A product whose M and N leave partial tiles, over four slabs of K (the
/// scales' rows 16 bytes, as `aligned` wants), with programs on both axes.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n, k) = (200, 144, 512);
    let (a_in, a_val) = e4m3s(rng, m * k);
    let (b_in, b_val) = e4m3s(rng, k * n);
    let (sa_in, sa_val) = e8m0s(rng, m * k / 32);
    let (sb_in, sb_val) = e8m0s(rng, n * k / 32);
    let a = dev.tensor_from_slice(&a_in, &[m, k])?;
    let b = dev.tensor_from_slice(&b_in, &[k, n])?;
    let a_scale = dev.tensor_from_slice(&sa_in, &[m, k / 32])?;
    let b_scale = dev.tensor_from_slice(&sb_in, &[n, k / 32])?;
    let mut c = dev.zeros::<f16>(&[m, n])?;
    let grid = [(m.div_ceil(128) * n.div_ceil(128)) as u32];
    let time = timed(|| {
        block_scaled_matmul::<128, 128, 128>::launch(
            dev,
            grid,
            (&a, &a_scale, &b, &b_scale, &mut c),
        )
    })?;
    let want = product(
        &scaled(&a_val, &sa_val, (m, k), false),
        &scaled(&b_val, &sb_val, (n, k), true),
        (m, n, k),
    );
    Ok(vec![Row {
        kernel: "block_scaled_matmul".into(),
        code: dev.kernel_code(&block_scaled_matmul::<128, 128, 128>::kernel_spec())?,
        shape: format!("[{m}, {k}] x [{k}, {n}] mxfp8"),
        max_error: max_error(&widen_f16(&c.to_vec()?), &want),
        // The product's f16 rounding (2⁻¹¹ relative) and f32 sums in any order.
        tolerance: 2e-3,
        time,
    }])
}
