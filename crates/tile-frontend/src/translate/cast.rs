//! `x.bitcast::<u32>()`: the bits of each element read as a dtype of the
//! same width.
//!
//! `x.cast_nonsaturating::<f8e4m3>()` / `::<f8e5m2>()`: the OCP FP8
//! conversion without saturation (PyTorch's `to(torch.float8_e4m3fn)`),
//! beside `cast`'s saturating one (PTX's `cvt.rn.satfinite`, Triton's).
//!
//! A value that rounds (to nearest, ties to even) beyond the largest finite
//! FP8 value, and an infinity, becomes an infinity of its sign in E5M2 and
//! the NaN in E4M3, which has no infinities; everything else converts as
//! `cast` does. Built from `cast`, `abs`, `cmp` and `select`: the rounded
//! magnitude exceeds the largest finite value exactly when the magnitude
//! passes the rounding midpoint above it (`464` for E4M3, whose largest
//! value `448` has an even significand so the tie stays; from `61440` on for
//! E5M2, whose tie goes up to `2¹⁶`), a comparison that is exact in every
//! source dtype.

use super::{Translator, Val};
use syn::ExprMethodCall;
use tile_ir::eval::canonical_nan;
use tile_ir::{CmpPred, DType, Scalar, UnaryOp, Value};

impl Translator<'_> {
    /// `x`'s bits as `to`, which must have `x`'s width.
    pub(crate) fn bitcast(&mut self, x: Value, to: DType, m: &ExprMethodCall) -> syn::Result<Val> {
        let from = self.ty(x).dtype();
        if from == to {
            return Ok(Val::Ir(x));
        }
        // Errors point at the target dtype.
        let at: &dyn quote::ToTokens = match &m.turbofish {
            Some(t) => t,
            None => m,
        };
        if from.is_bool() || to.is_bool() {
            return Err(self.err(
                at,
                format!("`bitcast` reinterprets bits, which `bool` does not have: {from} to {to}; use `cast::<{to}>()`"),
            ));
        }
        if from.bits() != to.bits() {
            let same: Vec<String> = DType::ALL
                .iter()
                .filter(|d| d.bits() == from.bits() && !d.is_bool() && **d != from)
                .map(|d| d.to_string())
                .collect();
            return Err(self.err(
                at,
                format!(
                    "`bitcast` keeps the width: {from} has {} bits and {to} {}; the dtypes of {from}'s width are {}",
                    from.bits(),
                    to.bits(),
                    same.join(", ")
                ),
            ));
        }
        self.ir(m, |b| b.bitcast(x, to)).map(Val::Ir)
    }

    /// `x` converted to the FP8 dtype `to` without saturation.
    pub(crate) fn cast_nonsaturating(
        &mut self,
        x: Value,
        to: DType,
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let from = self.ty(x).dtype();
        let (midpoint, overflow_at_tie) = match to {
            DType::F8E4M3 => (464.0, false),
            DType::F8E5M2 => (61440.0, true),
            other => {
                return Err(self.err(m, format!("`cast_nonsaturating` converts to f8e4m3 or f8e5m2, where saturation matters; to {other}, use `.cast::<{other}>()`")))
            }
        };
        // A bool, and every E4M3 value, lies within both formats' range;
        // only E5M2 into E4M3 can overflow among the FP8 sources.
        let fits = from.is_bool() || (from.is_f8() && (from, to) != (DType::F8E5M2, DType::F8E4M3));
        if fits {
            return self.ir(m, |b| b.cast(x, to)).map(Val::Ir);
        }
        let nan = canonical_nan(to).ok_or_else(|| self.err(m, "an FP8 dtype without a NaN"))?;
        let infinity =
            |negative: bool| Scalar::from_bits(DType::F8E5M2, if negative { 0xfc } else { 0x7c });
        let shape = self.ty(x).tile_shape().cloned();
        let out = self.ir(m, |b| {
            let splat = |b: &mut tile_ir::builder::Builder,
                         v: Scalar|
             -> Result<Value, tile_ir::builder::BuildError> {
                let c = b.constant(v)?;
                match &shape {
                    Some(s) => b.broadcast(c, s.dims()),
                    None => Ok(c),
                }
            };
            let saturated = b.cast(x, to)?;
            // The comparison in a dtype that holds the source exactly and
            // the midpoint: the source's own for floats, f64 for integers
            // (whose magnitudes beyond 2⁵³ are far past the midpoint anyway).
            let wide = if from.is_float() && !from.is_f8() {
                from
            } else {
                DType::F64
            };
            let v = if wide == from { x } else { b.cast(x, wide)? };
            let magnitude = b.unary(UnaryOp::Abs, v)?;
            let limit = splat(b, tile_ir::eval::cast(Scalar::F64(midpoint), wide))?;
            let pred = if overflow_at_tie {
                CmpPred::Ge
            } else {
                CmpPred::Gt
            };
            let overflows = b.cmp(pred, magnitude, limit)?;
            let replacement = if to == DType::F8E4M3 {
                splat(b, nan)?
            } else {
                let zero = splat(b, tile_ir::eval::cast(Scalar::F64(0.0), wide))?;
                let negative = b.cmp(CmpPred::Lt, v, zero)?;
                let (low, high) = (splat(b, infinity(true))?, splat(b, infinity(false))?);
                b.select(negative, low, high)?
            };
            b.select(overflows, replacement, saturated)
        })?;
        Ok(Val::Ir(out))
    }
}
