//! Matrix products to check `dot`s of precision `tensor` against, written
//! from their definitions rather than from any lowering.
//!
//! A tensor core sums a step of products at once, so its `dot` is not the
//! interpreter's in-order chain; it must lie within
//! [`tile_ir::DotPrecision::error_bound`] of it. The emulators also fix one
//! exact order (`tile_hw::mma`): each step of `step` consecutive `k`, the
//! accumulator and the step's products summed in `f64` in ascending `k` and
//! rounded once to `f32`. [`stepped`] computes that order from row-major
//! matrices, with no lane layout in sight, so a lowering or an emulator that
//! misplaces an element disagrees with it.

use crate::rng::SplitMix64;
use rand::RngCore;
use tile_ir::builder::{BuildError, Builder};
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{DType, DotPrecision, Function, Scalar, TensorType, Type, Value};

/// A random `dot` of precision `tensor` (or `tf32`): one program computing
/// `c + a·b` into `out`, with its arguments and their `f32` values.
#[derive(Clone, Debug)]
pub struct DotCase {
    /// The kernel `(a, b, c, out)`.
    pub func: Function,
    /// The warps to lower it for.
    pub warps: u32,
    /// `(M, K, N)`: whole multiples of `mma.sync.m16n8k16`'s blocks
    /// (`m16n8k8`'s for `tf32`).
    pub dims: (usize, usize, usize),
    /// The arguments: `a`, `b` (f16 or bf16; f32 for `tf32`), `c`, `out`
    /// (f32), the output last; a scaled case's scales follow their operand.
    pub args: Vec<Arg>,
    /// The values the product reads from `a`, `b` and `c`, row-major: for
    /// `tf32`, `a`'s and `b`'s rounded to TF32; for a scaled case, each
    /// element times its scale in the compute dtype.
    pub values: [Vec<f32>; 3],
}

/// The `tensor` dot of seed `seed`: f16 or bf16, `M`, `N`, `K` multiples of
/// 16, 8 and 16 up to 64, 1 to 8 warps, operands of mixed signs and
/// magnitudes `2^-6 .. 2^6` (so sums cancel and steps round) with some
/// zeros, and a random accumulator.
pub fn dot_case(seed: u64) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let dtype = rng.pick(&[DType::F16, DType::BF16]);
    let warps = rng.pick(&[1u32, 2, 4, 8]);
    let (m, k, n) = (
        16 * rng.range(1, 4),
        16 * rng.range(1, 4),
        8 * rng.range(1, 8),
    );
    random_dot(rng, DotPrecision::Tensor, dtype, warps, (m, k, n))
}

/// The `tf32` dot of seed `seed`: f32 operands with all their mantissa
/// bits (so rounding to TF32 matters), `M` a multiple of 16 up to 64, `K`
/// and `N` of 8 up to 64, 1 to 8 warps, values as [`dot_case`]'s.
pub fn tf32_dot_case(seed: u64) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let warps = rng.pick(&[1u32, 2, 4, 8]);
    let (m, k, n) = (
        16 * rng.range(1, 4),
        8 * rng.range(1, 8),
        8 * rng.range(1, 8),
    );
    random_dot(rng, DotPrecision::Tf32, DType::F32, warps, (m, k, n))
}

/// The `tf32` dot of seed `seed` at the blocks of the descriptor-reading
/// instructions (`tcgen05.mma`'s 128 rows): `M` of 128 or 256, `K` of 8,
/// 16, 32 or 64, `N` a multiple of 32 up to 128, 4 or 8 warps, operands
/// as [`tf32_dot_case`]'s.
pub fn tf32_block_dot_case(seed: u64) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let warps = rng.pick(&[4u32, 8]);
    let (m, k, n) = (
        rng.pick(&[128, 256]),
        rng.pick(&[8, 16, 32, 64]),
        32 * rng.range(1, 4),
    );
    random_dot(rng, DotPrecision::Tf32, DType::F32, warps, (m, k, n))
}

