//! Liger-Kernel's GroupNorm (`liger_kernel/ops/group_norm.py`): the forward
//! kernel `_group_norm_forward_kernel` and the backward kernel
//! `_group_norm_backward_kernel`, the backward in f32 and in its bf16 mode
//! (bf16 statistics, dx and `atomic_add`s of dW and dB).

use crate::{bf16s, check, expect_code, wide, wide_bf16, Rng};
use tile::{bf16, tile_kernel, Device};

// ---------------------------------------------------------------------------
// Liger-Kernel GroupNorm forward (`liger_kernel/ops/group_norm.py`,
// `_group_norm_forward_kernel`): one program per (batch, group) sums the
// group's `hidden = channels_per_group · spatial` elements and their
// squares in blocks (loop-carried scalars), `var = E[x²] − E[x]²`, then
// walks the group's channels, each a window at an element offset of the
// group's row, applying the channel's weight and bias (scalar gathers).
// BLOCK = next_power_of_2(hidden), Triton's default 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BLOCK = 128),
    configs(BLOCK = 2048),
    approx_math,
    targets = "sm_80,gfx942,host"
)]
fn group_norm_forward<const BLOCK: usize>(
    x: &Tensor<f32, 3>,
    w: &Tensor<f32>,
    b: &Tensor<f32>,
    y: &mut Tensor<f32, 3>,
    mean: &mut Tensor<f32, 2>,
    rstd: &mut Tensor<f32, 2>,
    channels_per_group: i32,
    eps: f32,
) {
    let batch = program_id(0);
    let group = program_id(1);
    let hidden = x.dim(2);
    let vx = partition_view(x, [1, 1, BLOCK]);
    let mut s = 0.0f32;
    let mut squared = 0.0f32;
    for i in 0..cdiv(hidden, BLOCK) {
        let t = vx.load_masked(batch, group, i).reshape([BLOCK]);
        s += t.sum(0);
        squared += (t * t).sum(0);
    }
    let n = hidden as f32;
    let m = s / n;
    let variance = squared / n - m * m;
    let r = (variance + eps).rsqrt();
    let per_channel = hidden / channels_per_group;
    let first = group * channels_per_group;
    for c in first..first + channels_per_group {
        let wc = gather(w, [c]);
        let bc = gather(b, [c]);
        let start = (c - first) * per_channel;
        let xc = partition_view(
            x.window([batch, group, start], [1, 1, per_channel]),
            [1, 1, BLOCK],
        );
        let yc = partition_view(
            y.window([batch, group, start], [1, 1, per_channel]),
            [1, 1, BLOCK],
        );
        for i in 0..cdiv(per_channel, BLOCK) {
            let t = xc.load_masked(0, 0, i);
            yc.store_masked((t - m) * r * wc + bc, 0, 0, i);
        }
    }
    partition_view(mean, [1, 1]).store(m, batch, group);
    partition_view(rstd, [1, 1]).store(r, batch, group);
}

