//! LayerNorm backward as Triton's tutorial computes it
//! (`python/tutorials/05-layer-norm.py`, read at
//! <https://github.com/triton-lang/triton/blob/545699290b851e70231ee3017481851170f1583d/python/tutorials/05-layer-norm.py>),
//! in two kernels. `_layer_norm_bwd_dx_fused`: one program per row writes
//! its `dx` and adds its row's `dw = dy · x̂` and `db = dy` (in f32, rounded
//! to f16 as stored) into the partial row `row % GROUP` under that group's
//! spin lock: `locks[g]` is the lock, `locks[GROUP + g]` whether the partial
//! row holds anything yet (its first holder stores instead of adding); a
//! `debug_barrier` before the release, and Triton's default `AcqRel` at
//! `gpu` scope on every atomic. `_layer_norm_bwd_dwdb`: each program sums
//! `BN` columns of the first `m = min(GROUP, rows)` partial rows in f32
//! tiles of `BM × BN` and stores them as f16. The tutorial's test, 8192
//! columns of f16: the forward pass's block (8192) and 8 warps, `GROUP =
//! 96`; the second kernel at 32 × 128 and Triton's default 4 warps.

use super::{f16s, widen_f16};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(GROUP = 96, BLOCK = 8192),
    num_warps = 8,
    aligned(dx, dy, partial_dw, partial_db, x, w),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn layer_norm_bwd_dx_fused<const GROUP: usize, const BLOCK: usize>(
    dx: &mut Tensor<f16, 2>,
    dy: &Tensor<f16, 2>,
    partial_dw: &mut Tensor<f16, 2>,
    partial_db: &mut Tensor<f16, 2>,
    x: &Tensor<f16, 2>,
    w: &Tensor<f16>,
    mean: &Tensor<f32>,
    rstd: &Tensor<f32>,
    locks: &mut Tensor<i32>,
) {
    let row = program_id(0);
    let n = x.dim(1);
    let g = row % GROUP;
    let xs = partition_view(x, [1, BLOCK])
        .load_masked(row, 0)
        .cast::<f32>();
    let dys = partition_view(dy, [1, BLOCK])
        .load_masked(row, 0)
        .cast::<f32>();
    let ws = partition_view(w, [BLOCK]).load_masked(0).cast::<f32>();
    let (mu, rs) = (gather(mean, [row]), gather(rstd, [row]));
    let inside = iota::<i32>([1, BLOCK]) < n;
    let xhat = select(inside, (xs - mu) * rs, 0.0);
    let wdy = select(inside, ws * dys, 0.0);
    let c1 = (xhat * wdy).sum_keepdim(1) / n.cast::<f32>();
    let c2 = wdy.sum_keepdim(1) / n.cast::<f32>();
    let dxs = (wdy - (xhat * c1 + c2)) * rs;
    partition_view(dx, [1, BLOCK]).store_masked(dxs.cast::<f16>(), row, 0);
    let (vdw, vdb) = (
        partition_view(partial_dw, [1, BLOCK]),
        partition_view(partial_db, [1, BLOCK]),
    );
    let mut dw = dys * xhat;
    let mut db = dys;
    while atomic_cas(locks, [g], 0, 1) == 1 {}
    if gather(locks, [g + GROUP]) == 0 {
        atomic_xchg(locks, [g + GROUP], 1);
    } else {
        dw += vdw.load_masked(g, 0).cast::<f32>();
        db += vdb.load_masked(g, 0).cast::<f32>();
    }
    vdw.store_masked(dw.cast::<f16>(), g, 0);
    vdb.store_masked(db.cast::<f16>(), g, 0);
    debug_barrier();
    atomic_xchg(locks, [g], 0);
}

#[tile_kernel(
    configs(BM = 32, BN = 128),
    num_warps = 4,
    aligned(partial_dw, partial_db, dw, db),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn layer_norm_bwd_dwdb<const BM: usize, const BN: usize>(
    partial_dw: &Tensor<f16, 2>,
    partial_db: &Tensor<f16, 2>,
    dw: &mut Tensor<f16>,
    db: &mut Tensor<f16>,
    m: i32,
) {
    let pid = program_id(0);
    let n = partial_dw.dim(1);
    let (vdw, vdb) = (
        partition_view(partial_dw.window([0, 0], [m, n]), [BM, BN]),
        partition_view(partial_db.window([0, 0], [m, n]), [BM, BN]),
    );
    let mut sum_dw = zeros::<f32>([BM, BN]);
    let mut sum_db = zeros::<f32>([BM, BN]);
    for i in 0..cdiv(m, BM) {
        sum_dw += vdw.load_masked(i, pid).cast::<f32>();
        sum_db += vdb.load_masked(i, pid).cast::<f32>();
    }
    partition_view(dw, [BN]).store_masked(sum_dw.sum(0).cast::<f16>(), pid);
    partition_view(db, [BN]).store_masked(sum_db.sum(0).cast::<f16>(), pid);
}

