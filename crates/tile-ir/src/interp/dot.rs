//! `dot`: `a[M, K] · b[K, N] + c[M, N]`.
//!
//! For float operands each element is accumulated over `k` ascending,
//! starting from `c[m, n]`, with one fused multiply-add per step in the
//! accumulator dtype: `acc = fma(a[m, k], b[k, n], acc)`, rounded once per
//! step. The operands are first widened to the accumulator dtype, exactly
//! (f16, bf16 and FP8 values are all `f32` values). For `i8` operands the
//! products and sums are exact `i32` arithmetic, wrapping on overflow.

use super::value::{RtValue, Tile};
use super::Fault;
use crate::dtype::DType;
use crate::eval;
use crate::ops::BinaryOp;
use crate::rules::dot_accumulator;

/// Runs a `dot`.
pub(super) fn dot(operands: &[RtValue]) -> Result<RtValue, Fault> {
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
    let widen = |t: &Tile| -> Vec<_> { t.data.iter().map(|&x| eval::cast(x, acc_dtype)).collect() };
    let (wa, wb) = (widen(a), widen(b));
    let mut data = c.data.clone();
    for row in 0..m {
        for col in 0..n {
            let mut acc = data[row * n + col];
            for kk in 0..k {
                let (x, y) = (wa[row * k + kk], wb[kk * n + col]);
                acc = if acc_dtype == DType::I32 {
                    eval::binary(BinaryOp::Add, acc, eval::binary(BinaryOp::Mul, x, y)?)?
                } else {
                    eval::fma(x, y, acc)?
                };
            }
            data[row * n + col] = acc;
        }
    }
    Ok(RtValue::Tile(Tile {
        shape: vec![m, n],
        dtype: acc_dtype,
        data,
    }))
}
