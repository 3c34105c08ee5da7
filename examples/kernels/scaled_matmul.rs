//! Block-scaled matrix multiply (`dot_scaled`): MXFP8 and MXFP4 (OCP MX:
//! one `f8e8m0` scale per 32 elements along K; the MXFP4 operands packed
//! two to a byte, read with `unpack_fp4`), NVFP4 (one `f8e4m3` scale per
//! 16 `f4e2m1` elements, one to a byte) and `bf16` activations by MXFP4
//! weights, each
//! a `BM x BN` block of C per program instance accumulated in f32. Scales
//! are stored as Triton's `dot_scaled` takes them: `[M, K / G]` for A and
//! `[N, K / G]` for B. Where the device has no block-scaled tensor-core
//! instruction, each operand is scaled and rounded to bf16 in registers and
//! multiplied on the bf16 tensor cores (docs/semantics.md, "dot_scaled").

use crate::common::{max_error, timed, Inputs, Row};
use crate::matmul::{reference, tensor_tolerance};
use tile::{bf16, f4e2m1, f8e4m3, f8e8m0, tile_kernel, Device, Element, Error, Tensor};

/// MXFP8: E4M3 elements, E8M0 scales per 32. Built for the default
/// targets and for the three whose tensor cores apply the scales
/// themselves, sm_100a's block-scaled `tcgen05.mma`, sm_120a's block-scaled
/// `mma.sync` and gfx950's scaled MFMA; the 128×64 tile gives gfx950's 8
/// waves a 32×32×64 block each (its 64×64 tile has too few, and runs on
/// bf16 there), and the 128×128 one gives sm_100a's `tcgen05.mma` its 128
/// rows and a B of whole 128-byte rows (the other tiles run on bf16
/// there).
#[tile_kernel(
    num_warps = 8,
    targets = "sm_80,sm_86,sm_89,sm_90,sm_100a,sm_120a,gfx90a,gfx942,gfx9-4-generic,gfx950,gfx1100,gfx12-generic,host",
    configs(BM = 64, BN = 64, BK = 64),
    configs(BM = 128, BN = 64, BK = 64),
    configs(BM = 128, BN = 128, BK = 64)
)]
pub fn matmul_mxfp8<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f8e4m3, 2>,
    a_scale: &Tensor<f8e8m0, 2>,
    b: &Tensor<f8e4m3, 2>,
    b_scale: &Tensor<f8e8m0, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
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
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// MXFP4: E2M1 elements packed two to a byte along K (A `[M, K / 2]`, B
/// stored `[N, K / 2]` as quantized weights are), E8M0 scales per 32.
#[tile_kernel(num_warps = 8, configs(BM = 64, BN = 64, BK = 64))]
pub fn matmul_mxfp4<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<u8, 2>,
    a_scale: &Tensor<f8e8m0, 2>,
    b: &Tensor<u8, 2>,
    b_scale: &Tensor<f8e8m0, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (
        partition_view(a, [BM, BK / 2]),
        partition_view(b, [BN, BK / 2]),
    );
    let sa = partition_view(a_scale, [BM, BK / 32]);
    let sb = partition_view(b_scale, [BN, BK / 32]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK / 2) {
        acc = dot_scaled(
            va.load_masked(pid_m, kk).unpack_fp4(1),
            sa.load_masked(pid_m, kk),
            vb.load_masked(pid_n, kk).unpack_fp4(1).transpose(),
            sb.load_masked(pid_n, kk),
            acc,
        );
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// NVFP4: E2M1 elements, E4M3 scales per 16.
#[tile_kernel(num_warps = 8, configs(BM = 64, BN = 64, BK = 64))]
pub fn matmul_nvfp4<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f4e2m1, 2>,
    a_scale: &Tensor<f8e4m3, 2>,
    b: &Tensor<f4e2m1, 2>,
    b_scale: &Tensor<f8e4m3, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let sa = partition_view(a_scale, [BM, BK / 16]);
    let sb = partition_view(b_scale, [BN, BK / 16]);
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
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// `bf16` activations (no scales) by MXFP4 weights.
#[tile_kernel(num_warps = 8, configs(BM = 64, BN = 64, BK = 64))]
pub fn matmul_bf16_mxfp4<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<bf16, 2>,
    b: &Tensor<f4e2m1, 2>,
    b_scale: &Tensor<f8e8m0, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let sb = partition_view(b_scale, [BN, BK / 32]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot_scaled(
            va.load_masked(pid_m, kk),
            None,
            vb.load_masked(kk, pid_n),
            sb.load_masked(pid_n, kk),
            acc,
        );
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// A quantized operand: the values as stored and as `f32`.
struct Quantized<T> {
    stored: Vec<T>,
    values: Vec<f32>,
}

impl<T: Copy> Quantized<T> {
    /// `raw` converted by `from` (each format rounds and saturates as the
    /// kernels' casts do) and read back by `to`.
    fn new(raw: impl IntoIterator<Item = f32>, from: fn(f32) -> T, to: fn(T) -> f32) -> Self {
        let stored: Vec<T> = raw.into_iter().map(from).collect();
        let values = stored.iter().map(|&t| to(t)).collect();
        Quantized { stored, values }
    }
}

/// Elements from inputs in [-3, 3), where E2M1 holds 0, ±0.5, ±1, ±1.5, ±2 and ±3.
fn elements<T: Copy>(
    rng: &mut Inputs,
    n: usize,
    from: fn(f32) -> T,
    to: fn(T) -> f32,
) -> Quantized<T> {
    Quantized::new(rng.take(n).into_iter().map(|v| v * 1.5), from, to)
}

/// OCP MX scales: powers of two from 2^-2 to 2^2.
fn mx_scales(rng: &mut Inputs, n: usize) -> Quantized<f8e8m0> {
    let power = |v: f32| v.round().exp2();
    Quantized::new(
        rng.take(n).into_iter().map(power),
        f8e8m0::from_f32,
        f8e8m0::to_f32,
    )
}

/// NVFP4 scales: positive E4M3 values from 0.25 to 2.25.
fn nv_scales(rng: &mut Inputs, n: usize) -> Quantized<f8e4m3> {
    let positive = |v: f32| v.abs() + 0.25;
    Quantized::new(
        rng.take(n).into_iter().map(positive),
        f8e4m3::from_f32,
        f8e4m3::to_f32,
    )
}

/// The operand as the product sees it: element `[r, k]` (or for B,
/// `transposed`, element `[k, n]`) times its group's scale, rounded to
/// bf16; `scales` holds `rows × groups` values (none: unscaled).
fn effective(
    values: &[f32],
    scales: &[f32],
    (rows, k, group): (usize, usize, usize),
    transposed: bool,
) -> Vec<f32> {
    let groups = k.div_ceil(group);
    (0..values.len())
        .map(|i| {
            let (row, kk) = if transposed {
                (i % rows, i / rows)
            } else {
                (i / k, i % k)
            };
            let scale = if scales.is_empty() {
                1.0
            } else {
                scales[row * groups + kk / group]
            };
            bf16::from_f32(values[i] * scale).to_f32()
        })
        .collect()
}

/// One problem's row: the kernel's result against the in-order product of
/// the effective operands, within the bound of a `tensor` dot.
fn row(
    kernel: &str,
    dev: &Device,
    spec: &tile::KernelSpec,
    time: std::time::Duration,
    got: &[f32],
    (a, b): (&[f32], &[f32]),
    (m, n, k): (usize, usize, usize),
) -> Result<Row, Error> {
    Ok(Row {
        kernel: kernel.into(),
        code: dev.kernel_code(spec)?,
        shape: format!("[{m}, {k}] x [{k}, {n}]"),
        max_error: max_error(got, &reference(a, b, m, n, k)),
        tolerance: tensor_tolerance(a, b, m, n, k),
        time,
    })
}

fn upload<T: Element>(dev: &Device, q: &Quantized<T>, shape: &[usize]) -> Result<Tensor<T>, Error> {
    dev.tensor_from_slice(&q.stored, shape)
}

/// The row of a kernel `spec` named `kernel` that `launch` runs into a
/// fresh `[M, N]` output, against the product of the scaled operands.
fn launched_row(
    dev: &Device,
    (kernel, spec): (&str, tile::KernelSpec),
    launch: impl Fn(&mut Tensor<f32>) -> Result<(), Error>,
    scaled: (&[f32], &[f32]),
    (m, n, k): (usize, usize, usize),
) -> Result<Row, Error> {
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let time = timed(|| launch(&mut c))?;
    row(kernel, dev, &spec, time, &c.to_vec()?, scaled, (m, n, k))
}

/// The four kernels (MXFP8 at its three tiles) on a problem whose every
/// extent leaves partial tiles (K = 200: the last block of K holds 8
/// elements, the last MX group 8).
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n, k): (usize, usize, usize) = (130, 70, 200);
    let grid = [m.div_ceil(64) as u32, n.div_ceil(64) as u32];
    let (mx, nv) = (k.div_ceil(32), k.div_ceil(16));
    let mut rows = Vec::new();

    let a8 = elements(rng, m * k, f8e4m3::from_f32, f8e4m3::to_f32);
    let b8 = elements(rng, k * n, f8e4m3::from_f32, f8e4m3::to_f32);
    let (sa, sb) = (mx_scales(rng, m * mx), mx_scales(rng, n * mx));
    let (a, b) = (upload(dev, &a8, &[m, k])?, upload(dev, &b8, &[k, n])?);
    let (ta, tb) = (upload(dev, &sa, &[m, mx])?, upload(dev, &sb, &[n, mx])?);
    let ea = effective(&a8.values, &sa.values, (m, k, 32), false);
    let eb = effective(&b8.values, &sb.values, (n, k, 32), true);
    let scaled = (&ea[..], &eb[..]);
    rows.push(launched_row(
        dev,
        ("matmul mxfp8", matmul_mxfp8::<64, 64, 64>::kernel_spec()),
        |c| matmul_mxfp8::<64, 64, 64>::launch(dev, grid, (&a, &ta, &b, &tb, c)),
        scaled,
        (m, n, k),
    )?);
    let wide = [m.div_ceil(128) as u32, n.div_ceil(64) as u32];
    rows.push(launched_row(
        dev,
        (
            "matmul mxfp8 128x64",
            matmul_mxfp8::<128, 64, 64>::kernel_spec(),
        ),
        |c| matmul_mxfp8::<128, 64, 64>::launch(dev, wide, (&a, &ta, &b, &tb, c)),
        scaled,
        (m, n, k),
    )?);
    let widest = [m.div_ceil(128) as u32, n.div_ceil(128) as u32];
    rows.push(launched_row(
        dev,
        (
            "matmul mxfp8 128x128",
            matmul_mxfp8::<128, 128, 64>::kernel_spec(),
        ),
        |c| matmul_mxfp8::<128, 128, 64>::launch(dev, widest, (&a, &ta, &b, &tb, c)),
        scaled,
        (m, n, k),
    )?);

    let a4 = elements(rng, m * k, f4e2m1::from_f32, f4e2m1::to_f32);
    let b4 = elements(rng, k * n, f4e2m1::from_f32, f4e2m1::to_f32);
    // Packed along K: A's rows as they are, B's columns (its `[N, K]`
    // transpose) two values to a byte.
    let b4_rows: Vec<f4e2m1> = (0..n * k).map(|i| b4.stored[(i % k) * n + i / k]).collect();
    let pa = dev.tensor_from_slice(&f4e2m1::pack_pairs(&a4.stored), &[m, k / 2])?;
    let pb = dev.tensor_from_slice(&f4e2m1::pack_pairs(&b4_rows), &[n, k / 2])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let time =
        timed(|| matmul_mxfp4::<64, 64, 64>::launch(dev, grid, (&pa, &ta, &pb, &tb, &mut c)))?;
    let ea = effective(&a4.values, &sa.values, (m, k, 32), false);
    let eb = effective(&b4.values, &sb.values, (n, k, 32), true);
    let (a, b) = (upload(dev, &a4, &[m, k])?, upload(dev, &b4, &[k, n])?);
    let spec = matmul_mxfp4::<64, 64, 64>::kernel_spec();
    rows.push(row(
        "matmul mxfp4",
        dev,
        &spec,
        time,
        &c.to_vec()?,
        (&ea, &eb),
        (m, n, k),
    )?);

    let (na, nb) = (nv_scales(rng, m * nv), nv_scales(rng, n * nv));
    let (ta, tb) = (upload(dev, &na, &[m, nv])?, upload(dev, &nb, &[n, nv])?);
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let time = timed(|| matmul_nvfp4::<64, 64, 64>::launch(dev, grid, (&a, &ta, &b, &tb, &mut c)))?;
    let ea = effective(&a4.values, &na.values, (m, k, 16), false);
    let eb = effective(&b4.values, &nb.values, (n, k, 16), true);
    let spec = matmul_nvfp4::<64, 64, 64>::kernel_spec();
    rows.push(row(
        "matmul nvfp4",
        dev,
        &spec,
        time,
        &c.to_vec()?,
        (&ea, &eb),
        (m, n, k),
    )?);

    let act = elements(rng, m * k, bf16::from_f32, bf16::to_f32);
    let a = upload(dev, &act, &[m, k])?;
    let tb = upload(dev, &sb, &[n, mx])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let time = timed(|| matmul_bf16_mxfp4::<64, 64, 64>::launch(dev, grid, (&a, &b, &tb, &mut c)))?;
    let eb = effective(&b4.values, &sb.values, (n, k, 32), true);
    let spec = matmul_bf16_mxfp4::<64, 64, 64>::kernel_spec();
    rows.push(row(
        "matmul bf16 x mxfp4",
        dev,
        &spec,
        time,
        &c.to_vec()?,
        (&act.values, &eb),
        (m, n, k),
    )?);
    Ok(rows)
}
