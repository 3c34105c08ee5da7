//! Structured loops: `for` over integer ranges with scalar (block-uniform)
//! bounds; shared machinery for [`super::branch`].
//!
//! Variables declared before a `for` and assigned in its body become the
//! loop's carried values.

use super::{Lowerer, Val};
use crate::diag::abort;
use proc_macro2::TokenStream;
use quote::ToTokens;
use std::collections::BTreeMap;
use syn::visit::Visit;
use syn::{Expr, ExprForLoop, RangeLimits};
use tile_ir::builder::Builder;
use tile_ir::{DType, Type, Value};

/// The names assigned (`x = ..`, `x += ..`) anywhere in a piece of syntax,
/// each with its last assignment (where a type change is reported).
#[derive(Default)]
pub(crate) struct Assigned(pub(crate) BTreeMap<String, TokenStream>);

impl Assigned {
    fn place(&mut self, e: &Expr, whole: &dyn ToTokens) {
        match e {
            Expr::Path(p) => {
                if let Some(id) = p.path.get_ident() {
                    self.0.insert(id.to_string(), whole.to_token_stream());
                }
            }
            Expr::Tuple(t) => t.elems.iter().for_each(|x| self.place(x, whole)),
            Expr::Paren(p) => self.place(&p.expr, whole),
            _ => {}
        }
    }
}

impl<'ast> Visit<'ast> for Assigned {
    fn visit_expr_assign(&mut self, e: &'ast syn::ExprAssign) {
        self.place(&e.left, e);
        syn::visit::visit_expr_assign(self, e);
    }
    fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
        let compound = matches!(
            e.op,
            syn::BinOp::AddAssign(_)
                | syn::BinOp::SubAssign(_)
                | syn::BinOp::MulAssign(_)
                | syn::BinOp::DivAssign(_)
                | syn::BinOp::RemAssign(_)
                | syn::BinOp::BitXorAssign(_)
                | syn::BinOp::BitAndAssign(_)
                | syn::BinOp::BitOrAssign(_)
                | syn::BinOp::ShlAssign(_)
                | syn::BinOp::ShrAssign(_)
        );
        if compound {
            self.place(&e.left, e);
        }
        syn::visit::visit_expr_binary(self, e);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

impl<'k> Lowerer<'k> {
    /// The visible variables among those assigned in `nodes`, with their
    /// values made IR values (so they can be carried or merged).
    pub(crate) fn carried(
        &mut self,
        names: BTreeMap<String, TokenStream>,
        what: &str,
    ) -> syn::Result<Vec<(String, Value, TokenStream)>> {
        let mut out = Vec::new();
        for (name, node) in names {
            let Some(b) = self.scopes.lookup(&name).cloned() else {
                continue;
            };
            if !b.mutable {
                continue;
            }
            let v = match &b.val {
                Val::Ir(x) if self.ty(*x).is_data() => *x,
                c if c.is_const() => self.data(c, None, &node)?,
                other => {
                    return Err(self.err(&node, format!("`{name}` is assigned in this {what} but holds {}; only scalars and tiles can change here", self.describe(other))))
                }
            };
            self.scopes.set(&name, Val::Ir(v));
            out.push((name, v, node));
        }
        Ok(out)
    }

    /// `v` made a value of type `want`: literals become constants, scalars
    /// broadcast to tiles; anything else must already have the type.
    pub(crate) fn coerce(
        &mut self,
        v: &Val,
        want: &Type,
        node: &dyn ToTokens,
        what: &str,
    ) -> syn::Result<Value> {
        let x = self.data(v, Some(want.dtype()), node)?;
        let have = self.ty(x);
        if have == *want {
            return Ok(x);
        }
        if let (Type::Scalar(d), Some(shape)) = (&have, want.tile_shape()) {
            if *d == want.dtype() {
                return self.broadcast_to_shape(x, shape, node);
            }
        }
        Err(self.err(node, format!("{what} {want}, but this makes it {have}")))
    }