fn group_norm_forward_run(dev: &Device) {
    // (batch, channels, groups, spatial): hidden 2·63 = 126 (block 128),
    // and 4·300 = 1200 (block 2048), channels of odd lengths.
    for (case, &(batch, channels, groups, spatial)) in
        [(3usize, 6usize, 3usize, 63usize), (2, 32, 8, 300)]
            .iter()
            .enumerate()
    {
        let cpg = channels / groups;
        let hidden = cpg * spatial;
        let mut rng = Rng::new(11 + case as u64);
        let xs: Vec<f32> = rng
            .take(batch * channels * spatial)
            .iter()
            .map(|v| v * 1.5 + 0.3)
            .collect();
        let ws = rng.take(channels);
        let bs = rng.take(channels);
        let eps = 1e-6f32;
        let x = dev
            .tensor_from_slice(&xs, &[batch, groups, hidden])
            .unwrap();
        let w = dev.tensor_from_slice(&ws, &[channels]).unwrap();
        let b = dev.tensor_from_slice(&bs, &[channels]).unwrap();
        let mut y = dev.zeros::<f32>(&[batch, groups, hidden]).unwrap();
        let mut mean = dev.zeros::<f32>(&[batch, groups]).unwrap();
        let mut rstd = dev.zeros::<f32>(&[batch, groups]).unwrap();
        let grid = [batch as u32, groups as u32];
        let args = (&x, &w, &b, &mut y, &mut mean, &mut rstd, cpg as i32, eps);
        match hidden.next_power_of_two() {
            128 => {
                expect_code(dev, &group_norm_forward::<128>::kernel_spec());
                group_norm_forward::<128>::launch(dev, grid, args).unwrap();
            }
            2048 => {
                expect_code(dev, &group_norm_forward::<2048>::kernel_spec());
                group_norm_forward::<2048>::launch(dev, grid, args).unwrap();
            }
            other => unreachable!("no specialization for {other}"),
        }
        let (mut want_y, mut want_mean, mut want_rstd) = (Vec::new(), Vec::new(), Vec::new());
        for (gi, row) in xs.chunks(hidden).enumerate() {
            let g = gi % groups;
            let mu = row.iter().map(|&v| f64::from(v)).sum::<f64>() / hidden as f64;
            let var = row
                .iter()
                .map(|&v| (f64::from(v) - mu).powi(2))
                .sum::<f64>()
                / hidden as f64;
            let r = 1.0 / (var + f64::from(eps)).sqrt();
            for (j, &v) in row.iter().enumerate() {
                let c = g * cpg + j / spatial;
                want_y.push((f64::from(v) - mu) * r * f64::from(ws[c]) + f64::from(bs[c]));
            }
            want_mean.push(mu);
            want_rstd.push(r);
        }
        // f32 sums of ≤ 1200 terms and E[x²] − E[x]² with |mean| ≲ 0.3 and
        // var ≈ 3 lose ~1e-6 relative; approx_math's rsqrt is within 2 ulp.
        let what = format!("group_norm_forward {batch}x{channels}x{spatial}/{groups}");
        check(
            &format!("{what} y"),
            dev,
            &wide(&y.to_vec().unwrap()),
            &want_y,
            1e-4,
        );
        check(
            &format!("{what} mean"),
            dev,
            &wide(&mean.to_vec().unwrap()),
            &want_mean,
            1e-5,
        );
        check(
            &format!("{what} rstd"),
            dev,
            &wide(&rstd.to_vec().unwrap()),
            &want_rstd,
            1e-4,
        );
    }
}

probe!(
    group_norm_forward_probe,
    group_norm_forward_run,
    [group_norm_forward<128>]
);

// ---------------------------------------------------------------------------
// Liger-Kernel GroupNorm backward (`_group_norm_backward_kernel`): per
// (batch, group), nested loops over the group's channels and blocks carry
// four scalars; each channel's dW and dB go to memory with float
// `atomic_add`s (programs of every batch add into the same channel),
// then a second pass writes dx. BLOCK = next_power_of_2(spatial).
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BLOCK = 64),
    approx_math,
    allow(spills),
    targets = "sm_80,gfx942,host"
)]
fn group_norm_backward<const BLOCK: usize>(
    x: &Tensor<f32, 3>,
    w: &Tensor<f32>,
    mean: &Tensor<f32, 2>,
    rstd: &Tensor<f32, 2>,
    dx: &mut Tensor<f32, 3>,
    dw: &mut Tensor<f32>,
    db: &mut Tensor<f32>,
    dy: &Tensor<f32, 3>,
    channels_per_group: i32,
) {
    let batch = program_id(0);
    let group = program_id(1);
    let hidden = x.dim(2);
    let vx = partition_view(x, [1, 1, BLOCK]);
    let vdy = partition_view(dy, [1, 1, BLOCK]);
    let vdx = partition_view(dx, [1, 1, BLOCK]);
    let mu = gather(mean, [batch, group]);
    let r = gather(rstd, [batch, group]);
    let first = group * channels_per_group;
    let mut c1 = 0.0f32;
    let mut c2 = 0.0f32;
    for c in first..first + channels_per_group {
        let wc = gather(w, [c]);
        let mut dwc = 0.0f32;
        let mut dbc = 0.0f32;
        for i in 0..cdiv(hidden, BLOCK) {
            let xt = vx.load_masked(batch, c, i).reshape([BLOCK]);
            let g = vdy.load_masked(batch, c, i).reshape([BLOCK]);
            let xhat = (xt - mu) * r;
            dwc += (g * xhat).sum(0);
            dbc += g.sum(0);
            let wdy = g * wc;
            c1 += (xhat * wdy).sum(0);
            c2 += wdy.sum(0);
        }
        atomic_add(dw, [c], dwc);
        atomic_add(db, [c], dbc);
    }
    let n = (hidden * channels_per_group) as f32;
    let c1 = c1 / n;
    let c2 = c2 / n;
    for c in first..first + channels_per_group {
        let wc = gather(w, [c]);
        for i in 0..cdiv(hidden, BLOCK) {
            let xt = vx.load_masked(batch, c, i);
            let g = vdy.load_masked(batch, c, i);
            let xhat = (xt - mu) * r;
            let wdy = g * wc;
            vdx.store_masked((wdy - (xhat * c1 + c2)) * r, batch, c, i);
        }
    }
}

