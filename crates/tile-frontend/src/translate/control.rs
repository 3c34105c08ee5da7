//! Structured loops: `for` over integer ranges with scalar (block-uniform)
//! bounds and `while` on a block-uniform bool scalar (`if`/`else`:
//! `branches.rs`).
//!
//! Variables declared before a loop and assigned in its body become the
//! loop's carried values (a `while` condition reads them and may not assign
//! any).

use super::{Translator, Val};
use crate::diag::{abort, poisoned};
use proc_macro2::TokenStream;
use quote::ToTokens;
use std::cell::RefCell;
use std::collections::BTreeMap;
use syn::visit::Visit;
use syn::{Expr, ExprForLoop, ExprWhile, RangeLimits};
use tile_ir::builder::{BuildError, Builder};
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

impl<'k> Translator<'k> {
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
                Val::Poisoned => return Err(poisoned()),
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
        if super::tile_iter::is_tile_walk(&f.expr) {
            let walk = self.tile_walk(&f.expr)?;
            let n = self.walk_steps(&walk, &f.expr)?;
            let zero = self.data(&Val::Int(0), Some(DType::I32), &f.expr)?;
            let one = self.data(&Val::Int(1), Some(DType::I32), &f.expr)?;
            return self.counted_loop(f, (zero, n, one), Some(&walk));
        }
        let (iterated, stages) = self.pipelined_loop(&f.expr)?;
        let (range, step) = match iterated {
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (strip_parens(&m.receiver), Some(&m.args[0]))
            }
            e => (strip_parens(e), None),
        };
        let Expr::Range(r) = range else {
            let v = self.expr(&f.expr)?;
            return Err(self.err(
                &f.expr,
                format!("cannot loop over {}: `for` iterates over an integer range with scalar bounds, `lo..hi` or `(lo..hi).step_by(s)`, optionally pipelined: `pipelined(lo..hi, stages)`", self.describe(&v)),
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
        self.counted_loop_staged(f, (lo, hi, st), None, stages)
    }

    /// `pipelined(range, stages)`: the range and the loop's own number of
    /// pipeline stages (a compile-time integer, 1 to 8); any other
    /// expression is the range itself.
    fn pipelined_loop<'e>(&mut self, e: &'e Expr) -> syn::Result<(&'e Expr, Option<u32>)> {
        let Expr::Call(c) = strip_parens(e) else {
            return Ok((e, None));
        };
        let Expr::Path(p) = &*c.func else {
            return Ok((e, None));
        };
        if !p.path.is_ident("pipelined") {
            return Ok((e, None));
        }
        let args: Vec<&'e Expr> = c.args.iter().collect();
        self.argn(&args, 2, "pipelined(lo..hi, stages)", c)?;
        let stages = self.const_int(args[1], "the number of stages")?;
        match u32::try_from(stages) {
            Ok(n @ 1..=8) => Ok((args[0], Some(n))),
            _ => Err(self.err(
                args[1],
                format!("a loop's stages are 1 to 8, found {stages}"),
            )),
        }
    }

    /// The loop `f` over `lo..hi` by `st`; its pattern binds the counter,
    /// or the views of `walk`'s step at the counter.
    fn counted_loop(
        &mut self,
        f: &ExprForLoop,
        bounds: (Value, Value, Value),
        walk: Option<&super::tile_iter::TileWalk>,
    ) -> syn::Result<Val> {
        self.counted_loop_staged(f, bounds, walk, None)
    }

    /// [`Self::counted_loop`] with the loop's own pipeline stages.
    fn counted_loop_staged(
        &mut self,
        f: &ExprForLoop,
        (lo, hi, st): (Value, Value, Value),
        walk: Option<&super::tile_iter::TileWalk>,
        stages: Option<u32>,
    ) -> syn::Result<Val> {
        let mut names = Assigned::default();
        names.visit_block(&f.body);
        let carried = self.carried(names.0, "loop")?;
        let init: Vec<Value> = carried.iter().map(|(_, v, _)| *v).collect();
        let types: Vec<Type> = init.iter().map(|v| self.ty(*v)).collect();
        let mut failure = None;
        let mut b = std::mem::replace(&mut self.b, Builder::new(""));
        let outer = super::location::location(f).map(|loc| b.set_location(Some(loc)));
        let result = b.for_loop_staged(stages, (lo, hi, st), &init, |inner, iv, args| {
            self.nested(inner, &mut failure, |me| {
                me.scopes.push();
                let item = match walk {
                    Some(walk) => me.walk_item(walk, iv, &f.expr)?,
                    None => Val::Ir(iv),
                };
                me.bind(&f.pat, item, &f.pat)?;
                for ((name, _, _), arg) in carried.iter().zip(args) {
                    me.scopes.set(name, Val::Ir(*arg));
                }
                me.block(&f.body)?;
                let next = me.carried_next(&carried, &types)?;
                me.scopes.pop();
                Ok(next)
            })
            .ok_or_else(abort)
        });
        let results = self.restore_builder(b, outer, failure, (f, result))?;
        for ((name, _, _), v) in carried.iter().zip(results) {
            self.scopes.set(name, Val::Ir(v));
        }
        Ok(Val::Unit)
    }

    /// `while cond { body }`: the condition is translated into the loop's
    /// condition region, the body into its body region, both seeing the
    /// carried variables.
    pub(crate) fn while_loop(&mut self, w: &ExprWhile) -> syn::Result<Val> {
        if let Some(l) = &w.label {
            return Err(self.err(l, "loop labels are not supported"));
        }
        if let Expr::Let(l) = strip_parens(&w.cond) {
            return Err(self.err(
                l,
                "`while let` is not supported: write `while` with a bool scalar condition",
            ));
        }
        let mut in_cond = Assigned::default();
        in_cond.visit_expr(&w.cond);
        if let Some((name, node)) = in_cond.0.into_iter().next() {
            return Err(self.err(
                &node,
                format!("the condition of a `while` may not assign `{name}`: assign it in the loop body"),
            ));
        }
        let mut names = Assigned::default();
        names.visit_block(&w.body);
        let carried = self.carried(names.0, "loop")?;
        let init: Vec<Value> = carried.iter().map(|(_, v, _)| *v).collect();
        let types: Vec<Type> = init.iter().map(|v| self.ty(*v)).collect();
        let mut b = std::mem::replace(&mut self.b, Builder::new(""));
        let outer = super::location::location(w).map(|loc| b.set_location(Some(loc)));
        let failure: RefCell<Option<syn::Error>> = RefCell::new(None);
        let result = {
            let me = RefCell::new(&mut *self);
            let run = |inner: &mut Builder,
                       args: &[Value],
                       part: &dyn Fn(&mut Self) -> syn::Result<Vec<Value>>|
             -> Result<Vec<Value>, BuildError> {
                let mut guard = me.borrow_mut();
                let mut fail = None;
                let r = guard.nested(inner, &mut fail, |me| {
                    me.scopes.push();
                    for ((name, _, _), arg) in carried.iter().zip(args) {
                        me.scopes.set(name, Val::Ir(*arg));
                    }
                    let values = part(me)?;
                    me.scopes.pop();
                    Ok(values)
                });
                if let Some(e) = fail {
                    *failure.borrow_mut() = Some(e);
                }
                r.ok_or_else(abort)
            };
            b.while_loop(
                &init,
                |inner, args| {
                    let go = run(inner, args, &|me| Ok(vec![me.while_condition(&w.cond)?]))?;
                    go.first().copied().ok_or_else(abort)
                },
                |inner, args| {
                    run(inner, args, &|me| {
                        me.block(&w.body)?;
                        me.carried_next(&carried, &types)
                    })
                },
            )
        };
        let results = self.restore_builder(b, outer, failure.into_inner(), (w, result))?;
        for ((name, _, _), v) in carried.iter().zip(results) {
            self.scopes.set(name, Val::Ir(v));
        }
        Ok(Val::Unit)
    }

    /// The condition of a `while`: a `bool` scalar.
    fn while_condition(&mut self, cond: &Expr) -> syn::Result<Value> {
        let c = self.expr(cond)?;
        if let Val::Ir(v) = c {
            match self.ty(v) {
                Type::Scalar(DType::Bool) => return Ok(v),
                Type::Tile(_) => return Err(self.err(cond, "`while` on a tile is not supported: a loop's condition must be block-uniform; reduce it to a scalar (`t.max_along(0)`, `t.sum(0)`, ..) or choose per element with `select`")),
                _ => {}
            }
        }
        if matches!(c, Val::Bool(_)) {
            return self.data(&c, Some(DType::Bool), cond);
        }
        Err(self.err(
            cond,
            format!(
                "a `while` condition must be a bool scalar, found {}",
                self.describe(&c)
            ),
        ))
    }

    /// The values a loop body leaves in its carried variables, each of the
    /// type the loop carries it as.
    fn carried_next(
        &mut self,
        carried: &[(String, Value, TokenStream)],
        types: &[Type],
    ) -> syn::Result<Vec<Value>> {
        let mut next = Vec::new();
        for ((name, _, at), ty) in carried.iter().zip(types) {
            let v = self
                .scopes
                .lookup(name)
                .map(|b| b.val.clone())
                .unwrap_or(Val::Unit);
            next.push(self.coerce(&v, ty, at, &format!("the loop carries `{name}` as"))?);
        }
        Ok(next)
    }

    /// Puts back the builder `b` that held a region op being built (its
    /// location restored to `outer`), then gives the front end's recorded
    /// `failure` or the op's results.
    pub(crate) fn restore_builder<T>(
        &mut self,
        mut b: Builder,
        outer: Option<Option<tile_ir::Location>>,
        failure: Option<syn::Error>,
        (node, result): (&dyn ToTokens, Result<T, BuildError>),
    ) -> syn::Result<T> {
        if let Some(outer) = outer {
            b.set_location(outer);
        }
        self.b = b;
        if let Some(e) = failure {
            return Err(e);
        }
        self.ir_result(node, result)
    }

    pub(crate) fn ir_result<T>(
        &self,
        node: &dyn ToTokens,
        r: Result<T, tile_ir::builder::BuildError>,
    ) -> syn::Result<T> {
        r.map_err(|e| self.err(node, crate::diag::build_msg(e)))
    }
}

pub(super) fn strip_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_parens(&p.expr),
        other => other,
    }
}
