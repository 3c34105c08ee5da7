//! `if`/`else` on block-uniform bool scalars.
//!
//! Variables declared before an `if` and assigned in a branch become results
//! of the `if`, as does the branches' tail value (`let y = if c { a } else
//! { b };`). The result types of an `if` are learned by translating each
//! branch once into a region that is then dropped (its ops stay unreachable
//! in the arena), so that a literal in one branch takes the dtype of the
//! other. An `if` whose condition is a compile-time constant (`if BLOCK >
//! 64`) translates only the branch taken. A tile condition is an error
//! suggesting `select`.

use super::control::Assigned;
use super::{Translator, Val};
use crate::diag::{abort, poisoned};
use quote::ToTokens;
use std::cell::RefCell;
use syn::visit::Visit;
use syn::{Block, Expr, ExprIf};
use tile_ir::builder::{BuildError, Builder};
use tile_ir::{DType, Type, Value};

/// The branch of an `if` to translate.
#[derive(Clone, Copy)]
enum Branch<'e> {
    Then(&'e Block),
    Else(Option<&'e Expr>),
}

/// How a branch's tail value is made of leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Unit,
    One,
    Tuple(usize),
}

fn leaves(v: Val) -> (Form, Vec<Val>) {
    match v {
        Val::Unit => (Form::Unit, Vec::new()),
        Val::Tuple(items) => (Form::Tuple(items.len()), items),
        other => (Form::One, vec![other]),
    }
}

fn has_tail(b: &Block) -> bool {
    matches!(b.stmts.last(), Some(syn::Stmt::Expr(_, None)))
}

