//! The typing rules of the matrix products, `dot` and `dot_scaled`.

use super::checks::{arity, tile_operand};
use super::RuleResult;
use crate::dtype::DType;
use crate::ops::DotPrecision;
use crate::scaled::{scale_group, takes_scale, ScaledOperands};
use crate::types::{TileType, Type};

/// The accumulator dtype of `dot` for operands of dtypes `a` and `b`, or
/// why they cannot be multiplied.
pub fn dot_accumulator(a: DType, b: DType) -> RuleResult<DType> {
    use DType::*;
    match (a, b) {
        (F16, F16) | (BF16, BF16) | (F32, F32) => Ok(F32),
        (x, y) if x.is_f8() && y.is_f8() => Ok(F32),
        (F64, F64) => Ok(F64),
        (I8, I8) => Ok(I32),
        _ => Err(format!(
            "dot supports f16×f16, bf16×bf16, f8×f8, f32×f32, f64×f64 and i8×i8 operands, found {a}×{b}"
        )),
    }
}

/// `dot`: `a: [M, K]`, `b: [K, N]`, `c: [M, N]` of the accumulator dtype.
pub(super) fn dot(precision: DotPrecision, operands: &[&Type]) -> RuleResult<Vec<Type>> {
    arity(operands, 3)?;
    let (a, b, c) = (
        tile_operand(operands[0])?,
        tile_operand(operands[1])?,
        tile_operand(operands[2])?,
    );
    product_shape("dot", a, b, c)?;
    let acc = dot_accumulator(a.dtype, b.dtype)?;
    if c.dtype != acc {
        return Err(format!(
            "dot of {} and {} accumulates in {acc}, but the accumulator is {}",
            a.dtype, b.dtype, c.dtype
        ));
    }
    let tensor_ok = DotPrecision::default_for(a.dtype, b.dtype) == DotPrecision::Tensor;
    if precision == DotPrecision::Tensor && !tensor_ok {
        return Err(format!(
            "dot precision `tensor` needs f16, bf16 or FP8 operands, whose products are \
             exact in the f32 accumulator; a dot of {} and {} is `ieee` (or `tf32` for f32)",
            a.dtype, b.dtype
        ));
    }
    if precision == DotPrecision::Tf32 && (a.dtype, b.dtype) != (DType::F32, DType::F32) {
        return Err(format!(
            "dot precision `tf32` rounds f32 operands to TF32; a dot of {} and {} cannot have it",
            a.dtype, b.dtype
        ));
    }
    Ok(vec![Type::Tile(c.clone())])
}

/// `dot_scaled` (see [`crate::scaled`]): the operands of a `dot` with an
/// `f32` accumulator, each of an element format with its scales or of
/// `bf16`/`f16` without.
pub(super) fn dot_scaled(operands: &[&Type]) -> RuleResult<Vec<Type>> {
    let dtypes: Vec<DType> = operands.iter().map(|t| t.dtype()).collect();
    let pos = ScaledOperands::locate(&dtypes)?;
    let (a, b, c) = (
        tile_operand(operands[pos.a])?,
        tile_operand(operands[pos.b])?,
        tile_operand(operands[pos.c])?,
    );
    for (name, t) in [("a", a), ("b", b)] {
        let known = takes_scale(t.dtype) || matches!(t.dtype, DType::BF16 | DType::F16);
        if !known {
            return Err(format!(
                "dot_scaled's {name} must be f4e2m1, f6e2m3, f6e3m2, f8e4m3, f8e5m2 (with scales), \
                 bf16 or f16, found {}",
                t.dtype
            ));
        }
    }
    let (m, n) = product_shape("dot_scaled", a, b, c)?;
    if c.dtype != DType::F32 {
        return Err(format!(
            "dot_scaled accumulates in f32, but the accumulator is {}",
            c.dtype
        ));
    }
    let k = a.shape.dims()[1];
    if let Some(i) = pos.a_scale {
        scales("a", a.dtype, tile_operand(operands[i])?, m, k)?;
    }
    if let Some(i) = pos.b_scale {
        scales("b", b.dtype, tile_operand(operands[i])?, n, k)?;
    }
    Ok(vec![Type::Tile(c.clone())])
}

/// Checks the scales of operand `name` (elements of `element`, `rows` of
/// `k`): `[rows, k / G]` of a scale dtype whose group `G` divides `k`.
fn scales(name: &str, element: DType, s: &TileType, rows: usize, k: usize) -> RuleResult<()> {
    let Some(group) = scale_group(s.dtype) else {
        return Err(format!(
            "{name}'s scales must be f8e8m0 (OCP MX, one per 32 elements) or f8e4m3 \
             (NVFP4, one per 16 f4e2m1 elements), found {}",
            s.dtype
        ));
    };
    if s.dtype == DType::F8E4M3 && element != DType::F4E2M1 {
        return Err(format!(
            "f8e4m3 scales (NVFP4) scale f4e2m1 elements; {name} is {element}: give it f8e8m0 scales"
        ));
    }
    if !k.is_multiple_of(group) {
        return Err(format!(
            "{name}'s {} scales cover groups of {group} along K, which {k} is not a multiple of",
            s.dtype
        ));
    }
    if s.shape.dims() != [rows, k / group] {
        return Err(format!(
            "{name}'s scales must be [{rows}, {}] (one {} per {group} elements along K = {k}), found {}",
            k / group,
            s.dtype,
            s.shape
        ));
    }
    Ok(())
}

/// `(M, N)` for `op`'s `a: [M, K]`, `b: [K, N]` and `c: [M, N]`, or why the shapes
/// do not fit.
fn product_shape(op: &str, a: &TileType, b: &TileType, c: &TileType) -> RuleResult<(usize, usize)> {
    if a.shape.rank() != 2 || b.shape.rank() != 2 || c.shape.rank() != 2 {
        return Err(format!(
            "{op} needs rank-2 tiles, found {}, {} and {}",
            a.shape, b.shape, c.shape
        ));
    }
    let (m, k, k2, n) = (
        a.shape.dims()[0],
        a.shape.dims()[1],
        b.shape.dims()[0],
        b.shape.dims()[1],
    );
    if k != k2 || c.shape.dims() != [m, n] {
        return Err(format!(
            "{op} needs a: [M, K], b: [K, N], c: [M, N], found {}, {} and {}",
            a.shape, b.shape, c.shape
        ));
    }
    Ok((m, n))
}
