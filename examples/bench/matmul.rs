//! The matmul benchmarks: `C = A · B` with A `[M, K]` and B `[K, N]`
//! row-major (FP8: B stored `[N, K]`, as cuBLAS's FP8 product takes it;
//! TF32: B stored `[N, K]`, an f32 linear layer's weights), f16, bf16,
//! FP8 (E4M3) or f32 on TF32 tensor cores in, f32 accumulation, f16 out
//! (f32 for TF32), as cuBLAS through PyTorch, and Triton's tutorial
//! kernel. Program instances
//! take their tiles of C in groups of `G` rows of tiles, so that a wave of
//! them shares panels of A and B in L2 (Triton's tutorial does the same).

use super::{Bench, Case, Inputs, Peak, Problem};
use tile::autotune::Candidate;
use tile::ir::eval::round_tf32;
use tile::{bf16, f16, f8e4m3, tile_kernel, Device, Element, Error, KernelSpec, LaunchArg};

/// What every matmul below computes: the tile of C that program `pid` owns,
/// in grouped order, and its product in f32.
mod product {
    use tile::tile_fn;

    /// `(its row of tiles, its column of tiles)`: the tile of C of `tiles_m
    /// × tiles_n` that program `pid` owns, in groups of `G` rows of tiles.
    #[tile_fn]
    pub(crate) fn grouped_tile(tiles_m: i32, tiles_n: i32) -> (i32, i32) {
        let pid = program_id(0);
        let group = G * tiles_n;
        let first_m = pid / group * G;
        let rows = min(tiles_m - first_m, G);
        (first_m + pid % group % rows, pid % group / rows)
    }

    /// `(A · B for the tile, its row of tiles, its column of tiles)`, for the
    /// calling kernel's `BM`, `BN`, `BK` and `G`.
    #[tile_fn]
    pub(crate) fn grouped_product(a: Tensor, b: Tensor) -> (Tile, i32, i32) {
        let (pid_m, pid_n) = grouped_tile(cdiv(a.dim(0), BM), cdiv(b.dim(1), BN));
        let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
        let mut acc = zeros::<f32>([BM, BN]);
        for kk in 0..cdiv(a.dim(1), BK) {
            acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
        }
        (acc, pid_m, pid_n)
    }

    /// [`grouped_product`] of B stored `[N, K]` (as cuBLAS's FP8 products
    /// and FP8 checkpoints keep it), its tiles read transposed.
    #[tile_fn]
    pub(crate) fn grouped_product_nt(a: Tensor, b: Tensor) -> (Tile, i32, i32) {
        let (pid_m, pid_n) = grouped_tile(cdiv(a.dim(0), BM), cdiv(b.dim(0), BN));
        let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BN, BK]));
        let mut acc = zeros::<f32>([BM, BN]);
        for kk in 0..cdiv(a.dim(1), BK) {
            acc = dot(
                va.load_masked(pid_m, kk),
                vb.load_masked(pid_n, kk).transpose(),
                acc,
            );
        }
        (acc, pid_m, pid_n)
    }

    /// [`grouped_product_nt`] of f32 operands on TF32 tensor cores
    /// (`dot_tf32`: each operand rounded to TF32).
    #[tile_fn]
    pub(crate) fn grouped_product_tf32(a: Tensor, b: Tensor) -> (Tile, i32, i32) {
        let (pid_m, pid_n) = grouped_tile(cdiv(a.dim(0), BM), cdiv(b.dim(0), BN));
        let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BN, BK]));
        let mut acc = zeros::<f32>([BM, BN]);
        for kk in 0..cdiv(a.dim(1), BK) {
            acc = dot_tf32(
                va.load_masked(pid_m, kk),
                vb.load_masked(pid_n, kk).transpose(),
                acc,
            );
        }
        (acc, pid_m, pid_n)
    }
}

#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_tile, product::grouped_product),
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
    uses(product::grouped_tile, product::grouped_product),
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
    uses(product::grouped_tile, product::grouped_product),
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
    uses(product::grouped_tile, product::grouped_product),
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

/// The FP8 matmul (E4M3 in, f16 out) of B stored `[N, K]`, as cuBLAS
/// runs it: on sm_90a's `wgmma.m64nNk32`, both operands read K-major.
#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_tile, product::grouped_product_nt),
    targets = "sm_90a",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 128, G = 8),
    configs(BM = 128, BN = 256, BK = 128, G = 8)
)]
pub fn matmul_f8<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<f8e4m3, 2>,
    b: &Tensor<f8e4m3, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product_nt(a, b);
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

