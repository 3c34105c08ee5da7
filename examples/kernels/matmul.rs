//! Matrix multiply: a `BM x BN` block of C per program instance, accumulated
//! over `BK`-wide slabs of A and B; f32 inputs, and f16, bf16 and FP8 inputs
//! accumulated in f32 (on tensor cores where the device has them: `mma.sync`
//! from sm_80, its FP8 form from sm_89, `wgmma` on sm_90a, `tcgen05.mma` on
//! sm_100a, MFMA on gfx90a and gfx942, WMMA on gfx1100).

use crate::common::{max_error, timed, Inputs, Row};
use tile::ir::eval::round_tf32;
use tile::ir::DotPrecision;
use tile::{bf16, f16, f8e4m3, tile_kernel, Device, Error};

#[tile_kernel(configs(BM = 32, BN = 32, BK = 16), configs(BM = 64, BN = 64, BK = 32))]
pub fn matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

#[tile_kernel(configs(BM = 32, BN = 32, BK = 16))]
pub fn matmul_f16<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        // f16 products are exact in f32; the sum accumulates in f32, in the
        // order the device's tensor cores choose (precision `tensor`).
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// The f16 matmul at the configuration of Triton's tutorial: 128×128×64
/// tiles on 8 warps. Built for the GPU targets with tensor cores (as a chain
/// of FMAs this tile is no use, and slow to compile), sm_90a's `wgmma`,
/// sm_100a's `tcgen05.mma`, sm_120a's `mma.sync`, CDNA 4's and RDNA 4's
/// among them, and the CPU.
#[tile_kernel(
    num_warps = 8,
    targets = "sm_80,sm_86,sm_89,sm_90,sm_90a,sm_100a,sm_120a,gfx90a,gfx942,gfx950,gfx1100,gfx1200,host",
    configs(BM = 128, BN = 128, BK = 64)
)]
pub fn matmul_f16_large<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// The same in bf16.
#[tile_kernel(
    num_warps = 8,
    targets = "sm_80,sm_86,sm_89,sm_90,sm_90a,sm_100a,sm_120a,gfx90a,gfx942,gfx950,gfx1100,gfx1200,host",
    configs(BM = 128, BN = 128, BK = 64)
)]
pub fn matmul_bf16_large<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<bf16, 2>,
    b: &Tensor<bf16, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// The tutorial-sized f16 matmul with its operands copied by the TMA
/// (`tma`): on sm_90a, sm_100a and sm_120a (whose `mma.sync` reads the
/// TMA's blocks) each stage's tiles are bulk copies through tensor maps the
/// runtime builds at launch, which needs rows of 16-byte multiples (a
/// launch with other tensors is an error naming them).
#[tile_kernel(
    num_warps = 8,
    tma,
    targets = "sm_90a,sm_100a,sm_120a,host",
    configs(BM = 128, BN = 128, BK = 64)
)]
pub fn matmul_f16_tma<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// FP8 (E4M3) inputs accumulated in f32: `mma.sync.m16n8k32` on sm_89 and
/// later (sm_80 and the AMD targets have no FP8 form of their instruction,
/// and this tile as a chain of FMAs is no use there), and the CPU.
#[tile_kernel(
    targets = "sm_89,sm_90,sm_90a,host",
    configs(BM = 64, BN = 64, BK = 64)
)]
pub fn matmul_f8<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f8e4m3, 2>,
    b: &Tensor<f8e4m3, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// An FP8 linear layer, `y = x · wᵀ` with the weights stored `[N, K]` as
