//! Reductions and scans with the kernel author's combine function (Triton's
//! `tl.reduce` and `tl.associative_scan`): `x.reduce(axis, |a, b| ..)`,
//! `x.reduce_keepdim(axis, f)`, `x.scan(axis, f)`, and for several tiles
//! folded together, `reduce((v, i), axis, |(a, ai), (b, bi)| ..)` (also
//! `reduce_keepdim` and `scan`).
//!
//! The combine function is a closure of two parameters (the accumulated
//! value and the next element; tuples for several tiles), which sees the
//! kernel's variables, or a `#[tile_fn]` helper of two parameters. It is
//! translated once into the op's region on scalars of the tiles' dtypes;
//! what it returns is converted to those dtypes (a literal takes its tile's
//! dtype). Lanes are folded left to right, so the function need not be
//! associative.

use super::{Translator, Val};
use crate::diag::abort;
use quote::ToTokens;
use syn::{Expr, Pat};
use tile_ir::builder::Builder;
use tile_ir::{Type, Value};

/// A combine function as written.
#[derive(Clone, Copy)]
enum CombineFn<'e, 'k> {
    /// `|a, b| body`: the two parameter patterns and the body.
    Closure(&'e Pat, &'e Pat, &'e Expr),
    /// A `#[tile_fn]` helper of two parameters.
    Helper(&'k syn::ItemFn),
}

/// Whether `name` is a reduction or scan with a combine function.
pub(super) fn is_combine(name: &str) -> bool {
    matches!(name, "reduce" | "reduce_keepdim" | "scan")
}

impl<'k> Translator<'k> {
    /// `x.reduce(axis, f)` and its forms on the tile `x`.
    pub(crate) fn combine_method(
        &mut self,
        x: Value,
        name: &str,
        args: &[&Expr],
        node: &dyn ToTokens,
    ) -> syn::Result<Val> {
        let usage = format!("{name}(axis, |a, b| ..)");
        let a = self.argn(args, 2, &usage, node)?;
        self.combine(vec![x], false, name, (a[0], a[1]), node)
    }

    /// `reduce(x, axis, f)` and `reduce((x, y, ..), axis, f)`, and the
    /// other forms.
    pub(crate) fn combine_call(
        &mut self,
        name: &str,
        args: &[&Expr],
        node: &dyn ToTokens,
    ) -> syn::Result<Val> {
        let usage = format!("{name}((x, y), axis, |(a0, a1), (b0, b1)| ..)");
        let a = self.argn(args, 3, &usage, node)?;
        let (xs, tuple) = match self.expr(a[0])? {
            Val::Tuple(items) => (items, true),
            one => (vec![one], false),
        };
        let mut tiles = Vec::with_capacity(xs.len());
        for v in &xs {
            let x = self.data(v, None, a[0])?;
            if self.ty(x).tile_shape().is_none() {
                return Err(self.err(a[0], format!("`{name}` folds tiles, found {}", self.ty(x))));
            }
            tiles.push(x);
        }
        if tiles.is_empty() {
            return Err(self.err(a[0], format!("`{name}` needs at least one tile")));
        }
        self.combine(tiles, tuple, name, (a[1], a[2]), node)
    }

    /// Builds the `reduce_with` or `scan_with` of `xs` along the axis
    /// `axis_e` folded by `f_e`; a tuple of results when `tuple`.
    fn combine(
        &mut self,
        xs: Vec<Value>,
        tuple: bool,
        name: &str,
        (axis_e, f_e): (&Expr, &Expr),
        node: &dyn ToTokens,
    ) -> syn::Result<Val> {
        let shape = self.ty(xs[0]).tile_shape().cloned();
        let Some(shape) = shape else {
            return Err(self.err(node, format!("`{name}` folds tiles")));
        };
        for &x in &xs[1..] {
            if self.ty(x).tile_shape() != Some(&shape) {
                return Err(self.err(
                    node,
                    format!(
                        "the tiles `{name}` folds together must have one shape, found {} and {}",
                        self.ty(xs[0]),
                        self.ty(x)
                    ),
                ));
            }
        }
        let of = format!("the tile {}", self.ty(xs[0]));
        let axis = self.axis_arg(axis_e, shape.rank(), &of)?;
        let f = self.combine_fn(f_e)?;
        let keepdim = match name {
            "scan" => None,
            "reduce_keepdim" => Some(true),
            _ => Some(false),
        };
        let types: Vec<Type> = xs
            .iter()
            .map(|&x| Type::Scalar(self.ty(x).dtype()))
            .collect();
        let mut b = std::mem::replace(&mut self.b, Builder::new(""));
        let outer = super::location::location(node).map(|loc| b.set_location(Some(loc)));
        let mut failure = None;
        let result = b.combine(&xs, axis, keepdim, |inner, acc, next| {
            self.nested(inner, &mut failure, |me| {
                me.combine_body(f, tuple, (acc, next), &types, f_e)
            })
            .ok_or_else(abort)
        });
        let results = self.restore_builder(b, outer, failure, (f_e, result))?;
        Ok(if tuple {
            Val::Tuple(results.into_iter().map(Val::Ir).collect())
        } else {
            Val::Ir(results[0])
        })
    }

    /// The combine function `f` of a combine call.
    fn combine_fn<'e>(&self, f: &'e Expr) -> syn::Result<CombineFn<'e, 'k>> {
        let param = |p: &'e Pat| match p {
            Pat::Type(t) => &*t.pat,
            other => other,
        };
        match f {
            Expr::Closure(c) if c.inputs.len() == 2 => Ok(CombineFn::Closure(
                param(&c.inputs[0]),
                param(&c.inputs[1]),
                &c.body,
            )),
            Expr::Closure(c) => Err(self.err(
                &c.inputs,
                format!(
                    "a combine function takes two parameters, the accumulated value and the next element, found {}",
                    c.inputs.len()
                ),
            )),
            Expr::Path(p) => {
                let helper = p
                    .path
                    .get_ident()
                    .and_then(|id| self.helpers.get(&id.to_string()).copied());
                match helper {
                    Some(h) if h.sig.inputs.len() == 2 => Ok(CombineFn::Helper(h)),
                    Some(h) => Err(self.err(
                        f,
                        format!(
                            "the combine function `{}` takes {} parameter(s); it needs two, the accumulated value and the next element",
                            h.sig.ident,
                            h.sig.inputs.len()
                        ),
                    )),
                    None => Err(self.err(
                        f,
                        "the combine function is a closure `|a, b| ..` or a `#[tile_fn]` helper of two parameters",
                    )),
                }
            }
            _ => Err(self.err(
                f,
                "the combine function is a closure `|a, b| ..` or a `#[tile_fn]` helper of two parameters",
            )),
        }
    }