/// [`matmul_f8`] with its operands copied by the TMA.
#[tile_kernel(
    num_warps = 8,
    tma,
    uses(product::grouped_tile, product::grouped_product_nt),
    targets = "sm_90a",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 128, G = 8),
    configs(BM = 128, BN = 256, BK = 128, G = 8)
)]
pub fn matmul_f8_tma<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<f8e4m3, 2>,
    b: &Tensor<f8e4m3, 2>,
    c: &mut Tensor<f16, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product_nt(a, b);
    partition_view(c, [BM, BN]).store_masked(acc.cast::<f16>(), pid_m, pid_n);
}

/// The f32 matmul on TF32 tensor cores of B stored `[N, K]` (an f32 linear
/// layer, as PyTorch runs it with `allow_tf32`): on sm_90a's
/// `wgmma.m64nNk8.tf32`, both operands read K-major and rounded to TF32 in
/// shared memory.
#[tile_kernel(
    num_warps = 8,
    uses(product::grouped_tile, product::grouped_product_tf32),
    targets = "sm_80,sm_90a",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 32, G = 8),
    configs(BM = 128, BN = 256, BK = 32, G = 8, targets = "sm_90a")
)]
pub fn matmul_tf32<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product_tf32(a, b);
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// [`matmul_tf32`] with its operands copied by the TMA.
#[tile_kernel(
    num_warps = 8,
    tma,
    uses(product::grouped_tile, product::grouped_product_tf32),
    targets = "sm_90a",
    aligned(a, b, c),
    configs(BM = 128, BN = 128, BK = 32, G = 8),
    configs(BM = 128, BN = 256, BK = 32, G = 8)
)]
pub fn matmul_tf32_tma<const BM: usize, const BN: usize, const BK: usize, const G: usize>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (acc, pid_m, pid_n) = grouped_product_tf32(a, b);
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
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
    /// f32 in, rounded to TF32; f32 out.
    Tf32,
}

/// The candidates of an `[m, k] · [k, n]` problem: each spec with its tile
/// of C, and a grid of one program per tile.
fn candidates((m, n): (usize, usize), specs: &[(KernelSpec, (usize, usize))]) -> Vec<Candidate> {
    specs
        .iter()
        .map(|&(spec, (bm, bn))| Candidate {
            spec,
            grid: [(m.div_ceil(bm) * n.div_ceil(bn)) as u32, 1, 1],
        })
        .collect()
}

/// The matmul of a square problem of side `size` in `dtype`.
pub fn bench(dev: &Device, dtype: Dtype, size: usize) -> Result<Option<Bench>, Error> {
    let (m, n, k) = (size, size, size);
    let mut rng = Inputs::default();
    let inputs = (rng.take(m * k), rng.take(k * n));
    let (kind, name, peak) = match dtype {
        Dtype::F16 => ("matmul_f16", "matmul f16", Peak::Half),
        Dtype::Bf16 => ("matmul_bf16", "matmul bf16", Peak::Half),
        Dtype::F8 => ("matmul_fp8", "matmul fp8 e4m3", Peak::Fp8),
        Dtype::Tf32 => ("matmul_tf32", "matmul tf32", Peak::Tf32),
    };
    let case = Case {
        name: name.into(),
        kind,
        params: vec![("m", m), ("n", n), ("k", k)],
        problem: Problem::Flops(2.0 * (m * n * k) as f64, peak),
    };
    let measured = match dtype {
        Dtype::F16 => {
            let specs = [
                (matmul_f16_tma::<128, 128, 64, 8>::kernel_spec(), (128, 128)),
                (matmul_f16_tma::<128, 256, 64, 8>::kernel_spec(), (128, 256)),
                (matmul_f16::<128, 128, 64, 8>::kernel_spec(), (128, 128)),
                (matmul_f16::<128, 256, 64, 8>::kernel_spec(), (128, 256)),
            ];
            let formats: Formats<f16, f16> = (f16::from_f32, f16::to_f32, f16::to_f32);
            measure(
                dev,
                case,
                (m, n, k),
                &inputs,
                formats,
                &candidates((m, n), &specs),
                false,
            )?
        }
        Dtype::Bf16 => {
            let specs = [
                (
                    matmul_bf16_tma::<128, 128, 64, 8>::kernel_spec(),
                    (128, 128),
                ),
                (
                    matmul_bf16_tma::<128, 256, 64, 8>::kernel_spec(),
                    (128, 256),
                ),
                (matmul_bf16::<128, 128, 64, 8>::kernel_spec(), (128, 128)),
                (matmul_bf16::<128, 256, 64, 8>::kernel_spec(), (128, 256)),
            ];
            let formats: Formats<bf16, bf16> = (bf16::from_f32, bf16::to_f32, bf16::to_f32);
            measure(
                dev,
                case,
                (m, n, k),
                &inputs,
                formats,
                &candidates((m, n), &specs),
                false,
            )?
        }
        Dtype::F8 => {
            let specs = [
                (matmul_f8_tma::<128, 128, 128, 8>::kernel_spec(), (128, 128)),
                (matmul_f8_tma::<128, 256, 128, 8>::kernel_spec(), (128, 256)),
                (matmul_f8::<128, 128, 128, 8>::kernel_spec(), (128, 128)),
                (matmul_f8::<128, 256, 128, 8>::kernel_spec(), (128, 256)),
            ];
            let formats: Formats<f8e4m3, f16> =
                (|x| f8e4m3::from_f64(x.into()), f8e4m3::to_f32, f16::to_f32);
            let specs = candidates((m, n), &specs);
            measure(
                dev,
                case,
                (m, n, k),
                &nk(&inputs, (n, k)),
                formats,
                &specs,
                true,
            )?
        }
        Dtype::Tf32 => {
            let specs = [
                (
                    matmul_tf32_tma::<128, 128, 32, 8>::kernel_spec(),
                    (128, 128),
                ),
                (
                    matmul_tf32_tma::<128, 256, 32, 8>::kernel_spec(),
                    (128, 256),
                ),
                (matmul_tf32::<128, 128, 32, 8>::kernel_spec(), (128, 128)),
                (matmul_tf32::<128, 256, 32, 8>::kernel_spec(), (128, 256)),
            ];
            // The inputs are TF32 values already: the reference is their
            // exact product, which the kernel's rounding leaves as it is.
            let formats: Formats<f32, f32> = (round_tf32, |x| x, |x| x);
            let specs = candidates((m, n), &specs);
            measure(
                dev,
                case,
                (m, n, k),
                &nk(&inputs, (n, k)),
                formats,
                &specs,
                true,
            )?
        }
    };
    let Some(mut bench) = measured else {
        return Ok(None);
    };
    bench.tolerance = if dtype == Dtype::Bf16 { 4e-3 } else { 1e-3 };
    Ok(Some(bench))
}

