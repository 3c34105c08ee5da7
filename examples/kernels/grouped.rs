//! A grouped GEMM: one launch multiplies every pair of a list of problems
//! of their own sizes, `c[g] = a[g] · b[g]`, the operands passed as tensor
//! arrays (`&[Tensor<T, 2>]`), none padded or packed. The kernel is
//! persistent: one program per processor walks every problem's output
//! tiles `pid, pid + programs, ...`, each with a software-pipelined `K`
//! loop, as a single matmul's tiles are.

use crate::common::{max_error, timed, Inputs, Row};
use crate::persistent::reference;
use tile::{f16, tile_kernel, Device, Error};

/// `c[g] = a[g] · b[g]` for every `g`, over tiles `BM × BN` and `BK` wide
/// slabs of `K`; launched with a grid of [`Device::multiprocessors`].
#[tile_kernel(num_warps = 4, configs(BM = 64, BN = 64, BK = 32))]
pub fn grouped_matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: &[Tensor<f16, 2>],
    b: &[Tensor<f16, 2>],
    c: &mut [Tensor<f32, 2>],
) {
    for g in 0..a.len() {
        let (ag, bg, cg) = (a[g], b[g], c[g]);
        let (va, vb) = (partition_view(ag, [BM, BK]), partition_view(bg, [BK, BN]));
        let vc = partition_view(cg, [BM, BN]);
        let tiles_n = cdiv(bg.dim(1), BN);
        for t in (program_id(0)..cdiv(ag.dim(0), BM) * tiles_n).step_by(num_programs(0)) {
            let (pid_m, pid_n) = (t / tiles_n, t % tiles_n);
            let mut acc = zeros::<f32>([BM, BN]);
            for kk in 0..cdiv(ag.dim(1), BK) {
                acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
            }
            vc.store_masked(acc, pid_m, pid_n);
        }
    }
}

/// Small integers (-4 to 3) drawn from `rng`: every partial sum is exact.
fn integers(rng: &mut Inputs, n: usize) -> Vec<f16> {
    rng.take(n)
        .iter()
        .map(|&v| f16::from_f32((v * 1.75).round()))
        .collect()
}

/// The problems: partial edge tiles, one problem smaller than a tile, one
/// with no `K` (its product is all zeros).
const PROBLEMS: [(usize, usize, usize); 4] =
    [(200, 130, 96), (70, 40, 150), (5, 9, 3), (33, 64, 0)];

/// The kernel on [`PROBLEMS`], with one program per processor.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (mut a, mut b, mut c, mut want) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let widen = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    for &(m, n, k) in &PROBLEMS {
        let (a16, b16) = (integers(rng, m * k), integers(rng, k * n));
        a.push(dev.tensor_from_slice(&a16, &[m, k])?);
        b.push(dev.tensor_from_slice(&b16, &[k, n])?);
        c.push(dev.zeros::<f32>(&[m, n])?);
        want.extend(reference(&widen(&a16), &widen(&b16), (m, n, k)));
    }
    let grid = [dev.multiprocessors()];
    let time = timed(|| grouped_matmul::<64, 64, 32>::launch(dev, grid, (&a, &b, &mut c)))?;
    let mut got = Vec::new();
    for t in &c {
        got.extend(t.to_vec()?);
    }
    Ok(vec![Row {
        kernel: "grouped matmul f16".into(),
        code: dev.kernel_code(&grouped_matmul::<64, 64, 32>::kernel_spec())?,
        shape: format!("{} problems, grid {}", PROBLEMS.len(), grid[0]),
        max_error: max_error(&got, &want),
        tolerance: 0.0,
        time,
    }])
}