/// FP8 checkpoints ship them, at the 128×128×128 tiles FP8 GEMMs use: on
/// sm_90a `wgmma.m64nNk32` and on sm_100a `tcgen05.mma.kind::f8f6f4`, both
/// reading the operands K-major, their tiles copied by the TMA (each
/// 128-`k` row one 128-byte box row); on sm_89, sm_90 and sm_120a
/// `mma.sync.m16n8k32` reading both with `ldmatrix` (the TMA copying them
/// on sm_90 and sm_120a); and the CPU.
#[tile_kernel(
    num_warps = 8,
    tma,
    targets = "sm_89,sm_90,sm_90a,sm_100a,sm_120a,host",
    configs(BM = 128, BN = 128, BK = 128)
)]
pub fn linear_f8<const BM: usize, const BN: usize, const BK: usize>(
    x: &Tensor<f8e4m3, 2>,
    w: &Tensor<f8e4m3, 2>,
    y: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (vx, vw) = (partition_view(x, [BM, BK]), partition_view(w, [BN, BK]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(x.dim(1), BK) {
        acc = dot(
            vx.load_masked(pid_m, kk),
            vw.load_masked(pid_n, kk).transpose(),
            acc,
        );
    }
    partition_view(y, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// An f32 linear layer on TF32 tensor cores, `y = x · wᵀ` with the weights
/// stored `[N, K]` as PyTorch's `nn.Linear` keeps them (`dot_tf32`: each
/// operand rounded to TF32, PyTorch's `allow_tf32`): on sm_90a
/// `wgmma.m64nNk8.tf32` and on sm_100a `tcgen05.mma.kind::tf32`, both
/// reading the operands K-major (32 `k` of `f32` a 128-byte row, copied by
/// the TMA) after the block rounds them in shared memory; on sm_80, sm_90
/// and sm_120a `mma.sync.m16n8k8.tf32` (the TMA copying its operands on
/// sm_90 and sm_120a); and the CPU.
#[tile_kernel(
    num_warps = 8,
    tma,
    targets = "sm_80,sm_90,sm_90a,sm_100a,sm_120a,host",
    configs(BM = 128, BN = 128, BK = 32)
)]
pub fn linear_tf32<const BM: usize, const BN: usize, const BK: usize>(
    x: &Tensor<f32, 2>,
    w: &Tensor<f32, 2>,
    y: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (vx, vw) = (partition_view(x, [BM, BK]), partition_view(w, [BN, BK]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(x.dim(1), BK) {
        acc = dot_tf32(
            vx.load_masked(pid_m, kk),
            vw.load_masked(pid_n, kk).transpose(),
            acc,
        );
    }
    partition_view(y, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// The plain-Rust reference: each element a fused multiply-add chain over k
/// in order, the order `dot` defines, so the result is bit-exact.
pub fn reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut want = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let sum = (0..k).fold(0.0f32, |acc, kk| a[i * k + kk].mul_add(b[kk * n + j], acc));
            want[i * n + j] = f64::from(sum);
        }
    }
    want
}

/// The largest error a `tensor` dot may have against [`reference`] on any
/// element ([`DotPrecision::error_bound`]); the CPU device's in-order sum has
/// none.
pub fn tensor_tolerance(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> f64 {
    let magnitude = |i: usize, j: usize| {
        (0..k)
            .map(|kk| f64::from(a[i * k + kk] * b[kk * n + j]).abs())
            .sum::<f64>()
    };
    (0..m * n)
        .map(|e| DotPrecision::Tensor.error_bound(k, magnitude(e / n, e % n)))
        .fold(0.0, f64::max)
}

/// Both kernels on a problem whose every extent leaves partial tiles.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (m, n, k) = (130, 70, 90);
    let (a_host, b_host) = (rng.take(m * k), rng.take(k * n));
    let shape = format!("[{m}, {k}] x [{k}, {n}]");
    let a = dev.tensor_from_slice(&a_host, &[m, k])?;
    let b = dev.tensor_from_slice(&b_host, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32];
    let time = timed(|| matmul::<32, 32, 16>::launch(dev, grid, (&a, &b, &mut c)))?;
    let f32_row = Row {
        kernel: "matmul f32".into(),
        code: dev.kernel_code(&matmul::<32, 32, 16>::kernel_spec())?,
        shape: shape.clone(),
        max_error: max_error(&c.to_vec()?, &reference(&a_host, &b_host, m, n, k)),
        tolerance: 0.0,
        time,
    };

    let (a16, b16): (Vec<f16>, Vec<f16>) = (
        a_host.iter().map(|&v| f16::from_f32(v)).collect(),
        b_host.iter().map(|&v| f16::from_f32(v)).collect(),
    );
    let a = dev.tensor_from_slice(&a16, &[m, k])?;
    let b = dev.tensor_from_slice(&b16, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let time = timed(|| matmul_f16::<32, 32, 16>::launch(dev, grid, (&a, &b, &mut c)))?;
    let widen = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let (a32, b32) = (widen(&a16), widen(&b16));
    let want = reference(&a32, &b32, m, n, k);
    let f16_row = Row {
        kernel: "matmul f16 -> f32".into(),
        code: dev.kernel_code(&matmul_f16::<32, 32, 16>::kernel_spec())?,
        shape,
        max_error: max_error(&c.to_vec()?, &want),
        tolerance: tensor_tolerance(&a32, &b32, m, n, k),
        time,
    };
    let mut rows = vec![f32_row, f16_row];
    rows.extend(run_f8(dev, (&a_host, &b_host), (m, n, k))?);
    rows.extend(run_linear_f8(dev, rng)?);
    rows.extend(run_linear_tf32(dev, rng)?);
    rows.extend(run_tma(dev, rng)?);
    rows.extend(run_tutorial(dev, (&a_host, &b_host), (m, n, k))?);
    Ok(rows)
}

/// The tutorial-sized kernels (f16 and bf16), where the device has them,
/// on `a_host` and `b_host` rounded to their dtypes.
pub fn run_tutorial(
    dev: &Device,
    (a_host, b_host): (&[f32], &[f32]),
    (m, n, k): (usize, usize, usize),
) -> Result<Vec<Row>, Error> {
    let (a16, b16): (Vec<f16>, Vec<f16>) = (
        a_host.iter().map(|&v| f16::from_f32(v)).collect(),
        b_host.iter().map(|&v| f16::from_f32(v)).collect(),
    );
    let widen = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let (a32, b32) = (widen(&a16), widen(&b16));
    let mut rows = Vec::new();
    let (a_bf, b_bf): (Vec<bf16>, Vec<bf16>) = (
        a_host.iter().map(|&v| bf16::from_f32(v)).collect(),
        b_host.iter().map(|&v| bf16::from_f32(v)).collect(),
    );
    let widen_bf = |v: &[bf16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let (abf32, bbf32) = (widen_bf(&a_bf), widen_bf(&b_bf));
    let grid = [m.div_ceil(128) as u32, n.div_ceil(128) as u32];
    for bf in [false, true] {
        let (kernel, spec) = if bf {
            (
                "matmul bf16 128x128x64",
                matmul_bf16_large::<128, 128, 64>::kernel_spec(),
            )
        } else {
            (
                "matmul f16 128x128x64",
                matmul_f16_large::<128, 128, 64>::kernel_spec(),
            )
        };
        let code = match dev.kernel_code(&spec) {
            Ok(code) => code,
            Err(Error::NoImage { .. }) => {
                println!("{kernel}: not built for {dev} (tensor-core GPUs and the CPU only)");
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut c = dev.zeros::<f32>(&[m, n])?;
        let time = if bf {
            let a = dev.tensor_from_slice(&a_bf, &[m, k])?;
            let b = dev.tensor_from_slice(&b_bf, &[k, n])?;
            timed(|| matmul_bf16_large::<128, 128, 64>::launch(dev, grid, (&a, &b, &mut c)))?
        } else {
            let a = dev.tensor_from_slice(&a16, &[m, k])?;
            let b = dev.tensor_from_slice(&b16, &[k, n])?;
            timed(|| matmul_f16_large::<128, 128, 64>::launch(dev, grid, (&a, &b, &mut c)))?
        };
        let (a_ref, b_ref) = if bf { (&abf32, &bbf32) } else { (&a32, &b32) };
        rows.push(Row {
            kernel: kernel.into(),
            code,
            shape: format!("[{m}, {k}] x [{k}, {n}]"),
            max_error: max_error(&c.to_vec()?, &reference(a_ref, b_ref, m, n, k)),
            tolerance: tensor_tolerance(a_ref, b_ref, m, n, k),
            time,
        });
    }
    Ok(rows)
}

/// The FP8 kernel on the inputs rounded to E4M3, where the device has it.
fn run_f8(
    dev: &Device,
    (a_host, b_host): (&[f32], &[f32]),
    (m, n, k): (usize, usize, usize),
) -> Result<Vec<Row>, Error> {
    let kernel = "matmul f8e4m3 64x64x64";
    let spec = matmul_f8::<64, 64, 64>::kernel_spec();
    let code = match dev.kernel_code(&spec) {
        Ok(code) => code,
        Err(Error::NoImage { .. }) => {
            println!("{kernel}: not built for {dev} (sm_89 and later, and the CPU only)");
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let round =
        |v: &[f32]| -> Vec<f8e4m3> { v.iter().map(|&x| f8e4m3::from_f64(x.into())).collect() };
    let (a8, b8) = (round(a_host), round(b_host));
    let a = dev.tensor_from_slice(&a8, &[m, k])?;
    let b = dev.tensor_from_slice(&b8, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(64) as u32, n.div_ceil(64) as u32];
    let time = timed(|| matmul_f8::<64, 64, 64>::launch(dev, grid, (&a, &b, &mut c)))?;
    let widen = |v: &[f8e4m3]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let (a32, b32) = (widen(&a8), widen(&b8));
    Ok(vec![Row {
        kernel: kernel.into(),
        code,
        shape: format!("[{m}, {k}] x [{k}, {n}]"),
        max_error: max_error(&c.to_vec()?, &reference(&a32, &b32, m, n, k)),
        tolerance: tensor_tolerance(&a32, &b32, m, n, k),
        time,
    }])
}

/// The FP8 linear layer, where the device has it, on rows of 16-byte
/// multiples (K = 224, as the TMA needs) and partial tiles.
fn run_linear_f8(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let kernel = "linear f8e4m3 (x·wᵀ)";
    let spec = linear_f8::<128, 128, 128>::kernel_spec();
    let code = match dev.kernel_code(&spec) {
        Ok(code) => code,
        Err(Error::NoImage { .. }) => {
            println!("{kernel}: not built for {dev} (sm_89 and later, and the CPU only)");
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let (m, n, k) = (200, 136, 224);
    let round = |v: Vec<f32>| -> Vec<f8e4m3> {
        v.into_iter().map(|x| f8e4m3::from_f64(x.into())).collect()
    };
    let (x8, w8) = (round(rng.take(m * k)), round(rng.take(n * k)));
    let x = dev.tensor_from_slice(&x8, &[m, k])?;
    let w = dev.tensor_from_slice(&w8, &[n, k])?;
    let mut y = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(128) as u32, n.div_ceil(128) as u32];
    let time = timed(|| linear_f8::<128, 128, 128>::launch(dev, grid, (&x, &w, &mut y)))?;
    // The reference's `[K, N]` operand: the weights transposed.
    let x32: Vec<f32> = x8.iter().map(|v| v.to_f32()).collect();
    let wt32: Vec<f32> = (0..k * n)
        .map(|e| w8[(e % n) * k + e / n].to_f32())
        .collect();
    Ok(vec![Row {
        kernel: kernel.into(),
        code,
        shape: format!("[{m}, {k}] x [{n}, {k}]ᵀ"),
        max_error: max_error(&y.to_vec()?, &reference(&x32, &wt32, m, n, k)),
        tolerance: tensor_tolerance(&x32, &wt32, m, n, k),
        time,
    }])
}

/// The TF32 linear layer, where the device has it, on rows of 16-byte
/// multiples (K = 100, as the TMA needs) and partial tiles, against the
/// reference of the operands rounded to TF32.
fn run_linear_tf32(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let kernel = "linear tf32 (x·wᵀ)";
    let spec = linear_tf32::<128, 128, 32>::kernel_spec();
    let code = match dev.kernel_code(&spec) {
        Ok(code) => code,
        Err(Error::NoImage { .. }) => {
            println!("{kernel}: not built for {dev} (sm_80 and later, and the CPU only)");
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let (m, n, k) = (200, 136, 100);
    let (x32, w32) = (rng.take(m * k), rng.take(n * k));
    let x = dev.tensor_from_slice(&x32, &[m, k])?;
    let w = dev.tensor_from_slice(&w32, &[n, k])?;
    let mut y = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(128) as u32, n.div_ceil(128) as u32];
    let time = timed(|| linear_tf32::<128, 128, 32>::launch(dev, grid, (&x, &w, &mut y)))?;
    // The reference's operands: rounded to TF32, the weights transposed.
    let xr: Vec<f32> = x32.iter().map(|&v| round_tf32(v)).collect();
    let wtr: Vec<f32> = (0..k * n)
        .map(|e| round_tf32(w32[(e % n) * k + e / n]))
        .collect();
    Ok(vec![Row {
        kernel: kernel.into(),
        code,
        shape: format!("[{m}, {k}] x [{n}, {k}]ᵀ"),
        max_error: max_error(&y.to_vec()?, &reference(&xr, &wtr, m, n, k)),
        tolerance: tensor_tolerance(&xr, &wtr, m, n, k),
        time,
    }])
}

/// The TMA kernel, where the device has it, on rows of 16-byte multiples
/// (K = 96, N = 72) and partial tiles.
fn run_tma(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let kernel = "matmul f16 TMA 128x128x64";
    let spec = matmul_f16_tma::<128, 128, 64>::kernel_spec();
    let code = match dev.kernel_code(&spec) {
        Ok(code) => code,
        Err(Error::NoImage { .. }) => {
            println!("{kernel}: not built for {dev} (sm_90a, sm_100a and the CPU only)");
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let (m, n, k) = (130, 72, 96);
    let half = |v: Vec<f32>| -> Vec<f16> { v.into_iter().map(f16::from_f32).collect() };
    let (a16, b16) = (half(rng.take(m * k)), half(rng.take(k * n)));
    let a = dev.tensor_from_slice(&a16, &[m, k])?;
    let b = dev.tensor_from_slice(&b16, &[k, n])?;
    let mut c = dev.zeros::<f32>(&[m, n])?;
    let grid = [m.div_ceil(128) as u32, n.div_ceil(128) as u32];
    let time = timed(|| matmul_f16_tma::<128, 128, 64>::launch(dev, grid, (&a, &b, &mut c)))?;
    let widen = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let (a32, b32) = (widen(&a16), widen(&b16));
    Ok(vec![Row {
        kernel: kernel.into(),
        code,
        shape: format!("[{m}, {k}] x [{k}, {n}]"),
        max_error: max_error(&c.to_vec()?, &reference(&a32, &b32, m, n, k)),
        tolerance: tensor_tolerance(&a32, &b32, m, n, k),
        time,
    }])
}