/// The inputs with B stored `[N, K]`: the transpose of the `[K, N]` one.
fn nk((a32, b32): &(Vec<f32>, Vec<f32>), (n, k): (usize, usize)) -> (Vec<f32>, Vec<f32>) {
    let bt = (0..n * k).map(|e| b32[(e % k) * n + e / k]).collect();
    (a32.clone(), bt)
}

/// How a matmul's inputs are rounded from f32 and widened back, and how its
/// output is widened.
type Formats<I, O> = (fn(f32) -> I, fn(I) -> f32, fn(O) -> f32);

/// Runs an `[m, k] · [k, n]` matmul of `inputs` rounded to `I` into an `O`
/// output (autotuned and timed by [`Bench::run`]), B given and stored
/// `[k, n]`, or with `b_nk` `[n, k]`, and fills in the error of sampled
/// elements against the f64 sum over k of the rounded inputs, relative to
/// 1 + |want| (the output's rounding dominates: 2^-9 relative for bf16).
fn measure<I: Element, O: Element>(
    dev: &Device,
    case: Case,
    (m, n, k): (usize, usize, usize),
    (a32, b32): &(Vec<f32>, Vec<f32>),
    (round, widen_in, widen_out): Formats<I, O>,
    candidates: &[Candidate],
    b_nk: bool,
) -> Result<Option<Bench>, Error> {
    let (a, b): (Vec<I>, Vec<I>) = (
        a32.iter().map(|&x| round(x)).collect(),
        b32.iter().map(|&x| round(x)).collect(),
    );
    let at = dev.tensor_from_slice(&a, &[m, k])?;
    let b_shape = if b_nk { [n, k] } else { [k, n] };
    let bt = dev.tensor_from_slice(&b, &b_shape)?;
    let mut c = dev.zeros::<O>(&[m, n])?;
    let args: Vec<LaunchArg<'_>> = vec![(&at).into(), (&bt).into(), (&mut c).into()];
    let Some(mut bench) = Bench::run(dev, case, candidates, args)? else {
        return Ok(None);
    };
    let got: Vec<f32> = c.to_vec()?.into_iter().map(widen_out).collect();
    let (a_in, b_in): (Vec<f32>, Vec<f32>) = (
        a.into_iter().map(widen_in).collect(),
        b.into_iter().map(widen_in).collect(),
    );
    bench.error = super::sampled_rows(m, |i| {
        (0..n)
            .step_by((n / 8).max(1))
            .map(|j| {
                let b_at = |kk: usize| if b_nk { j * k + kk } else { kk * n + j };
                let want: f64 = (0..k)
                    .map(|kk| f64::from(a_in[i * k + kk]) * f64::from(b_in[b_at(kk)]))
                    .sum();
                (f64::from(got[i * n + j]) - want).abs() / (1.0 + want.abs())
            })
            .fold(0.0, f64::max)
    });
    Ok(Some(bench))
}
