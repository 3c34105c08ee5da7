//! `dot`: `a[M, K] · b[K, N] + c[M, N]`.
//!
//! For float operands each element is accumulated over `k` ascending,
//! starting from `c[m, n]`, with one fused multiply-add per step in the
//! accumulator dtype: `acc = fma(a[m, k], b[k, n], acc)`, rounded once per
//! step. The operands are first widened to the accumulator dtype, exactly
//! (f16, bf16 and FP8 values are all `f32` values), and for precision
//! `tf32` rounded to TF32. For `i8` operands the
//! products and sums are exact `i32` arithmetic, wrapping on overflow.

use super::value::{RtValue, Tile};
use super::Fault;
use crate::dtype::DType;
use crate::eval;
use crate::ops::{BinaryOp, DotPrecision, UnaryOp};
use crate::rules::dot_accumulator;
use crate::scalar::Scalar;
use crate::scaled::{compute_dtype, scale_group, ScaledOperands};

/// Runs a `dot` of `precision`: `tf32` rounds the operands to TF32 first;
/// every precision then takes the in-order chain (which `tensor` allows).
pub(super) fn dot(precision: DotPrecision, operands: &[RtValue]) -> Result<RtValue, Fault> {
    let [a, b, c] = operands else {
        return Err(Fault::Type(format!(
            "`dot` takes three operands, found {}",
            operands.len()
        )));
    };
    let (a, b, c) = (a.tile("a")?, b.tile("b")?, c.tile("c")?);
    let (m, k, n) = match (a.shape.as_slice(), b.shape.as_slice(), c.shape.as_slice()) {
        (&[m, k], &[k2, n], &[m2, n2]) if k == k2 && m == m2 && n == n2 => (m, k, n),
        _ => {
            return Err(Fault::Type(format!(
                "dot needs a: [M, K], b: [K, N], c: [M, N], found {:?}, {:?} and {:?}",
                a.shape, b.shape, c.shape
            )))
        }
    };
    let acc_dtype = dot_accumulator(a.dtype, b.dtype).map_err(Fault::Type)?;
    if c.dtype != acc_dtype {
        return Err(Fault::Type(format!(
            "dot of {} and {} accumulates in {acc_dtype}, but c is {}",
            a.dtype, b.dtype, c.dtype
        )));
    }
    let widen = |t: &Tile| -> Vec<Scalar> {
        let wide = t.data.iter().map(|&x| eval::cast(x, acc_dtype));
        match precision {
            DotPrecision::Tf32 => wide
                .map(|x| eval::unary(UnaryOp::RoundTf32, x).unwrap_or(x))
                .collect(),
            DotPrecision::Ieee | DotPrecision::Tensor => wide.collect(),
        }
    };
    let (wa, wb) = (widen(a), widen(b));
    let data = match acc_dtype {
        // Native loops with exactly the semantics of `eval::fma` (a single
        // rounding per step) and of wrapping `i32` arithmetic; a NaN result
        // is canonicalized once at the end, as `eval` would at every step.
        DType::F32 => accumulate(
            &wa,
            &wb,
            &c.data,
            (m, k, n),
            |s| match s {
                Scalar::F32(v) => Some(v),
                _ => None,
            },
            |x, y, acc: f32| x.mul_add(y, acc),
            |v| canonical(Scalar::F32(v)),
        )?,
        DType::F64 => accumulate(
            &wa,
            &wb,
            &c.data,
            (m, k, n),
            |s| match s {
                Scalar::F64(v) => Some(v),
                _ => None,
            },
            |x, y, acc: f64| x.mul_add(y, acc),
            |v| canonical(Scalar::F64(v)),
        )?,
        DType::I32 => accumulate(
            &wa,
            &wb,
            &c.data,
            (m, k, n),
            |s| match s {
                Scalar::I32(v) => Some(v),
                _ => None,
            },
            |x, y, acc: i32| acc.wrapping_add(x.wrapping_mul(y)),
            Scalar::I32,
        )?,
        other => return Err(Fault::Type(format!("no dot accumulates in {other}"))),
    };
    Ok(RtValue::Tile(Tile {
        shape: vec![m, n],
        dtype: acc_dtype,
        data,
    }))
}