/// The FP8 `tensor` dot of seed `seed`: both operands `f8e4m3` or both
/// `f8e5m2`, `M` a multiple of 16 up to 64, `K` of 32 up to 96, `N` of 8
/// up to 64, 1 to 8 warps, values as [`dot_case`]'s (rounded to the
/// format).
pub fn fp8_dot_case(seed: u64) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let dtype = rng.pick(&[DType::F8E4M3, DType::F8E5M2]);
    let warps = rng.pick(&[1u32, 2, 4, 8]);
    let (m, k, n) = (
        16 * rng.range(1, 4),
        32 * rng.range(1, 3),
        8 * rng.range(1, 8),
    );
    random_dot(rng, DotPrecision::Tensor, dtype, warps, (m, k, n))
}

/// The block-scaled `dot` of seed `seed` (`dot_scaled`): each side an OCP MX
/// element format with `f8e8m0` scales, NVFP4 (`f4e2m1` with `f8e4m3`
/// scales per 16), or `bf16`/`f16` without scales; `M` a multiple of 16 up
/// to 64, `K` of 32 up to 96, `N` of 8 up to 64, 1 to 8 warps; elements as
/// [`dot_case`]'s rounded (saturating) to the format, scales from 2^-3 to
/// 2^3. The arguments are `a, [a_scale,] b, [b_scale,] c, out`; the values
/// are the operands as the product sees them (each element times its
/// scale, rounded to the compute dtype: docs/semantics.md).
pub fn scaled_dot_case(seed: u64) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let sides = [
        (DType::F4E2M1, Some(DType::F8E8M0)),
        (DType::F6E2M3, Some(DType::F8E8M0)),
        (DType::F6E3M2, Some(DType::F8E8M0)),
        (DType::F8E4M3, Some(DType::F8E8M0)),
        (DType::F8E5M2, Some(DType::F8E8M0)),
        (DType::F4E2M1, Some(DType::F8E4M3)),
        (DType::BF16, None),
        (DType::F16, None),
    ];
    let (a_side, b_side) = (rng.pick(&sides), rng.pick(&sides));
    scaled_case(&mut rng, (a_side, b_side), [32, 8])
}

/// The MXFP8 `dot` of seed `seed`: [`scaled_dot_case`]'s with both sides
/// `f8e4m3` or both `f8e5m2`, each with `f8e8m0` scales (what sm_120a's
/// block-scaled `mma.sync` and gfx950's scaled MFMA take), `K` a multiple
/// of 64 up to 192 and `N` of 16 up to 64.
pub fn mxfp8_dot_case(seed: u64) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let side = rng.pick(&[
        (DType::F8E4M3, Some(DType::F8E8M0)),
        (DType::F8E5M2, Some(DType::F8E8M0)),
    ]);
    scaled_case(&mut rng, (side, side), [64, 16])
}

/// The OCP MX `dot` of seed `seed`: [`mxfp8_dot_case`]'s with both sides
/// of one of `kind::mxf8f6f4`'s formats (`f8e4m3`, `f8e5m2`, `f6e2m3`,
/// `f6e3m2`, `f4e2m1`, one value a byte) with `f8e8m0` scales, what
/// sm_120a's block-scaled `mma.sync` takes.
pub fn mx_dot_case(seed: u64) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let dtype = rng.pick(&[
        DType::F8E4M3,
        DType::F8E5M2,
        DType::F6E2M3,
        DType::F6E3M2,
        DType::F4E2M1,
    ]);
    let side = (dtype, Some(DType::F8E8M0));
    scaled_case(&mut rng, (side, side), [64, 16])
}

/// [`mxfp8_dot_case`]'s product of seed `seed` at the shape `(M, K, N)`
/// on `warps` warps (the tiles of sm_100a's block-scaled `tcgen05.mma`,
/// 128 rows and more).
pub fn mxfp8_dot_case_of(seed: u64, dims: (usize, usize, usize), warps: u32) -> DotCase {
    let mut rng = SplitMix64::new(seed);
    let side = rng.pick(&[
        (DType::F8E4M3, Some(DType::F8E8M0)),
        (DType::F8E5M2, Some(DType::F8E8M0)),
    ]);
    scaled_case_of(&mut rng, (side, side), dims, warps)
}

