//! `dot_scaled`: the matrix product of block-scaled operands (OCP MX's
//! MXFP8, MXFP6 and MXFP4, NVIDIA's NVFP4), as Triton's `tl.dot_scaled`.
//!
//! `dot_scaled %a, [%a_scale,] %b, [%b_scale,] %c` computes `a' · b' + c`
//! for `a: [M, K]`, `b: [K, N]` and `c: [M, N]` of `f32`, where each element
//! of `a'` is `a[m, k] × a_scale[m, k / G]` and each of `b'` is
//! `b[k, n] × b_scale[n, k / G]`, rounded once (to nearest even) to the
//! product's *compute dtype*; the products of `a'` and `b'` then accumulate
//! as a `dot` of precision `tensor`. An operand of an element format
//! (`f4e2m1`, `f6e2m3`, `f6e3m2`, `f8e4m3`, `f8e5m2`) has a scale; one of
//! `bf16` or `f16` has none (its operand is absent from the list). The
//! scale's dtype fixes its group `G`: `f8e8m0` scales groups of 32 (OCP
//! MX), `f8e4m3` groups of 16 of `f4e2m1` elements (NVFP4). The compute
//! dtype is `f16` when either operand is `f16`, `bf16` otherwise: every
//! element format times a power of two (an `f8e8m0` scale) or an `f8e4m3`
//! scale fits `bf16`'s 8 significant bits, so the rounding changes only
//! values beyond its range (to infinity) or below its subnormals.

use crate::dtype::DType;

/// The group of elements one scale of `dtype` covers, or `None` when
/// `dtype` is not a scale's.
pub fn scale_group(dtype: DType) -> Option<usize> {
    match dtype {
        DType::F8E8M0 => Some(32),
        DType::F8E4M3 => Some(16),
        _ => None,
    }
}

/// Whether operands of `dtype` carry a scale (the element formats).
pub fn takes_scale(dtype: DType) -> bool {
    dtype.is_f8() || matches!(dtype, DType::F4E2M1 | DType::F6E2M3 | DType::F6E3M2)
}

/// The dtype the scaled operands are rounded to and multiplied in.
pub fn compute_dtype(a: DType, b: DType) -> DType {
    if a == DType::F16 || b == DType::F16 {
        DType::F16
    } else {
        DType::BF16
    }
}

/// The positions of a `dot_scaled`'s operands in its operand list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaledOperands {
    /// `a`'s position (always 0).
    pub a: usize,
    /// `a`'s scale's, when `a` has one.
    pub a_scale: Option<usize>,
    /// `b`'s.
    pub b: usize,
    /// `b`'s scale's, when `b` has one.
    pub b_scale: Option<usize>,
    /// The accumulator's (the last).
    pub c: usize,
}

impl ScaledOperands {
    /// The positions for operands whose dtypes are `dtypes` in order: `a`
    /// first, its scale next when its dtype takes one, then `b`, `b`'s
    /// scale likewise, then `c`. An error when the count does not fit.
    pub fn locate(dtypes: &[DType]) -> Result<ScaledOperands, String> {
        let misfit = || {
            let list: Vec<String> = dtypes.iter().map(|d| d.to_string()).collect();
            format!(
                "dot_scaled takes `a, [a_scale,] b, [b_scale,] c`, a scale after each operand of \
                 an element format (f4e2m1, f6e2m3, f6e3m2, f8e4m3, f8e5m2); operands of dtypes \
                 ({}) do not fit",
                list.join(", ")
            )
        };
        let a = *dtypes.first().ok_or_else(misfit)?;
        let a_scale = takes_scale(a).then_some(1);
        let b = 1 + usize::from(a_scale.is_some());
        let b_dtype = *dtypes.get(b).ok_or_else(misfit)?;
        let b_scale = takes_scale(b_dtype).then_some(b + 1);
        let c = b + 1 + usize::from(b_scale.is_some());
        if dtypes.len() != c + 1 {
            return Err(misfit());
        }
        Ok(ScaledOperands {
            a: 0,
            a_scale,
            b,
            b_scale,
            c,
        })
    }
}