fn group_norm_backward_run(dev: &Device) {
    let (batch, channels, groups, spatial) = (3usize, 6usize, 3usize, 63usize);
    let cpg = channels / groups;
    let mut rng = Rng::new(21);
    let xs: Vec<f32> = rng
        .take(batch * channels * spatial)
        .iter()
        .map(|v| v * 1.5 + 0.3)
        .collect();
    let dys = rng.take(batch * channels * spatial);
    let ws = rng.take(channels);
    // The forward statistics, in f32 as the forward kernel stores them.
    let (mut means, mut rstds) = (Vec::new(), Vec::new());
    for row in xs.chunks(cpg * spatial) {
        let mu = row.iter().map(|&v| f64::from(v)).sum::<f64>() / row.len() as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mu).powi(2))
            .sum::<f64>()
            / row.len() as f64;
        means.push(mu as f32);
        rstds.push((1.0 / (var + 1e-6).sqrt()) as f32);
    }
    let x = dev
        .tensor_from_slice(&xs, &[batch, channels, spatial])
        .unwrap();
    let dy = dev
        .tensor_from_slice(&dys, &[batch, channels, spatial])
        .unwrap();
    let w = dev.tensor_from_slice(&ws, &[channels]).unwrap();
    let mean = dev.tensor_from_slice(&means, &[batch, groups]).unwrap();
    let rstd = dev.tensor_from_slice(&rstds, &[batch, groups]).unwrap();
    let mut dx = dev.zeros::<f32>(&[batch, channels, spatial]).unwrap();
    let mut dw = dev.zeros::<f32>(&[channels]).unwrap();
    let mut db = dev.zeros::<f32>(&[channels]).unwrap();
    expect_code(dev, &group_norm_backward::<64>::kernel_spec());
    group_norm_backward::<64>::launch(
        dev,
        [batch as u32, groups as u32],
        (
            &x, &w, &mean, &rstd, &mut dx, &mut dw, &mut db, &dy, cpg as i32,
        ),
    )
    .unwrap();
    let mut want_dx = vec![0.0; xs.len()];
    let mut want_dw = vec![0.0; channels];
    let mut want_db = vec![0.0; channels];
    let n = (cpg * spatial) as f64;
    for bi in 0..batch {
        for g in 0..groups {
            let mu = f64::from(means[bi * groups + g]);
            let r = f64::from(rstds[bi * groups + g]);
            let (mut c1, mut c2) = (0.0, 0.0);
            let at = |c: usize, j: usize| (bi * channels + c) * spatial + j;
            for c in g * cpg..(g + 1) * cpg {
                for j in 0..spatial {
                    let xhat = (f64::from(xs[at(c, j)]) - mu) * r;
                    let dyv = f64::from(dys[at(c, j)]);
                    want_dw[c] += dyv * xhat;
                    want_db[c] += dyv;
                    c1 += xhat * dyv * f64::from(ws[c]);
                    c2 += dyv * f64::from(ws[c]);
                }
            }
            let (c1, c2) = (c1 / n, c2 / n);
            for c in g * cpg..(g + 1) * cpg {
                for j in 0..spatial {
                    let xhat = (f64::from(xs[at(c, j)]) - mu) * r;
                    let wdy = f64::from(ws[c]) * f64::from(dys[at(c, j)]);
                    want_dx[at(c, j)] = (wdy - (xhat * c1 + c2)) * r;
                }
            }
        }
    }
    // f32 sums of ≤ 189 terms of size ≲ 8 (atomics in any order): ~1e-5.
    check(
        "group_norm_backward dx",
        dev,
        &wide(&dx.to_vec().unwrap()),
        &want_dx,
        1e-4,
    );
    check(
        "group_norm_backward dw",
        dev,
        &wide(&dw.to_vec().unwrap()),
        &want_dw,
        1e-4,
    );
    check(
        "group_norm_backward db",
        dev,
        &wide(&db.to_vec().unwrap()),
        &want_db,
        1e-4,
    );
}