/// A block-scaled `dot` of `sides` (each an element dtype and its scales'),
/// its shapes, warps and values drawn from `rng` as [`scaled_dot_case`]
/// says, with `K` and `N` multiples of `units`.
fn scaled_case(
    rng: &mut SplitMix64,
    (a_side, b_side): ((DType, Option<DType>), (DType, Option<DType>)),
    [k_unit, n_unit]: [usize; 2],
) -> DotCase {
    let warps = rng.pick(&[1u32, 2, 4, 8]);
    let (m, k, n) = (
        16 * rng.range(1, 4),
        k_unit * rng.range(1, 3),
        n_unit * rng.range(1, 64 / n_unit),
    );
    scaled_case_of(rng, (a_side, b_side), (m, k, n), warps)
}

/// A block-scaled `dot` of `sides` at the shape `(M, K, N)` on `warps`
/// warps, its values drawn from `rng`.
fn scaled_case_of(
    rng: &mut SplitMix64,
    (a_side, b_side): ((DType, Option<DType>), (DType, Option<DType>)),
    (m, k, n): (usize, usize, usize),
    warps: u32,
) -> DotCase {
    let compute = tile_ir::scaled::compute_dtype(a_side.0, b_side.0);
    let (a, sa, va) = scaled_operand(rng, a_side, (m, k), false, compute);
    let (b, sb, vb) = scaled_operand(rng, b_side, (n, k), true, compute);
    let (c, vc) = random_matrix(rng, [m, n], DType::F32);
    let out = Arg::Tensor(HostTensor::from_vec(&[m, n], vec![0.0f32; m * n]).expect("a tensor"));
    let mut args = vec![a];
    args.extend(sa);
    args.push(b);
    args.extend(sb);
    args.extend([c, out]);
    DotCase {
        func: scaled_dot_kernel((a_side, b_side), (m, k, n)).expect("the kernel builds"),
        warps,
        dims: (m, k, n),
        args,
        values: [va, vb, vc],
    }
}

/// One side of a scaled product of `rows` rows along `k` (`transposed`:
/// stored `[k, rows]`, as `b` is): its argument, its scales' and the
/// values the product sees, row-major as stored.
fn scaled_operand(
    rng: &mut SplitMix64,
    (dtype, scale): (DType, Option<DType>),
    (rows, k): (usize, usize),
    transposed: bool,
    compute: DType,
) -> (Arg, Option<Arg>, Vec<f32>) {
    let shape = if transposed { [k, rows] } else { [rows, k] };
    let elements: Vec<Scalar> = (0..rows * k)
        .map(|_| tile_ir::eval::cast(Scalar::F32(random_value(rng)), dtype))
        .collect();
    let arg = Arg::Tensor(HostTensor::from_scalars(dtype, &shape, &elements).expect("a tensor"));
    let Some(scale) = scale else {
        let values = elements
            .iter()
            .map(|&x| tile_ir::eval::cast(x, compute).to_f64() as f32)
            .collect();
        return (arg, None, values);
    };
    let group = tile_ir::scaled::scale_group(scale).expect("a scale dtype");
    let groups = k / group;
    let scales: Vec<Scalar> = (0..rows * groups)
        .map(|_| {
            let power = 2f32.powi(rng.range(0, 7) as i32 - 3);
            tile_ir::eval::cast(Scalar::F32(power * (1.0 + rng.unit() as f32)), scale)
        })
        .collect();
    let values = (0..rows * k)
        .map(|i| {
            let (row, kk) = if transposed {
                (i % rows, i / rows)
            } else {
                (i / k, i % k)
            };
            let x = tile_ir::eval::cast(elements[i], DType::F32).to_f64();
            let s = scales[row * groups + kk / group].to_f64();
            // Both factors are short floats: the product is exact in f64.
            tile_ir::eval::cast(Scalar::F64(x * s), compute).to_f64() as f32
        })
        .collect();
    let scales_arg = HostTensor::from_scalars(scale, &[rows, groups], &scales).expect("a tensor");
    (arg, Some(Arg::Tensor(scales_arg)), values)
}