/// Runs a `dot_scaled` ([`crate::scaled`]): each operand's elements times
/// their scales, rounded once to the compute dtype, then a `tensor` dot.
pub(super) fn dot_scaled(operands: &[RtValue]) -> Result<RtValue, Fault> {
    let tiles = operands
        .iter()
        .map(|v| v.tile("a dot_scaled operand"))
        .collect::<Result<Vec<_>, _>>()?;
    let dtypes: Vec<DType> = tiles.iter().map(|t| t.dtype).collect();
    let at = ScaledOperands::locate(&dtypes).map_err(Fault::Type)?;
    let compute = compute_dtype(dtypes[at.a], dtypes[at.b]);
    let a = scaled(tiles[at.a], at.a_scale.map(|i| tiles[i]), false, compute)?;
    let b = scaled(tiles[at.b], at.b_scale.map(|i| tiles[i]), true, compute)?;
    let c = tiles[at.c].clone();
    dot(
        DotPrecision::Tensor,
        &[RtValue::Tile(a), RtValue::Tile(b), RtValue::Tile(c)],
    )
}

/// `x` in the compute dtype: element `[r, k]` of `a` times scale `[r, k /
/// G]`, or (`transposed`, for `b`) element `[k, n]` times scale `[n, k /
/// G]`, the product taken in `f32` (where it is exact) and rounded once.
fn scaled(
    x: &Tile,
    scales: Option<&Tile>,
    transposed: bool,
    compute: DType,
) -> Result<Tile, Fault> {
    let cols = match x.shape.as_slice() {
        &[_, cols] => cols,
        other => {
            return Err(Fault::Type(format!(
                "a dot_scaled operand must be rank 2, found {other:?}"
            )))
        }
    };
    let data = match scales {
        None => x.data.iter().map(|&v| eval::cast(v, compute)).collect(),
        Some(s) => {
            let group = scale_group(s.dtype)
                .ok_or_else(|| Fault::Type(format!("dot_scaled scales of {}", s.dtype)))?;
            let per_row = s.shape.get(1).copied().unwrap_or(0);
            let mut data = Vec::with_capacity(x.data.len());
            for (i, &v) in x.data.iter().enumerate() {
                let (r, c) = (i / cols, i % cols);
                let (row, k) = if transposed { (c, r) } else { (r, c) };
                let scale = s
                    .data
                    .get(row * per_row + k / group)
                    .copied()
                    .ok_or_else(|| {
                        Fault::Type(format!("dot_scaled scales {:?} for {:?}", s.shape, x.shape))
                    })?;
                let product = eval::binary(
                    BinaryOp::Mul,
                    eval::cast(v, DType::F32),
                    eval::cast(scale, DType::F32),
                )
                .map_err(|e| Fault::Type(e.to_string()))?;
                data.push(eval::cast(product, compute));
            }
            data
        }
    };
    Ok(Tile {
        shape: x.shape.clone(),
        dtype: compute,
        data,
    })
}

/// `c + a · b` with `step(a, b, acc)` per product, `k` ascending, on the
/// native values that `unwrap` extracts; `wrap` turns a result back into a
/// scalar.
fn accumulate<T: Copy>(
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
    (m, k, n): (usize, usize, usize),
    unwrap: impl Fn(Scalar) -> Option<T>,
    step: impl Fn(T, T, T) -> T,
    wrap: impl Fn(T) -> Scalar,
) -> Result<Vec<Scalar>, Fault> {
    let native = |v: &[Scalar]| -> Result<Vec<T>, Fault> {
        v.iter()
            .map(|&s| {
                unwrap(s).ok_or_else(|| Fault::Type(format!("a dot operand of {}", s.dtype())))
            })
            .collect()
    };
    let (a, b, c) = (native(a)?, native(b)?, native(c)?);
    let mut out = Vec::with_capacity(m * n);
    for row in 0..m {
        for col in 0..n {
            let mut acc = c[row * n + col];
            for kk in 0..k {
                acc = step(a[row * k + kk], b[kk * n + col], acc);
            }
            out.push(wrap(acc));
        }
    }
    Ok(out)
}

/// The value, with a NaN replaced by its dtype's canonical NaN.
fn canonical(v: Scalar) -> Scalar {
    match eval::canonical_nan(v.dtype()) {
        Some(nan) if v.is_nan() => nan,
        _ => v,
    }
}
