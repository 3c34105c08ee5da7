//! `dot_scaled(a, a_scale, b, b_scale, acc)`: the product of block-scaled
//! operands (OCP MX, NVFP4), Triton's `tl.dot_scaled` with the formats
//! read from the operands' dtypes. An operand of an element format
//! (`f4e2m1`, `f6e2m3`, `f6e3m2`, `f8e4m3`, `f8e5m2`) has its scales; one
//! of `bf16` or `f16` has `None`. The shapes and the scales' dtypes are
//! checked by the IR's rule (`tile_ir::scaled`), reported at the call.

use super::{Translator, Val};
use syn::{Expr, ExprCall};
use tile_ir::scaled::takes_scale;
use tile_ir::{Type, Value};

impl Translator<'_> {
    /// `dot_scaled(a, a_scale, b, b_scale, acc)`.
    pub(crate) fn dot_scaled_call(&mut self, c: &ExprCall, args: &[&Expr]) -> syn::Result<Val> {
        let a = self.argn(args, 5, "dot_scaled(a, a_scale, b, b_scale, acc)", c)?;
        let lhs = self.scaled_operand("a", a[0], a[1])?;
        let rhs = self.scaled_operand("b", a[2], a[3])?;
        let acc = self.expr(a[4])?;
        let acc = self.data(&acc, None, a[4])?;
        self.ir(c, |b| b.dot_scaled(lhs, rhs, acc)).map(Val::Ir)
    }

    /// An operand and its scales (`None` where the call passes `None`),
    /// checked to agree: an element format needs scales, `bf16` and `f16`
    /// take none.
    fn scaled_operand(
        &mut self,
        name: &str,
        operand: &Expr,
        scale_arg: &Expr,
    ) -> syn::Result<(Value, Option<Value>)> {
        let v = self.expr(operand)?;
        let x = self.data(&v, None, operand)?;
        let dtype = match self.ty(x) {
            Type::Tile(t) => t.dtype,
            other => {
                return Err(self.err(
                    operand,
                    format!("`dot_scaled`'s `{name}` must be a tile, found {other}"),
                ))
            }
        };
        let scale = if is_none(scale_arg) {
            None
        } else {
            let s = self.expr(scale_arg)?;
            Some(self.data(&s, None, scale_arg)?)
        };
        match (takes_scale(dtype), scale) {
            (true, None) => Err(self.err(
                scale_arg,
                format!(
                    "`{name}` is {dtype}, an element format: give its scales (f8e8m0, one per 32 \
                     elements along K, or f8e4m3, one per 16 f4e2m1 elements for NVFP4), not `None`"
                ),
            )),
            (false, Some(_)) => Err(self.err(
                scale_arg,
                format!("`{name}` is {dtype}, which takes no scales: pass `None`"),
            )),
            (_, scale) => Ok((x, scale)),
        }
    }
}

/// Whether `e` is the path `None`.
fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident("None"))
}