/// `out = dot_scaled(a, [a_scale,] b, [b_scale,] c)` in one program.
fn scaled_dot_kernel(
    (a_side, b_side): ((DType, Option<DType>), (DType, Option<DType>)),
    (m, k, n): (usize, usize, usize),
) -> Result<Function, BuildError> {
    let group =
        |side: (DType, Option<DType>)| side.1.and_then(tile_ir::scaled::scale_group).unwrap_or(1);
    let mut inputs = vec![("a", a_side.0, [m, k])];
    inputs.extend(a_side.1.map(|d| ("a_scale", d, [m, k / group(a_side)])));
    inputs.push(("b", b_side.0, [k, n]));
    inputs.extend(b_side.1.map(|d| ("b_scale", d, [n, k / group(b_side)])));
    inputs.push(("c", DType::F32, [m, n]));
    whole_tile_kernel("scaled_dot", &inputs, |b, t| {
        let a_scale = a_side.1.map(|_| t[1]);
        let at_b = 1 + usize::from(a_scale.is_some());
        let b_scale = b_side.1.map(|_| t[at_b + 1]);
        b.dot_scaled((t[0], a_scale), (t[at_b], b_scale), t[t.len() - 1])
    })
}

/// A one-program kernel of 2-D tensor parameters `inputs` (name, dtype,
/// shape), each loaded whole as one tile, then `out` (f32, the last
/// input's shape): `out = product(tiles)`.
fn whole_tile_kernel(
    name: &str,
    inputs: &[(&str, DType, [usize; 2])],
    product: impl FnOnce(&mut Builder, &[Value]) -> Result<Value, BuildError>,
) -> Result<Function, BuildError> {
    let tensor = |dtype| Type::Tensor(TensorType::new(dtype, 2));
    let mut b = Builder::new(name);
    let params: Vec<Value> = inputs
        .iter()
        .map(|&(n, d, _)| b.param(n, tensor(d)))
        .collect();
    let out = b.param("out", tensor(DType::F32));
    let zero = b.constant(Scalar::I32(0))?;
    let mut tiles = Vec::new();
    for (&param, (_, _, shape)) in params.iter().zip(inputs) {
        let view = b.partition_view(param, shape)?;
        tiles.push(b.load(view, &[zero, zero])?);
    }
    let r = product(&mut b, &tiles)?;
    let shape = inputs.last().map_or([1, 1], |&(_, _, s)| s);
    let view = b.partition_view(out, &shape)?;
    b.store(r, view, &[zero, zero])?;
    b.finish()
}

/// A dot of `precision` on random operands of `dtype`.
fn random_dot(
    mut rng: SplitMix64,
    precision: DotPrecision,
    dtype: DType,
    warps: u32,
    (m, k, n): (usize, usize, usize),
) -> DotCase {
    let (a, va) = random_matrix(&mut rng, [m, k], dtype);
    let (b, vb) = random_matrix(&mut rng, [k, n], dtype);
    let (c, vc) = random_matrix(&mut rng, [m, n], DType::F32);
    let read = |values: Vec<f32>| -> Vec<f32> {
        match precision {
            DotPrecision::Tf32 => values.into_iter().map(tile_ir::eval::round_tf32).collect(),
            _ => values,
        }
    };
    let (va, vb) = (read(va), read(vb));
    let out = Arg::Tensor(HostTensor::from_vec(&[m, n], vec![0.0f32; m * n]).expect("a tensor"));
    DotCase {
        func: dot_kernel(dtype, precision, (m, k, n)).expect("the dot kernel builds"),
        warps,
        dims: (m, k, n),
        args: vec![a, b, c, out],
        values: [va, vb, vc],
    }
}

/// A product operand's value: 5% zeros, the rest of either sign and a
/// magnitude from 2^-6 to 2^6 (so sums cancel and steps round).
fn random_value(rng: &mut SplitMix64) -> f32 {
    if rng.chance(0.05) {
        return 0.0;
    }
    let magnitude = (1.0 + rng.unit()) * 2f64.powi(rng.range(0, 12) as i32 - 6);
    let signed = if rng.chance(0.5) {
        -magnitude
    } else {
        magnitude
    };
    signed as f32
}

