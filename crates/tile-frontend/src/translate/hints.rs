//! `multiple_of(x, n)`: Triton's divisibility hint, checked. The result is
//! `x`, which the compiler may take to be a multiple of `n` (a window that
//! starts there along rows is read and written in whole vectors); a program
//! where it is not fails as an assertion would, naming the value.

use super::{Translator, Val};
use syn::Expr;
use tile_ir::Type;

impl Translator<'_> {
    /// `multiple_of(x, n)` with `x` an integer scalar and `n` a positive
    /// compile-time integer.
    pub(crate) fn multiple_of_call(
        &mut self,
        node: &syn::ExprCall,
        args: &[&Expr],
    ) -> syn::Result<Val> {
        let a = self.argn(args, 2, "multiple_of(x, n)", node)?;
        let divisor = self.const_int(a[1], "the divisor of `multiple_of`")?;
        let Ok(divisor @ 1..) = u32::try_from(divisor) else {
            return Err(self.err(
                a[1],
                format!(
                    "the divisor of `multiple_of` must be between 1 and {}, found {divisor}",
                    u32::MAX
                ),
            ));
        };
        let x = self.expr(a[0])?;
        let value = match x {
            Val::Int(i) if i % i128::from(divisor) == 0 => return Ok(Val::Int(i)),
            Val::Int(i) => {
                return Err(self.err(
                    a[0],
                    format!("`multiple_of`: {i} is not a multiple of {divisor}"),
                ))
            }
            Val::Ir(v) if matches!(self.ty(v), Type::Scalar(d) if d.is_int()) => v,
            other => {
                return Err(self.err(
                    a[0],
                    format!(
                        "`multiple_of` takes an integer scalar, found {}",
                        self.describe(&other)
                    ),
                ))
            }
        };
        let id = self.assertions;
        self.assertions += 1;
        self.ir(node, |b| b.multiple_of(id, divisor, value))
            .map(Val::Ir)
    }
}
