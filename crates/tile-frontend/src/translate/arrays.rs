//! Tensor arrays in a kernel's body: `xs[g]`, the tensor `g` of the array
//! (`get_tensor`), and `xs.len()`, the number of tensors (`num_tensors`,
//! an `i32`).

use super::value::Val;
use super::Translator;
use syn::{Expr, ExprIndex, ExprMethodCall};
use tile_ir::{Type, Value};

impl Translator<'_> {
    /// `base[index]`: a tensor of a tensor array; any other base is an
    /// error, as tiles are not indexed.
    pub(crate) fn index(&mut self, i: &ExprIndex) -> syn::Result<Val> {
        let base = self.expr(&i.expr)?;
        let array = match base {
            Val::Ir(v) if matches!(self.ty(v), Type::Tensors(_)) => v,
            _ => return Err(self.err(i, "indexing is not supported: tiles are whole values; use `.slice(..)`, a partition view's `.load(..)`, or a tuple field `.0` (only a tensor array `&[Tensor<T>]` is indexed, by an integer scalar)")),
        };
        let index = self.indices(&[&*i.index], "a tensor index")?[0];
        let tensor = self.ir(i, |b| b.get_tensor(array, index))?;
        if let Some((name, mutable)) = self.tensors.get(&array).cloned() {
            self.tensors
                .insert(tensor, (format!("{name}[..]"), mutable));
        }
        Ok(Val::Ir(tensor))
    }

    /// A method of a tensor array: `len()`.
    pub(crate) fn tensors_method(
        &mut self,
        array: Value,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        match name {
            "len" => {
                self.argn(args, 0, "len()", m)?;
                self.ir(m, |b| b.num_tensors(array)).map(Val::Ir)
            }
            _ => Err(self.err(
                &m.method,
                format!("no method `{name}` on a tensor array; arrays have `len()`, and `xs[g]` is their tensor `g`"),
            )),
        }
    }
}

/// Why a tensor that `name` names cannot be written, and the fix: a
/// read-only tensor parameter, or a tensor of a read-only array (`xs[..]`).
pub(crate) fn read_only(name: &str) -> String {
    match name.strip_suffix("[..]") {
        Some(array) => format!("a tensor of `{array}`, a read-only `&[Tensor]`: declare the parameter `&mut [Tensor<..>]`"),
        None => format!("`{name}`, a read-only `&Tensor`: declare the parameter `&mut Tensor<..>`"),
    }
}