probe!(
    group_norm_backward_probe,
    group_norm_backward_run,
    [group_norm_backward<64>]
);

// ---------------------------------------------------------------------------
// Liger-Kernel GroupNorm backward again, in its bf16 mode: x, dy, W,
// the statistics and dx in bf16, and dW, dB accumulated with bf16
// `atomic_add`s (`tl.atomic_add(DW_ptr + c, dW.to(tl.bfloat16))`, as
// Liger does when X is bf16). BLOCK = next_power_of_2(spatial), 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(configs(BLOCK = 64), approx_math, targets = "sm_80,gfx942,host")]
fn group_norm_backward_bf16<const BLOCK: usize>(
    x: &Tensor<bf16, 3>,
    w: &Tensor<bf16>,
    mean: &Tensor<bf16, 2>,
    rstd: &Tensor<bf16, 2>,
    dx: &mut Tensor<bf16, 3>,
    dw: &mut Tensor<bf16>,
    db: &mut Tensor<bf16>,
    dy: &Tensor<bf16, 3>,
    channels_per_group: i32,
) {
    let batch = program_id(0);
    let group = program_id(1);
    let hidden = x.dim(2);
    let vx = partition_view(x, [1, 1, BLOCK]);
    let vdy = partition_view(dy, [1, 1, BLOCK]);
    let vdx = partition_view(dx, [1, 1, BLOCK]);
    let mu = gather(mean, [batch, group]).cast::<f32>();
    let r = gather(rstd, [batch, group]).cast::<f32>();
    let first = group * channels_per_group;
    let mut c1 = 0.0f32;
    let mut c2 = 0.0f32;
    for c in first..first + channels_per_group {
        let wc = gather(w, [c]).cast::<f32>();
        let mut dwc = 0.0f32;
        let mut dbc = 0.0f32;
        for i in 0..cdiv(hidden, BLOCK) {
            let xt = vx.load_masked(batch, c, i).reshape([BLOCK]).cast::<f32>();
            let g = vdy.load_masked(batch, c, i).reshape([BLOCK]).cast::<f32>();
            let xhat = (xt - mu) * r;
            dwc += (g * xhat).sum(0);
            dbc += g.sum(0);
            let wdy = g * wc;
            c1 += (xhat * wdy).sum(0);
            c2 += wdy.sum(0);
        }
        atomic_add(dw, [c], dwc.cast::<bf16>());
        atomic_add(db, [c], dbc.cast::<bf16>());
    }
    let n = (hidden * channels_per_group) as f32;
    let c1 = c1 / n;
    let c2 = c2 / n;
    for c in first..first + channels_per_group {
        let wc = gather(w, [c]).cast::<f32>();
        for i in 0..cdiv(hidden, BLOCK) {
            let xt = vx.load_masked(batch, c, i).cast::<f32>();
            let g = vdy.load_masked(batch, c, i).cast::<f32>();
            let xhat = (xt - mu) * r;
            let wdy = g * wc;
            vdx.store_masked(((wdy - (xhat * c1 + c2)) * r).cast::<bf16>(), batch, c, i);
        }
    }
}