impl Translator<'_> {
    pub(crate) fn if_expr(&mut self, i: &ExprIf) -> syn::Result<Val> {
        let cond = self.expr(&i.cond)?;
        let else_expr = i.else_branch.as_ref().map(|(_, e)| &**e);
        let cond = match cond {
            Val::Bool(true) => return self.branch(Branch::Then(&i.then_branch)),
            Val::Bool(false) => return self.branch(Branch::Else(else_expr)),
            Val::Ir(x) => match self.ty(x) {
                Type::Scalar(DType::Bool) => x,
                t @ Type::Tile(_) => {
                    return Err(self.err(
                        &i.cond,
                        format!("an `if` condition must be a block-uniform bool scalar, found {t}: choose per element with `select(cond, a, b)` (alias `where_`)"),
                    ))
                }
                other => return Err(self.err(&i.cond, format!("an `if` condition must be a bool scalar, found {other}"))),
            },
            other => return Err(self.err(&i.cond, format!("an `if` condition must be a bool scalar, found {}", self.describe(&other)))),
        };
        let mut names = Assigned::default();
        names.visit_block(&i.then_branch);
        if let Some(e) = else_expr {
            names.visit_expr(e);
        }
        let merged: Vec<(String, Value)> = self
            .carried(names.0, "`if`")?
            .into_iter()
            .map(|(n, v, _)| (n, v))
            .collect();
        let else_tail = match else_expr {
            Some(Expr::Block(b)) => has_tail(&b.block),
            Some(_) => true,
            None => false,
        };
        let (form, mut types) = if has_tail(&i.then_branch) || else_tail {
            self.tail_types(cond, i, else_expr, &merged)?
        } else {
            (Form::Unit, Vec::new())
        };
        let n_tail = types.len();
        types.extend(merged.iter().map(|(_, v)| self.ty(*v)));
        let mut b = std::mem::replace(&mut self.b, Builder::new(""));
        let failure: RefCell<Option<syn::Error>> = RefCell::new(None);
        let result = {
            let me = RefCell::new(&mut *self);
            let run = |inner: &mut Builder, branch: Branch| -> Result<Vec<Value>, BuildError> {
                let mut guard = me.borrow_mut();
                let mut fail = None;
                let r = guard.nested(inner, &mut fail, |me| {
                    me.branch_yield(branch, &types, n_tail, &merged, i)
                });
                if let Some(e) = fail {
                    *failure.borrow_mut() = Some(e);
                }
                r.ok_or_else(abort)
            };
            b.if_else(
                cond,
                &types,
                |inner| run(inner, Branch::Then(&i.then_branch)),
                |inner| run(inner, Branch::Else(else_expr)),
            )
        };
        self.b = b;
        if let Some(e) = failure.into_inner() {
            return Err(e);
        }
        let results = self.ir_result(i, result)?;
        for ((name, _), v) in merged.iter().zip(&results[n_tail..]) {
            self.scopes.set(name, Val::Ir(*v));
        }
        let tail: Vec<Val> = results[..n_tail].iter().map(|v| Val::Ir(*v)).collect();
        Ok(match form {
            Form::Unit => Val::Unit,
            Form::One => tail.into_iter().next().unwrap_or(Val::Unit),
            Form::Tuple(_) => Val::Tuple(tail),
        })
    }

    /// Lowers a branch in its own scope and returns its value.
    fn branch(&mut self, branch: Branch) -> syn::Result<Val> {
        match branch {
            Branch::Then(b) => self.block(b),
            Branch::Else(None) => Ok(Val::Unit),
            Branch::Else(Some(Expr::Block(b))) => self.block(&b.block),
            Branch::Else(Some(Expr::If(i))) => self.if_expr(i),
            Branch::Else(Some(other)) => {
                Err(self.err(other, "expected a block or `if` after `else`"))
            }
        }
    }

    fn reset(&mut self, merged: &[(String, Value)]) {
        for (name, v) in merged {
            self.scopes.set(name, Val::Ir(*v));
        }
    }

    /// Lowers a branch for real: its tail leaves and the merged variables,
    /// coerced to the `if`'s result types.
    fn branch_yield(
        &mut self,
        branch: Branch,
        types: &[Type],
        n_tail: usize,
        merged: &[(String, Value)],
        node: &ExprIf,
    ) -> syn::Result<Vec<Value>> {
        self.reset(merged);
        let v = self.branch(branch)?;
        let (_, tail) = leaves(v);
        let at: &dyn ToTokens = match branch {
            Branch::Then(b) => b,
            Branch::Else(Some(e)) => e,
            Branch::Else(None) => node,
        };
        let mut out = Vec::new();
        for (leaf, ty) in tail.iter().zip(&types[..n_tail]) {
            out.push(self.coerce(leaf, ty, at, "the `if` produces")?);
        }
        for ((name, _), ty) in merged.iter().zip(&types[n_tail..]) {
            let v = self
                .scopes
                .lookup(name)
                .map(|b| b.val.clone())
                .unwrap_or(Val::Unit);
            out.push(self.coerce(&v, ty, at, &format!("`{name}` is"))?);
        }
        self.reset(merged);
        Ok(out)
    }

    /// Lowers a branch into a region that is dropped, to learn its value.
    fn dry_run(
        &mut self,
        cond: Value,
        branch: Branch,
        merged: &[(String, Value)],
    ) -> syn::Result<Val> {
        let mut b = std::mem::replace(&mut self.b, Builder::new(""));
        let mut fail = None;
        let mut out = None;
        let _ = b.if_else(
            cond,
            &[],
            |inner| {
                out = self.nested(inner, &mut fail, |me| {
                    me.reset(merged);
                    me.branch(branch)
                });
                Err(abort())
            },
            |_| Ok(Vec::new()),
        );
        self.b = b;
        self.reset(merged);
        match (fail, out) {
            (Some(e), _) => Err(e),
            (None, Some(v)) => Ok(v),
            (None, None) => Ok(Val::Unit),
        }
    }

    /// The form and leaf types of the `if`'s value, unified across branches.
    fn tail_types(
        &mut self,
        cond: Value,
        i: &ExprIf,
        else_expr: Option<&Expr>,
        merged: &[(String, Value)],
    ) -> syn::Result<(Form, Vec<Type>)> {
        // Both branches are lowered, so that the errors of both are reported.
        let then = self.dry_run(cond, Branch::Then(&i.then_branch), merged);
        let other = self.dry_run(cond, Branch::Else(else_expr), merged);
        let (then, other) = match (then, other) {
            (Ok(then), Ok(other)) => (then, other),
            (then, other) => {
                for e in [then.err(), other.err()].into_iter().flatten() {
                    self.report(e);
                }
                return Err(poisoned());
            }
        };
        let (tf, tl) = leaves(then.clone());
        let (ef, el) = leaves(other.clone());
        if tf != ef {
            let msg = if else_expr.is_none() {
                format!(
                    "an `if` without `else` cannot produce a value, found {}",
                    self.describe(&then)
                )
            } else {
                format!(
                    "`if` and `else` have incompatible values: {} and {}",
                    self.describe(&then),
                    self.describe(&other)
                )
            };
            return Err(self.err(i, msg));
        }
        let mut types = Vec::new();
        for (a, b) in tl.iter().zip(&el) {
            let ty = |me: &Self, v: &Val| match v {
                Val::Ir(x) if me.ty(*x).is_data() => Ok(Some(me.ty(*x))),
                c if c.is_const() => Ok(None),
                other => Err(me.err(
                    i,
                    format!(
                        "an `if` can only produce scalars and tiles, found {}",
                        me.describe(other)
                    ),
                )),
            };
            let t = match (ty(self, a)?, ty(self, b)?) {
                (Some(x), Some(y)) if x == y => x,
                (Some(x), Some(y))
                    if x.dtype() == y.dtype()
                        && (x.tile_shape().is_none() || y.tile_shape().is_none()) =>
                {
                    if x.tile_shape().is_some() {
                        x
                    } else {
                        y
                    }
                }
                (Some(x), Some(y)) => {
                    return Err(self.err(
                        i,
                        format!("`if` and `else` have different types: {x} and {y}"),
                    ))
                }
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => Type::Scalar(Self::default_dtype(a).unwrap_or(DType::I32)),
            };
            types.push(t);
        }
        Ok((tf, types))
    }
}
