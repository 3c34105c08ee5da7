//! The matmul benchmarks: `C = A · B` with A `[M, K]` and B `[K, N]`
//! row-major, f16, bf16 or FP8 (E4M3) in, f32 accumulation, f16 out (as
//! cuBLAS through PyTorch, and Triton's tutorial kernel). Program instances
//! take their tiles of C in groups of `G` rows of tiles, so that a wave of
//! them shares panels of A and B in L2 (Triton's tutorial does the same).

use super::{Bench, Case, Inputs, Peak, Problem};
use tile::autotune::Candidate;
use tile::{bf16, f16, f8e4m3, tile_kernel, Device, Error, LaunchArg};

/// What every matmul below computes: the tile of C that program `pid` owns,
/// in grouped order, and its product in f32.
mod product {
    use tile::tile_fn;

    /// `(A · B for the tile, its row of tiles, its column of tiles)`, for the
    /// calling kernel's `BM`, `BN`, `BK` and `G`.
    #[tile_fn]
    pub(crate) fn grouped_product(a: Tensor, b: Tensor) -> (Tile, i32, i32) {
        let pid = program_id(0);
        let (tiles_m, tiles_n) = (cdiv(a.dim(0), BM), cdiv(b.dim(1), BN));
        let group = G * tiles_n;
        let first_m = pid / group * G;
        let rows = min(tiles_m - first_m, G);
        let (pid_m, pid_n) = (first_m + pid % group % rows, pid % group / rows);
        let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
        let mut acc = zeros::<f32>([BM, BN]);
        for kk in 0..cdiv(a.dim(1), BK) {
            acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
        }
        (acc, pid_m, pid_n)
    }
}

#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_product),
    targets = "sm_80,sm_90a,gfx942",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 64, G = 8),
    configs(BM = 128, BN = 256, BK = 64, G = 8, targets = "sm_90a")
)]
pub fn matmul_f16<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product(a, b);
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

/// The same with its operands copied by Hopper's TMA.
#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_product),
    tma,
    targets = "sm_90a",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 64, G = 8),
    configs(BM = 128, BN = 256, BK = 64, G = 8)
)]
pub fn matmul_f16_tma<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product(a, b);
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

/// The bf16 matmul.
#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_product),
    targets = "sm_80,sm_90a,gfx942",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 64, G = 8),
    configs(BM = 128, BN = 256, BK = 64, G = 8, targets = "sm_90a")
)]
pub fn matmul_bf16<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<bf16, 2>,
    b: &Tensor<bf16, 2>,
    c: &mut Tensor<bf16, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product(a, b);
    partition_view(c, [BM, BN]).store_masked(acc.cast::<bf16>(), pid_m, pid_n);
}

/// The bf16 matmul with its operands copied by Hopper's TMA.
#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_product),
    tma,
    targets = "sm_90a",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 64, G = 8),
    configs(BM = 128, BN = 256, BK = 64, G = 8)
)]
pub fn matmul_bf16_tma<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<bf16, 2>,
    b: &Tensor<bf16, 2>,
    c: &mut Tensor<bf16, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product(a, b);
    partition_view(c, [BM, BN]).store_masked(acc.cast::<bf16>(), pid_m, pid_n);
}

/// The FP8 matmul (E4M3 in, f16 out), on the GPUs with an FP8 `mma`.
#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_product),
    targets = "sm_90a",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 64, G = 8),
    configs(BM = 64, BN = 128, BK = 128, G = 8)
)]
pub fn matmul_f8<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<f8e4m3, 2>,
    b: &Tensor<f8e4m3, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product(a, b);
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

/// The input dtypes benchmarked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// f16 in, f16 out.
    F16,
    /// bf16 in, bf16 out.
    Bf16,
    /// E4M3 in, f16 out.
    F8,
}

/// A candidate of an `[m, k] · [k, n]` problem: its spec, and a grid of one
/// program per tile of C.
fn candidate(
    spec: tile::KernelSpec,
    (m, n): (usize, usize),
    (bm, bn): (usize, usize),
) -> Candidate {
    let tiles = m.div_ceil(bm) * n.div_ceil(bn);
    Candidate {
        spec,
        grid: [tiles as u32, 1, 1],
    }
}

