//! Layer normalization backward in `f16`, as Triton's tutorial computes it:
//! each program takes one row, writes its `dx`, and adds its row's share of
//! `dw` and `db` into the partial sums of its group of rows (`row % G`)
//! under the group's spin lock; a second kernel sums the `G` partial rows.
//!
//! The lock is the memory model at work (docs/semantics.md, "The memory
//! model"): the acquiring `atomic_cas` and the releasing `atomic_xchg` order
//! each holder's plain loads and stores of the partial sums (and of the
//! group's "written" flag) after the previous holder's. The order in which
//! programs take a lock is the device's, so the `f16` partial sums round
//! differently from run to run on a GPU or the CPU device; the check allows
//! for that rounding.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{f16, tile_kernel, Device, Error};

/// `dx` of one row, and the row's `dw`, `db` shares added into
/// `partial_dw[row % G]`, `partial_db[row % G]` under `locks[row % G]`;
/// `locks[G + g]` says whether group `g`'s partial sums were written yet.
/// `locks` starts at zero.
#[tile_kernel(configs(BN = 256, GROUPS = 4))]
pub fn layernorm_backward<const BN: usize, const GROUPS: usize>(
    x: &Tensor<f16, 2>,
    dy: &Tensor<f16, 2>,
    w: &Tensor<f16>,
    mean: &Tensor<f32>,
    rstd: &Tensor<f32>,
    dx: &mut Tensor<f16, 2>,
    partial_dw: &mut Tensor<f16, 2>,
    partial_db: &mut Tensor<f16, 2>,
    locks: &mut Tensor<i32>,
) {
    let row = program_id(0);
    let n = x.dim(1);
    let xs = partition_view(x, [1, BN]).load_masked(row, 0).cast::<f32>();
    let dys = partition_view(dy, [1, BN])
        .load_masked(row, 0)
        .cast::<f32>();
    let ws = partition_view(w, [BN]).load_masked(0).cast::<f32>();
    let (mu, rs) = (gather(mean, [row]), gather(rstd, [row]));
    let inside = iota::<i32>([BN]).broadcast_to([1, BN]) < n;
    let xhat = select(inside, (xs - mu) * rs, zeros::<f32>([1, BN]));
    let wdy = select(inside, ws * dys, zeros::<f32>([1, BN]));
    let c1 = (xhat * wdy).sum_keepdim(1) / n.cast::<f32>();
    let c2 = wdy.sum_keepdim(1) / n.cast::<f32>();
    let dxs = (wdy - (xhat * c1 + c2)) * rs;
    partition_view(dx, [1, BN]).store_masked(dxs.cast::<f16>(), row, 0);

    let group = row % GROUPS;
    let (vdw, vdb) = (
        partition_view(partial_dw, [1, BN]),
        partition_view(partial_db, [1, BN]),
    );
    let mut dw = (dys * xhat).cast::<f16>();
    let mut db = dys.cast::<f16>();
    while atomic_cas(locks, [group], 0, 1, Ordering::Acquire) == 1 {}
    if gather(locks, [group + GROUPS]) == 0 {
        atomic_xchg(locks, [group + GROUPS], 1, Ordering::Relaxed);
    } else {
        dw = dw + vdw.load_masked(group, 0);
        db = db + vdb.load_masked(group, 0);
    }
    vdw.store_masked(dw, group, 0);
    vdb.store_masked(db, group, 0);
    atomic_xchg(locks, [group], 0, Ordering::Release);
}

/// `dw` and `db`: the `G` partial rows summed, `BN` columns a program.
#[tile_kernel(configs(GROUPS = 4, BN = 256))]
pub fn layernorm_backward_dwdb<const GROUPS: usize, const BN: usize>(
    partial_dw: &Tensor<f16, 2>,
    partial_db: &Tensor<f16, 2>,
    dw: &mut Tensor<f32>,
    db: &mut Tensor<f32>,
) {
    let pid = program_id(0);
    let pdw = partition_view(partial_dw, [GROUPS, BN]).load_masked(0, pid);
    let pdb = partition_view(partial_db, [GROUPS, BN]).load_masked(0, pid);
    partition_view(dw, [BN]).store_masked(pdw.cast::<f32>().sum(0), pid);
    partition_view(db, [BN]).store_masked(pdb.cast::<f32>().sum(0), pid);
}

