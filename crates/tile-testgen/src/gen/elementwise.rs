//! Elementwise families: unary and binary ops, `cmp`, `select`, `fma`,
//! `cast` and `bitcast`, on scalars and tiles alike, each op chosen among those its typing
//! rule allows on the requested dtype.

use super::{Built, Gen};
use tile_ir::builder::Builder;
use tile_ir::{BinaryOp, CmpPred, DType, Type, UnaryOp, Value};

/// The unary ops defined on `dtype` (none on the scale `f8e8m0`).
fn unary_ops(dtype: DType) -> Vec<UnaryOp> {
    use UnaryOp::*;
    if dtype == DType::F8E8M0 {
        return Vec::new();
    }
    UnaryOp::ALL
        .iter()
        .copied()
        .filter(|op| match op {
            Neg => !dtype.is_bool(),
            Not => !dtype.is_float(),
            Abs => dtype.is_signed_int() || dtype.is_float(),
            RoundTf32 => dtype == DType::F32,
            _ => dtype.is_float(),
        })
        .collect()
}

/// The binary ops defined on `dtype` (none on the scale `f8e8m0`).
fn binary_ops(dtype: DType) -> Vec<BinaryOp> {
    use BinaryOp::*;
    if dtype == DType::F8E8M0 {
        return Vec::new();
    }
    BinaryOp::ALL
        .iter()
        .copied()
        .filter(|op| match op {
            And | Or | Xor => !dtype.is_float(),
            Shl | Shr => dtype.is_int(),
            Pow | Atan2 | Hypot => dtype.is_float(),
            _ => !dtype.is_bool(),
        })
        .collect()
}

impl Gen<'_> {
    pub(super) fn unary(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        let mut ops = unary_ops(ty.dtype());
        if self.exact_f64 && ty.dtype() == DType::F64 {
            ops.retain(|op| !op.is_math());
        }
        if ops.is_empty() {
            return Ok(None);
        }
        let op = self.rng.pick(&ops);
        let mut x = self.value(b, ty, depth)?;
        // Keep values tame most of the time: exponentials of bounded values,
        // logarithms and roots of magnitudes. Functions that amplify their
        // operand's error near the edges of their domain (tan near its
        // poles, asin, acos and atanh near ±1, acosh near 1) always get an
        // operand well inside it, so that the few f64 ulps by which a GPU
        // path's earlier result may differ stay a few ulps.
        match op {
            UnaryOp::Exp
            | UnaryOp::Exp2
            | UnaryOp::Expm1
            | UnaryOp::Sinh
            | UnaryOp::Cosh
            | UnaryOp::Sigmoid
            | UnaryOp::Erfc
                if self.rng.chance(0.7) =>
            {
                let squash = self.rng.pick(&[UnaryOp::Tanh, UnaryOp::Sin, UnaryOp::Cos]);
                x = b.unary(squash, x)?;
            }
            UnaryOp::Log | UnaryOp::Log2 | UnaryOp::Log1p | UnaryOp::Sqrt | UnaryOp::Rsqrt
                if self.rng.chance(0.7) =>
            {
                x = b.unary(UnaryOp::Abs, x)?;
            }
            // |sin x| ≤ 1 < π/2.
            UnaryOp::Tan => x = b.unary(UnaryOp::Sin, x)?,
            // |sin(tanh x)| < 0.85.
            UnaryOp::Asin | UnaryOp::Acos | UnaryOp::Atanh => {
                x = b.unary(UnaryOp::Tanh, x)?;
                x = b.unary(UnaryOp::Sin, x)?;
            }
            // e^cosh(tanh x) lies in [e, 4.7].
            UnaryOp::Acosh => {
                for tame in [UnaryOp::Tanh, UnaryOp::Cosh, UnaryOp::Exp] {
                    x = b.unary(tame, x)?;
                }
            }
            _ => {}
        }
        b.unary(op, x).map(Some)
    }

    pub(super) fn binary(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        let mut ops = binary_ops(ty.dtype());
        if self.exact_f64 && ty.dtype() == DType::F64 {
            ops.retain(|op| !op.is_math());
        }
        if ops.is_empty() {
            return Ok(None);
        }
        let op = self.rng.pick(&ops);
        let x = self.value(b, ty, depth)?;
        let y = if self.rng.chance(0.1) {
            x
        } else {
            self.value(b, ty, depth)?
        };
        b.binary(op, x, y).map(Some)
    }

    pub(super) fn cmp(&mut self, b: &mut Builder, ty: &Type, depth: usize) -> Built<Option<Value>> {
        if ty.dtype() != DType::Bool {
            return Ok(None);
        }
        let dtype = self.dtype();
        let preds: &[CmpPred] = if dtype.is_bool() {
            &[CmpPred::Eq, CmpPred::Ne]
        } else {
            CmpPred::ALL
        };
        let pred = self.rng.pick(preds);
        let operand = ty.with_dtype(dtype);
        let x = self.value(b, &operand, depth)?;
        let y = self.value(b, &operand, depth)?;
        b.cmp(pred, x, y).map(Some)
    }

    pub(super) fn select(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        let cond = self.value(b, &ty.with_dtype(DType::Bool), depth)?;
        let x = self.value(b, ty, depth)?;
        let y = self.value(b, ty, depth)?;
        b.select(cond, x, y).map(Some)
    }

    pub(super) fn fma(&mut self, b: &mut Builder, ty: &Type, depth: usize) -> Built<Option<Value>> {
        if !ty.dtype().is_float() || ty.dtype() == DType::F8E8M0 {
            return Ok(None);
        }
        let x = self.value(b, ty, depth)?;
        let y = self.value(b, ty, depth)?;
        let z = self.value(b, ty, depth)?;
        b.fma(x, y, z).map(Some)
    }

    pub(super) fn cast(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        // A quarter of the casts into a dtype that shares its width with
        // others reinterpret the bits of one of those instead.
        let to = ty.dtype();
        let same_width: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|d| d.bits() == to.bits() && *d != to && !d.is_bool() && !to.is_bool())
            .collect();
        if !same_width.is_empty() && self.rng.chance(0.25) {
            let from = self.rng.pick(&same_width);
            let x = self.value(b, &ty.with_dtype(from), depth)?;
            return b.bitcast(x, to).map(Some);
        }
        let from = self.dtype();
        let x = self.value(b, &ty.with_dtype(from), depth)?;
        b.cast(x, to).map(Some)
    }

    /// `a` and `b` (of one type) combined by a binary op defined on their
    /// dtype (on `f8e8m0`, which has none, the lesser by `cmp` and
    /// `select`), so that both stay observable.
    pub(super) fn combine(&mut self, b: &mut Builder, x: Value, y: Value) -> Built<Value> {
        let dtype = b.ty(x).dtype();
        if dtype == DType::F8E8M0 {
            let less = b.cmp(CmpPred::Lt, x, y)?;
            return b.select(less, x, y);
        }
        let op = if dtype.is_float() {
            self.rng
                .pick(&[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Max, BinaryOp::Min])
        } else if dtype.is_bool() {
            self.rng.pick(&[BinaryOp::Xor, BinaryOp::Or, BinaryOp::And])
        } else {
            self.rng
                .pick(&[BinaryOp::Add, BinaryOp::Xor, BinaryOp::Max])
        };
        b.binary(op, x, y)
    }
}