    /// The combine function's body on the region's scalars: its values,
    /// one per tile, converted to the tiles' dtypes `types`.
    fn combine_body(
        &mut self,
        f: CombineFn<'_, 'k>,
        tuple: bool,
        (acc, next): (&[Value], &[Value]),
        types: &[Type],
        node: &Expr,
    ) -> syn::Result<Vec<Value>> {
        let pack = |values: &[Value]| {
            if tuple {
                Val::Tuple(values.iter().map(|&v| Val::Ir(v)).collect())
            } else {
                Val::Ir(values[0])
            }
        };
        let out = match f {
            CombineFn::Closure(a, b, body) => {
                self.scopes.push();
                let out = self
                    .bind(a, pack(acc), a)
                    .and_then(|()| self.bind(b, pack(next), b))
                    .and_then(|()| self.expr(body));
                self.scopes.pop();
                out?
            }
            CombineFn::Helper(h) => {
                self.scopes.push_frame();
                let out = self.helper_body(h, vec![pack(acc), pack(next)]);
                self.scopes.pop_frame();
                out?
            }
        };
        let at: &dyn ToTokens = match f {
            CombineFn::Closure(_, _, body) => body,
            CombineFn::Helper(_) => node,
        };
        let values = match (tuple, out) {
            (true, Val::Tuple(items)) if items.len() == types.len() => items,
            (false, Val::Tuple(_)) | (true, _) => {
                let want = if tuple {
                    format!("a tuple of {} values, one per tile", types.len())
                } else {
                    "one value".to_string()
                };
                return Err(self.err(at, format!("the combine function must return {want}")));
            }
            (false, one) => vec![one],
        };
        values
            .iter()
            .zip(types)
            .map(|(v, ty)| self.coerce(v, ty, at, "the combine function returns values of type"))
            .collect()
    }
}
