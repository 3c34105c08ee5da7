//! `gather(t, [i, j], mask, other)`: the elements of a tensor parameter at
//! index tiles (Triton's `tl.load(ptr + offsets, mask, other)`), for
//! stencils' shifted reads, lookups and any access that is not a whole
//! partition; `scatter(t, [i, j], value, mask)`, the writes to them
//! (`tl.store(ptr + offsets, value, mask)`).

use super::{Translator, Val};
use syn::{Expr, ExprCall};
use tile_ir::{Scalar, Shape, Type, Value};

impl Translator<'_> {
    /// `gather(tensor, [i, ..][, mask[, other]])`.
    pub(crate) fn gather_call(&mut self, c: &ExprCall, args: &[&Expr]) -> syn::Result<Val> {
        if !(2..=4).contains(&args.len()) {
            return Err(self.err(
                c,
                format!(
                    "`gather(tensor, [index, ..][, mask[, other]])` takes 2 to 4 arguments, found {}",
                    args.len()
                ),
            ));
        }
        let v = self.expr(args[0])?;
        let tensor = match v {
            Val::Ir(t) if matches!(self.ty(t), Type::Tensor(_)) => t,
            other => {
                let found = self.describe(&other);
                return Err(self.err(
                    args[0],
                    format!("`gather` reads a tensor parameter, found {found}"),
                ));
            }
        };
        let Type::Tensor(tt) = self.ty(tensor).clone() else {
            return Err(self.err(args[0], "expected a tensor"));
        };
        let indices = self.element_index(tt.rank, args[1])?;
        let mask = args.get(2).map(|e| self.mask_arg(e)).transpose()?;
        let other = match args.get(3) {
            Some(e) => {
                let v = self.expr(e)?;
                let x = self.data(&v, Some(tt.dtype), e)?;
                let d = self.ty(x).dtype();
                if d != tt.dtype {
                    return Err(self.err(
                        *e,
                        format!(
                            "the other value is {d} but the tensor holds {}: convert it with `.cast::<{}>()`",
                            tt.dtype, tt.dtype
                        ),
                    ));
                }
                Some((x, *e))
            }
            None => None,
        };
        let mut all: Vec<(Value, &Expr)> = indices.clone();
        all.extend(mask);
        all.extend(other);
        let Some(shape) = self.common_shape(&all, "gather")? else {
            // All scalars read one element, as a scalar.
            let indices: Vec<Value> = indices.iter().map(|&(x, _)| x).collect();
            let mask = match mask {
                Some((m, _)) => m,
                None => self.ir(c, |b| b.constant(Scalar::Bool(true)))?,
            };
            let other = match other {
                Some((o, _)) => o,
                None => self.ir(c, |b| b.constant(Scalar::zero(tt.dtype)))?,
            };
            return self
                .ir(c, |b| b.gather(tensor, &indices, mask, other))
                .map(Val::Ir);
        };
        let spread = |s: &mut Self, (x, e): (Value, &Expr)| s.broadcast_to_shape(x, &shape, e);
        let indices = indices
            .into_iter()
            .map(|i| spread(self, i))
            .collect::<syn::Result<Vec<_>>>()?;
        let mask = match mask {
            Some(m) => spread(self, m)?,
            None => self.ir(c, |b| b.full(Scalar::Bool(true), shape.dims()))?,
        };
        let other = match other {
            Some(o) => spread(self, o)?,
            None => self.ir(c, |b| b.full(Scalar::zero(tt.dtype), shape.dims()))?,
        };
        self.ir(c, |b| b.gather(tensor, &indices, mask, other))
            .map(Val::Ir)
    }

    /// `scatter(tensor, [i, ..], value[, mask])`: no value. All scalars
    /// write one element, as a one-element tile.
    pub(crate) fn scatter_call(&mut self, c: &ExprCall, args: &[&Expr]) -> syn::Result<Val> {
        if !(3..=4).contains(&args.len()) {
            return Err(self.err(
                c,
                format!(
                    "`scatter(tensor, [index, ..], value[, mask])` takes 3 or 4 arguments, found {}",
                    args.len()
                ),
            ));
        }
        let tensor = self.updated_tensor(args[0], "`scatter` writes")?;
        let Type::Tensor(tt) = self.ty(tensor).clone() else {
            return Err(self.err(args[0], "expected a tensor"));
        };
        let indices = self.element_index(tt.rank, args[1])?;
        let v = self.expr(args[2])?;
        let value = self.data(&v, Some(tt.dtype), args[2])?;
        let d = self.ty(value).dtype();
        if d != tt.dtype {
            return Err(self.err(
                args[2],
                format!(
                    "the value is {d} but the tensor holds {}: convert it with `.cast::<{}>()`",
                    tt.dtype, tt.dtype
                ),
            ));
        }
        let mask = args.get(3).map(|e| self.mask_arg(e)).transpose()?;
        let mut all: Vec<(Value, &Expr)> = indices.clone();
        all.push((value, args[2]));
        all.extend(mask);
        let shape = self
            .common_shape(&all, "scatter")?
            .unwrap_or_else(|| Shape::new([1]));
        let spread = |s: &mut Self, (x, e): (Value, &Expr)| s.broadcast_to_shape(x, &shape, e);
        let indices = indices
            .into_iter()
            .map(|i| spread(self, i))
            .collect::<syn::Result<Vec<_>>>()?;
        let value = spread(self, (value, args[2]))?;
        let mask = match mask {
            Some(m) => spread(self, m)?,
            None => self.ir(c, |b| b.full(Scalar::Bool(true), shape.dims()))?,
        };
        self.ir(c, |b| b.scatter(tensor, &indices, value, mask))?;
        Ok(Val::Unit)
    }
}