/// A matrix of `shape` of [`random_value`]s rounded to `dtype`, and the
/// values it holds.
fn random_matrix(rng: &mut SplitMix64, shape: [usize; 2], dtype: DType) -> (Arg, Vec<f32>) {
    let scalars: Vec<Scalar> = (0..shape[0] * shape[1])
        .map(|_| tile_ir::eval::cast(Scalar::F32(random_value(rng)), dtype))
        .collect();
    let values = scalars.iter().map(|s| s.to_f64() as f32).collect();
    let tensor = HostTensor::from_scalars(dtype, &shape, &scalars).expect("a tensor");
    (Arg::Tensor(tensor), values)
}

/// `out = c + a·b` in one program, with precision `precision`.
fn dot_kernel(
    dtype: DType,
    precision: DotPrecision,
    (m, k, n): (usize, usize, usize),
) -> Result<Function, BuildError> {
    let inputs = [
        ("a", dtype, [m, k]),
        ("b", dtype, [k, n]),
        ("c", DType::F32, [m, n]),
    ];
    whole_tile_kernel("tensor_dot", &inputs, |b, t| {
        b.dot_with(t[0], t[1], t[2], precision)
    })
}

/// A random tensor-core matmul with a K loop (`tile_ir::samples::matmul`):
/// the kernel, how to lower and launch it, its arguments and their values.
#[derive(Clone, Debug)]
pub struct LoopCase {
    /// The kernel `(a, b, c)`, `c = a·b`.
    pub func: Function,
    /// The warps to lower it for.
    pub warps: u32,
    /// The stages of its software pipeline (1: none).
    pub stages: u32,
    /// `(BM, BN, BK)`.
    pub tiles: (usize, usize, usize),
    /// `(M, K, N)`, with partial edge tiles.
    pub dims: (usize, usize, usize),
    /// The grid of programs.
    pub grid: [u32; 3],
    /// The arguments: `a`, `b` (f16 or bf16, rows contiguous and 16-byte
    /// aligned or not, so that both the copies and their element-by-element
    /// fallback run) and `c` (f32 zeros).
    pub args: Vec<Arg>,
    /// The values of `a` and `b`, row-major.
    pub values: [Vec<f32>; 2],
}

/// The K-loop matmul of seed `seed`: f16 or bf16, tiles that are whole
/// `mma.sync` blocks (`BM`, `BK` multiples of 16 up to 64, `BN` of 8 up to
/// 64), extents with partial tiles, 1 to 8 warps, 1 to 4 stages, and rows
/// of `a` and `b` padded to whole 16-byte chunks or by one element.
pub fn loop_case(seed: u64) -> LoopCase {
    let mut rng = SplitMix64::new(seed);
    let dtype = rng.pick(&[DType::F16, DType::BF16]);
    let warps = rng.pick(&[1u32, 2, 4, 8]);
    let stages = rng.pick(&[1u32, 2, 3, 4]);
    let tiles = (
        16 * rng.range(1, 4),
        8 * rng.range(1, 8),
        16 * rng.range(1, 4),
    );
    let (bm, bn, bk) = tiles;
    let (m, n, k) = (
        bm * rng.range(1, 3) - rng.range(0, 7),
        bn * rng.range(1, 3) - rng.range(0, 7).min(bn - 1),
        bk * rng.range(1, 5) - rng.range(0, 15),
    );
    let aligned = rng.chance(0.5);
    let mut matrix = |rows: usize, cols: usize| -> (Arg, Vec<f32>) {
        let stride = if aligned {
            cols.next_multiple_of(8)
        } else {
            cols + 1
        };
        let arg = crate::inputs::padded_rows(rng.next_u64(), rows, cols, stride, dtype);
        let Arg::Tensor(t) = &arg else {
            unreachable!("padded_rows makes a tensor")
        };
        let values = (0..rows * cols)
            .map(|i| {
                t.get(&[i / cols, i % cols])
                    .map_or(f32::NAN, |v| v.to_f64() as f32)
            })
            .collect();
        (arg, values)
    };
    let (a, va) = matrix(m, k);
    let (b, vb) = matrix(k, n);
    let c = Arg::Tensor(HostTensor::from_vec(&[m, n], vec![0.0f32; m * n]).expect("a tensor"));
    LoopCase {
        func: tile_ir::samples::matmul(bm, bn, bk, dtype).expect("the matmul builds"),
        warps,
        stages,
        tiles,
        dims: (m, k, n),
        grid: [m.div_ceil(bm) as u32, n.div_ceil(bn) as u32, 1],
        args: vec![a, b, c],
        values: [va, vb],
    }
}