fn group_norm_backward_bf16_run(dev: &Device) {
    let (batch, channels, groups, spatial) = (3usize, 6usize, 3usize, 63usize);
    let cpg = channels / groups;
    let mut rng = Rng::new(121);
    let xs = bf16s(
        &rng.take(batch * channels * spatial)
            .iter()
            .map(|v| v * 1.5 + 0.3)
            .collect::<Vec<_>>(),
    );
    let dys = bf16s(&rng.take(batch * channels * spatial));
    let ws = bf16s(&rng.take(channels));
    let (xf, dyf, wf) = (wide_bf16(&xs), wide_bf16(&dys), wide_bf16(&ws));
    let (mut means, mut rstds) = (Vec::new(), Vec::new());
    for row in xf.chunks(cpg * spatial) {
        let mu = row.iter().sum::<f64>() / row.len() as f64;
        let var = row.iter().map(|&v| (v - mu).powi(2)).sum::<f64>() / row.len() as f64;
        means.push(bf16::from_f64(mu));
        rstds.push(bf16::from_f64(1.0 / (var + 1e-6).sqrt()));
    }
    let x = dev
        .tensor_from_slice(&xs, &[batch, channels, spatial])
        .unwrap();
    let dy = dev
        .tensor_from_slice(&dys, &[batch, channels, spatial])
        .unwrap();
    let w = dev.tensor_from_slice(&ws, &[channels]).unwrap();
    let mean = dev.tensor_from_slice(&means, &[batch, groups]).unwrap();
    let rstd = dev.tensor_from_slice(&rstds, &[batch, groups]).unwrap();
    let mut dx = dev.zeros::<bf16>(&[batch, channels, spatial]).unwrap();
    let mut dw = dev.zeros::<bf16>(&[channels]).unwrap();
    let mut db = dev.zeros::<bf16>(&[channels]).unwrap();
    expect_code(dev, &group_norm_backward_bf16::<64>::kernel_spec());
    group_norm_backward_bf16::<64>::launch(
        dev,
        [batch as u32, groups as u32],
        (
            &x, &w, &mean, &rstd, &mut dx, &mut dw, &mut db, &dy, cpg as i32,
        ),
    )
    .unwrap();
    let (mf, rf) = (wide_bf16(&means), wide_bf16(&rstds));
    let mut want_dx = vec![0.0; xf.len()];
    let mut want_dw = vec![0.0; channels];
    let mut want_db = vec![0.0; channels];
    let n = (cpg * spatial) as f64;
    for bi in 0..batch {
        for g in 0..groups {
            let (mu, r) = (mf[bi * groups + g], rf[bi * groups + g]);
            let at = |c: usize, j: usize| (bi * channels + c) * spatial + j;
            let (mut c1, mut c2) = (0.0, 0.0);
            for c in g * cpg..(g + 1) * cpg {
                for j in 0..spatial {
                    let xhat = (xf[at(c, j)] - mu) * r;
                    want_dw[c] += dyf[at(c, j)] * xhat;
                    want_db[c] += dyf[at(c, j)];
                    c1 += xhat * dyf[at(c, j)] * wf[c];
                    c2 += dyf[at(c, j)] * wf[c];
                }
            }
            for c in g * cpg..(g + 1) * cpg {
                for j in 0..spatial {
                    let xhat = (xf[at(c, j)] - mu) * r;
                    want_dx[at(c, j)] = (wf[c] * dyf[at(c, j)] - (xhat * c1 / n + c2 / n)) * r;
                }
            }
        }
    }
    // dx: f32 math, one bf16 rounding (2⁻⁹). dW, dB: each program's f32
    // sum rounded to bf16, then three bf16 atomic adds, each rounded: ≲ 4
    // roundings of 2⁻⁹ relative to the partial sums (|dW| ≲ 30).
    check(
        "group_norm_backward_bf16 dx",
        dev,
        &wide_bf16(&dx.to_vec().unwrap()),
        &want_dx,
        8e-3,
    );
    check(
        "group_norm_backward_bf16 dw",
        dev,
        &wide_bf16(&dw.to_vec().unwrap()),
        &want_dw,
        2e-2,
    );
    check(
        "group_norm_backward_bf16 db",
        dev,
        &wide_bf16(&db.to_vec().unwrap()),
        &want_db,
        2e-2,
    );
}

probe!(
    group_norm_backward_bf16_probe,
    group_norm_backward_bf16_run,
    [group_norm_backward_bf16<64>]
);