/// The matmul of a square problem of side `size` in `dtype`.
pub fn bench(dev: &Device, dtype: Dtype, size: usize) -> Result<Option<Bench>, Error> {
    let (m, n, k) = (size, size, size);
    let mut rng = Inputs::default();
    let (a32, b32) = (rng.take(m * k), rng.take(k * n));
    let case = |name: &str, peak| Case {
        name: name.into(),
        kind: match dtype {
            Dtype::F16 => "matmul_f16",
            Dtype::Bf16 => "matmul_bf16",
            Dtype::F8 => "matmul_fp8",
        },
        params: vec![("m", m), ("n", n), ("k", k)],
        problem: Problem::Flops(2.0 * (m * n * k) as f64, peak),
    };
    // The inputs as the kernel sees them, widened back for the reference.
    let (bench, a_in, b_in, got) = match dtype {
        Dtype::F16 => {
            let (a, b) = (half(&a32), half(&b32));
            let (at, bt) = (
                dev.tensor_from_slice(&a, &[m, k])?,
                dev.tensor_from_slice(&b, &[k, n])?,
            );
            let mut c = dev.zeros::<f16>(&[m, n])?;
            let candidates = [
                candidate(
                    matmul_f16_tma::<128, 128, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 128),
                ),
                candidate(
                    matmul_f16_tma::<128, 256, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 256),
                ),
                candidate(
                    matmul_f16::<128, 128, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 128),
                ),
                candidate(
                    matmul_f16::<128, 256, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 256),
                ),
            ];
            let args: Vec<LaunchArg<'_>> = vec![(&at).into(), (&bt).into(), (&mut c).into()];
            let Some(bench) = Bench::run(dev, case("matmul f16", Peak::Half), &candidates, args)?
            else {
                return Ok(None);
            };
            let got = c.to_vec()?.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
            (bench, widen(&a, f16::to_f32), widen(&b, f16::to_f32), got)
        }
        Dtype::Bf16 => {
            let a: Vec<bf16> = a32.iter().map(|&v| bf16::from_f32(v)).collect();
            let b: Vec<bf16> = b32.iter().map(|&v| bf16::from_f32(v)).collect();
            let (at, bt) = (
                dev.tensor_from_slice(&a, &[m, k])?,
                dev.tensor_from_slice(&b, &[k, n])?,
            );
            let mut c = dev.zeros::<bf16>(&[m, n])?;
            let candidates = [
                candidate(
                    matmul_bf16_tma::<128, 128, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 128),
                ),
                candidate(
                    matmul_bf16_tma::<128, 256, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 256),
                ),
                candidate(
                    matmul_bf16::<128, 128, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 128),
                ),
                candidate(
                    matmul_bf16::<128, 256, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 256),
                ),
            ];
            let args: Vec<LaunchArg<'_>> = vec![(&at).into(), (&bt).into(), (&mut c).into()];
            let Some(bench) = Bench::run(dev, case("matmul bf16", Peak::Half), &candidates, args)?
            else {
                return Ok(None);
            };
            let got = c.to_vec()?.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
            (bench, widen(&a, bf16::to_f32), widen(&b, bf16::to_f32), got)
        }
        Dtype::F8 => {
            let round = |v: &[f32]| -> Vec<f8e4m3> {
                v.iter().map(|&x| f8e4m3::from_f64(x.into())).collect()
            };
            let (a, b) = (round(&a32), round(&b32));
            let (at, bt) = (
                dev.tensor_from_slice(&a, &[m, k])?,
                dev.tensor_from_slice(&b, &[k, n])?,
            );
            let mut c = dev.zeros::<f16>(&[m, n])?;
            let candidates = [
                candidate(
                    matmul_f8::<128, 128, 64, 8>::kernel_spec(),
                    (m, n),
                    (128, 128),
                ),
                candidate(
                    matmul_f8::<64, 128, 128, 8>::kernel_spec(),
                    (m, n),
                    (64, 128),
                ),
            ];
            let args: Vec<LaunchArg<'_>> = vec![(&at).into(), (&bt).into(), (&mut c).into()];
            let Some(bench) =
                Bench::run(dev, case("matmul fp8 e4m3", Peak::Fp8), &candidates, args)?
            else {
                return Ok(None);
            };
            let got = c.to_vec()?.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
            (
                bench,
                widen(&a, f8e4m3::to_f32),
                widen(&b, f8e4m3::to_f32),
                got,
            )
        }
    };
    let mut bench = bench;
    // Sampled elements against the f64 sum over k of the rounded inputs,
    // relative to 1 + |want|: the f16 or bf16 rounding of the output
    // dominates (2^-9 relative for bf16).
    bench.error = super::sampled_rows(m, |i| {
        (0..n)
            .step_by((n / 8).max(1))
            .map(|j| {
                let want: f64 = (0..k)
                    .map(|kk| f64::from(a_in[i * k + kk]) * f64::from(b_in[kk * n + j]))
                    .sum();
                (f64::from(got[i * n + j]) - want).abs() / (1.0 + want.abs())
            })
            .fold(0.0, f64::max)
    });
    bench.tolerance = if dtype == Dtype::Bf16 { 4e-3 } else { 1e-3 };
    Ok(Some(bench))
}

/// Rounds to f16.
fn half(v: &[f32]) -> Vec<f16> {
    v.iter().map(|&x| f16::from_f32(x)).collect()
}

/// Widens to f32.
fn widen<T: Copy>(v: &[T], f: fn(T) -> f32) -> Vec<f32> {
    v.iter().map(|&x| f(x)).collect()
}