/// `c + a·b` for row-major `a: [m, k]`, `b: [k, n]` and `c: [m, n]`, summed
/// in steps of `step` (the last one shorter if `step` does not divide `k`).
pub fn stepped(
    a: &[f32],
    b: &[f32],
    c: &[f32],
    (m, k, n): (usize, usize, usize),
    step: usize,
) -> Vec<f32> {
    let mut out = c.to_vec();
    for row in 0..m {
        for col in 0..n {
            let acc = &mut out[row * n + col];
            for start in (0..k).step_by(step.max(1)) {
                let sum = (start..(start + step).min(k)).fold(f64::from(*acc), |s, kk| {
                    s + f64::from(a[row * k + kk]) * f64::from(b[kk * n + col])
                });
                *acc = sum as f32;
            }
        }
    }
    out
}

/// Checks every element of `got` against `reference` (an `ieee` dot of the
/// same operands) within the `tensor` bound for `k`; the first element
/// outside it, with its figures, is the error.
pub fn within_tensor_bound(
    got: &[f32],
    reference: &[f32],
    a: &[f32],
    b: &[f32],
    c: &[f32],
    (m, k, n): (usize, usize, usize),
) -> Result<(), String> {
    for row in 0..m {
        for col in 0..n {
            let i = row * n + col;
            let magnitude = (0..k).fold(f64::from(c[i].abs()), |s, kk| {
                s + (f64::from(a[row * k + kk]) * f64::from(b[kk * n + col])).abs()
            });
            let bound = DotPrecision::Tensor.error_bound(k, magnitude);
            let error = (f64::from(got[i]) - f64::from(reference[i])).abs();
            let apart = if reference[i].is_finite() {
                // A NaN result of a finite reference is apart too.
                error.is_nan() || error > bound
            } else {
                got[i] != reference[i] && !(got[i].is_nan() && reference[i].is_nan())
            };
            if apart {
                return Err(format!(
                    "element [{row}, {col}]: {} against {} (error {error:e}, bound {bound:e} for K = {k})",
                    got[i], reference[i]
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_round_once_each() {
        // 1 + 2⁻²⁴ + 2⁻²⁴: one step keeps both halves, steps of one lose them.
        let tiny = 2f32.powi(-12);
        let (a, b, c) = ([tiny, tiny], [tiny, tiny], [1.0]);
        assert_eq!(stepped(&a, &b, &c, (1, 2, 1), 2), [1.0 + 2f32.powi(-23)]);
        assert_eq!(stepped(&a, &b, &c, (1, 2, 1), 1), [1.0]);
    }

    #[test]
    fn the_bound_admits_reordering_and_rejects_a_wrong_element() {
        let (a, b, c) = (vec![0.5f32; 32], vec![0.25f32; 32], vec![0.0f32; 1]);
        let one_step = stepped(&a, &b, &c, (1, 32, 1), 32);
        let in_order = stepped(&a, &b, &c, (1, 32, 1), 1);
        assert!(within_tensor_bound(&one_step, &in_order, &a, &b, &c, (1, 32, 1)).is_ok());
        let wrong = [one_step[0] + 0.125];
        let error = within_tensor_bound(&wrong, &in_order, &a, &b, &c, (1, 32, 1)).unwrap_err();
        assert!(
            error.starts_with("element [0, 0]: 4.125 against 4"),
            "{error}"
        );
    }
}