/// The plain-Rust reference in f64: `dx` of every row, then `dw`, `db`.
pub fn reference(
    (x, dy, w): (&[f32], &[f32], &[f32]),
    (mean, rstd): (&[f32], &[f32]),
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let cols = w.len();
    let (mut dx, mut dw, mut db) = (Vec::new(), vec![0.0; cols], vec![0.0; cols]);
    for (r, (xr, dyr)) in x.chunks(cols).zip(dy.chunks(cols)).enumerate() {
        let (mu, rs) = (f64::from(mean[r]), f64::from(rstd[r]));
        let xhat: Vec<f64> = xr.iter().map(|&v| (f64::from(v) - mu) * rs).collect();
        let wdy: Vec<f64> = dyr
            .iter()
            .zip(w)
            .map(|(&d, &wj)| f64::from(d) * f64::from(wj))
            .collect();
        let c1 = xhat.iter().zip(&wdy).map(|(a, b)| a * b).sum::<f64>() / cols as f64;
        let c2 = wdy.iter().sum::<f64>() / cols as f64;
        dx.extend(xhat.iter().zip(&wdy).map(|(h, g)| (g - (h * c1 + c2)) * rs));
        for j in 0..cols {
            dw[j] += f64::from(dyr[j]) * xhat[j];
            db[j] += f64::from(dyr[j]);
        }
    }
    (dx, dw, db)
}

/// The row statistics the forward pass saved: mean and `1 / sqrt(var +
/// eps)` of each row.
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

/// Both kernels on 96 rows of 200 columns, 4 groups.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (rows, cols, groups) = (96, 200, 4);
    let half = |v: Vec<f32>| -> Vec<f16> { v.into_iter().map(f16::from_f32).collect() };
    let widen = |v: &[f16]| -> Vec<f32> { v.iter().map(|h| h.to_f32()).collect() };
    let (xs, dys, ws) = (
        half(rng.take(rows * cols)),
        half(rng.take(rows * cols)),
        half(rng.take(cols)),
    );
    let (means, rstds) = statistics(&widen(&xs), cols);
    let x = dev.tensor_from_slice(&xs, &[rows, cols])?;
    let dy = dev.tensor_from_slice(&dys, &[rows, cols])?;
    let w = dev.tensor_from_slice(&ws, &[cols])?;
    let mean = dev.tensor_from_slice(&means, &[rows])?;
    let rstd = dev.tensor_from_slice(&rstds, &[rows])?;
    let mut dx = dev.zeros::<f16>(&[rows, cols])?;
    let mut partial_dw = dev.zeros::<f16>(&[groups, cols])?;
    let mut partial_db = dev.zeros::<f16>(&[groups, cols])?;
    let (mut dw, mut db) = (dev.zeros::<f32>(&[cols])?, dev.zeros::<f32>(&[cols])?);
    // Fresh locks each run: the first holder of a group then stores, not
    // adds, so a second run computes the same sums.
    let time = timed(|| {
        let mut locks = dev.zeros::<i32>(&[2 * groups])?;
        layernorm_backward::<256, 4>::launch(
            dev,
            [rows as u32],
            (
                &x,
                &dy,
                &w,
                &mean,
                &rstd,
                &mut dx,
                &mut partial_dw,
                &mut partial_db,
                &mut locks,
            ),
        )
    })?;
    let sums = timed(|| {
        layernorm_backward_dwdb::<4, 256>::launch(
            dev,
            [cols.div_ceil(256) as u32],
            (&partial_dw, &partial_db, &mut dw, &mut db),
        )
    })?;
    let (want_dx, want_dw, want_db) =
        reference((&widen(&xs), &widen(&dys), &widen(&ws)), (&means, &rstds));
    let code = dev.kernel_code(&layernorm_backward::<256, 4>::kernel_spec())?;
    let shape = format!("[{rows}, {cols}], {groups} groups");
    Ok(vec![
        Row {
            kernel: "layernorm_bwd dx".into(),
            code,
            shape: shape.clone(),
            max_error: max_error(&widen(&dx.to_vec()?), &want_dx),
            // dx is rounded to f16 once.
            tolerance: 1e-2,
            time,
        },
        Row {
            kernel: "layernorm_bwd dw (lock)".into(),
            code,
            shape: shape.clone(),
            max_error: max_error(&dw.to_vec()?, &want_dw),
            // 24 rows a group summed in f16 in the device's order.
            tolerance: 0.05,
            time: sums,
        },
        Row {
            kernel: "layernorm_bwd db (lock)".into(),
            code,
            shape,
            max_error: max_error(&db.to_vec()?, &want_db),
            tolerance: 0.05,
            time: sums,
        },
    ])
}