/// The plain-Rust reference in f64: `dx` of every row, then `dw` and `db`
/// summed over the rows.
pub fn reference(
    (x, dy, w): (&[f32], &[f32], &[f32]),
    (mean, rstd): (&[f32], &[f32]),
) -> [Vec<f64>; 3] {
    let cols = w.len();
    let (mut dx, mut dw, mut db) = (Vec::new(), vec![0.0; cols], vec![0.0; cols]);
    for (r, (xr, dyr)) in x.chunks(cols).zip(dy.chunks(cols)).enumerate() {
        let (mu, rs) = (f64::from(mean[r]), f64::from(rstd[r]));
        let xhat: Vec<f64> = xr.iter().map(|&v| (f64::from(v) - mu) * rs).collect();
        let wdy: Vec<f64> = (0..cols)
            .map(|j| f64::from(dyr[j]) * f64::from(w[j]))
            .collect();
        let c1 = (0..cols).map(|j| xhat[j] * wdy[j]).sum::<f64>() / cols as f64;
        let c2 = wdy.iter().sum::<f64>() / cols as f64;
        dx.extend((0..cols).map(|j| (wdy[j] - (xhat[j] * c1 + c2)) * rs));
        for j in 0..cols {
            dw[j] += f64::from(dyr[j]) * xhat[j];
            db[j] += f64::from(dyr[j]);
        }
    }
    [dx, dw, db]
}

/// Each row's mean and `1 / sqrt(var + 1e-5)`, as the forward pass saved
/// them.
fn statistics(x: &[f32], cols: usize) -> (Vec<f32>, Vec<f32>) {
    x.chunks(cols)
        .map(|row| {
            let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / cols as f64;
            let var = row
                .iter()
                .map(|&v| (f64::from(v) - mean).powi(2))
                .sum::<f64>()
                / cols as f64;
            (mean as f32, (1.0 / (var + 1e-5).sqrt()) as f32)
        })
        .unzip()
}

/// Both kernels on more rows than groups, so that the first 54 groups take
/// two rows each (the second adds to the partial row under the lock), with
/// fresh locks and partial rows at every launch, as the tutorial allocates
/// them.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, groups) = (150, 1000, 96);
    let (xs, dys, ws) = (
        f16s(&rng.take(rows * cols)),
        f16s(&rng.take(rows * cols)),
        f16s(&rng.take(cols)),
    );
    let (means, rstds) = statistics(&widen_f16(&xs), cols);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let dy = dev.tensor_from_slice(&dys, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let mean = dev.tensor_from_slice(&means, &[rows])?;
    let rstd = dev.tensor_from_slice(&rstds, &[rows])?;
    let mut dx = dev.zeros::<f16>(&[rows, cols])?;
    let mut partial_dw = dev.zeros::<f16>(&[groups, cols])?;
    let mut partial_db = dev.zeros::<f16>(&[groups, cols])?;
    let (mut dw, mut db) = (dev.zeros::<f16>(&[cols])?, dev.zeros::<f16>(&[cols])?);
    let time = timed(|| {
        let mut locks = dev.zeros::<i32>(&[2 * groups])?;
        let args = (
            &mut dx,
            &dy,
            &mut partial_dw,
            &mut partial_db,
            &x,
            &w,
            &mean,
            &rstd,
            &mut locks,
        );
        layer_norm_bwd_dx_fused::<96, 8192>::launch(dev, [rows as u32], args)
    })?;
    let m = rows.min(groups) as i32;
    let sums = timed(|| {
        let args = (&partial_dw, &partial_db, &mut dw, &mut db, m);
        layer_norm_bwd_dwdb::<32, 128>::launch(dev, [cols.div_ceil(128) as u32], args)
    })?;
    let [want_dx, want_dw, want_db] = reference(
        (&widen_f16(&xs), &widen_f16(&dys), &widen_f16(&ws)),
        (&means, &rstds),
    );
    let shape = format!("[{rows}, {cols}] f16, {groups} groups");
    let code = dev.kernel_code(&layer_norm_bwd_dx_fused::<96, 8192>::kernel_spec())?;
    let sums_code = dev.kernel_code(&layer_norm_bwd_dwdb::<32, 128>::kernel_spec())?;
    let sums_error = max_error(&widen_f16(&dw.to_vec()?), &want_dw)
        .max(max_error(&widen_f16(&db.to_vec()?), &want_db));
    Ok(vec![
        Row {
            kernel: "layer_norm_bwd_dx_fused dx".into(),
            code,
            shape: shape.clone(),
            max_error: max_error(&widen_f16(&dx.to_vec()?), &want_dx),
            // One f16 rounding of the result: 2⁻¹¹.
            tolerance: 1e-3,
            time,
        },
        Row {
            kernel: "layer_norm_bwd_dwdb dw, db".into(),
            code: sums_code,
            shape,
            max_error: sums_error,
            // 96 partial rows, each rounded to f16 once or twice (in the
            // order the device takes the lock), summed and rounded to f16.
            tolerance: 2e-2,
            time: sums,
        },
    ])
}