    /// Runs `body` on the real builder while `Builder::for_loop` or
    /// `Builder::if_else` holds it, recording a front-end error.
    pub(crate) fn nested<T>(
        &mut self,
        b: &mut Builder,
        failure: &mut Option<syn::Error>,
        body: impl FnOnce(&mut Self) -> syn::Result<T>,
    ) -> Option<T> {
        std::mem::swap(&mut self.b, b);
        let r = body(self);
        std::mem::swap(&mut self.b, b);
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                *failure = Some(e);
                None
            }
        }
    }

    pub(crate) fn for_loop(&mut self, f: &ExprForLoop) -> syn::Result<Val> {
        if let Some(l) = &f.label {
            return Err(self.err(l, "loop labels are not supported"));
        }
        let (range, step) = match &*f.expr {
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (strip_parens(&m.receiver), Some(&m.args[0]))
            }
            e => (strip_parens(e), None),
        };
        let Expr::Range(r) = range else {
            let v = self.expr(&f.expr)?;
            return Err(self.err(
                &f.expr,
                format!("cannot loop over {}: `for` iterates over an integer range with scalar bounds, `lo..hi` or `(lo..hi).step_by(s)`", self.describe(&v)),
            ));
        };
        let (Some(lo_e), Some(hi_e), RangeLimits::HalfOpen(_)) = (&r.start, &r.end, &r.limits)
        else {
            return Err(self.err(
                r,
                "a loop range needs both bounds and an exclusive end: `lo..hi`",
            ));
        };
        let lo = self.expr(lo_e)?;
        let hi = self.expr(hi_e)?;
        let st = match step {
            Some(s) => self.expr(s)?,
            None => Val::Int(1),
        };
        if let (Val::Int(s), Some(e)) = (&st, step) {
            if *s <= 0 {
                return Err(self.err(e, format!("the loop step must be positive, found {s}")));
            }
        }
        let mut dtype: Option<DType> = None;
        for (v, e) in [(&lo, &**lo_e), (&hi, &**hi_e)]
            .into_iter()
            .chain(step.map(|e| (&st, e)))
        {
            if let Val::Ir(x) = v {
                let t = self.ty(*x);
                match t {
                    Type::Scalar(d) if d.is_int() => match dtype {
                        Some(o) if o != d => {
                            return Err(self
                                .err(e, format!("loop bounds have mismatched dtypes {o} and {d}")))
                        }
                        _ => dtype = Some(d),
                    },
                    Type::Tile(_) => {
                        return Err(self.err(
                            e,
                            format!("loop bounds must be scalars (block-uniform), found {t}"),
                        ))
                    }
                    other => {
                        return Err(self.err(
                            e,
                            format!("loop bounds must be integer scalars, found {other}"),
                        ))
                    }
                }
            } else if !matches!(v, Val::Int(_)) {
                return Err(self.err(
                    e,
                    format!("loop bounds must be integers, found {}", self.describe(v)),
                ));
            }
        }
        let d = dtype.unwrap_or(DType::I32);
        let lo = self.data(&lo, Some(d), lo_e)?;
        let hi = self.data(&hi, Some(d), hi_e)?;
        let st = self.data(
            &st,
            Some(d),
            step.map_or(&f.expr as &dyn ToTokens, |s| s as &dyn ToTokens),
        )?;
        let mut names = Assigned::default();
        names.visit_block(&f.body);
        let carried = self.carried(names.0, "loop")?;
        let init: Vec<Value> = carried.iter().map(|(_, v, _)| *v).collect();
        let types: Vec<Type> = init.iter().map(|v| self.ty(*v)).collect();
        let mut failure = None;
        let mut b = std::mem::replace(&mut self.b, Builder::new(""));
        let result = b.for_loop(lo, hi, st, &init, |inner, iv, args| {
            self.nested(inner, &mut failure, |me| {
                me.scopes.push();
                me.bind(&f.pat, Val::Ir(iv), &f.pat)?;
                for ((name, _, _), arg) in carried.iter().zip(args) {
                    me.scopes.set(name, Val::Ir(*arg));
                }
                me.block(&f.body)?;
                let mut next = Vec::new();
                for ((name, _, at), ty) in carried.iter().zip(&types) {
                    let v = me
                        .scopes
                        .lookup(name)
                        .map(|b| b.val.clone())
                        .unwrap_or(Val::Unit);
                    next.push(me.coerce(&v, ty, at, &format!("the loop carries `{name}` as"))?);
                }
                me.scopes.pop();
                Ok(next)
            })
            .ok_or_else(abort)
        });
        self.b = b;
        if let Some(e) = failure {
            return Err(e);
        }
        let results = self.ir_result(f, result)?;
        for ((name, _, _), v) in carried.iter().zip(results) {
            self.scopes.set(name, Val::Ir(v));
        }
        Ok(Val::Unit)
    }

    pub(crate) fn ir_result<T>(
        &self,
        node: &dyn ToTokens,
        r: Result<T, tile_ir::builder::BuildError>,
    ) -> syn::Result<T> {
        r.map_err(|e| self.err(node, crate::diag::build_msg(e)))
    }
}

fn strip_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_parens(&p.expr),
        other => other,
    }
}
