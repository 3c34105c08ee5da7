//! Translating a kernel body to tile IR through [`tile_ir::builder::Builder`].
//!
//! The body is walked once per specialization with the const parameters
//! bound to their values, so shapes are plain numbers by the time an op is
//! built and every typing rule is checked on the spot, at the span of the
//! expression that broke it. The walk is split by expression family:
//! `value` (literals and their typing), `ops` (operators, broadcasting,
//! casts), `calls` (builtin functions and helper inlining), `methods`
//! (method calls: math, reductions, views), `movement` (reshape, permute,
//! slice, pad, ...), `sort` (the bitonic sort), `random` (Philox random
//! numbers), `atomic` (atomics), `gather` (reads and writes at index
//! tiles), `lview` (layout views), `control` (`for`, `if`), `guards` (a
//! kernel's early `return`s, folded into `if`/`else`), `debug` (`device_assert!`,
//! `device_print!`), `recover` (going on after an error, so that a build
//! reports them all) and this module (statements, blocks and variables).

mod arrays;
mod atomic;
mod branches;
mod calls;
mod cast;
mod combine;
mod consts;
mod control;
mod debug;
mod gather;
mod guards;
mod hints;
mod layout_fns;
pub(crate) mod location;
mod lview;
mod methods;
mod movement;
mod ops;
mod random;
mod recover;
mod reshaping;
mod scaled;
mod scope;
mod sort;
mod sync;
mod tile_iter;
mod value;
mod window;

use crate::diag::{build_err, build_msg, err, poisoned};
use crate::signature::{KernelSig, ParamKind};
use crate::spec::Specialization;
use quote::ToTokens;
use scope::Scopes;
use std::collections::HashMap;
use syn::{Block, Expr, ItemFn, Pat, Stmt};
use tile_ir::builder::{BuildError, Builder};
use tile_ir::{Function, TensorType, Type, Value};
pub(crate) use value::Val;

/// Lowers `item` (whose signature is `sig`) for one specialization; on
/// failure, the error holds every independent error of the body.
///
/// `label` is appended to error messages when the kernel has several
/// specializations, so an error that only one of them triggers says which.
pub fn translate(
    item: &ItemFn,
    sig: &KernelSig,
    spec: &Specialization,
    label: Option<&str>,
) -> syn::Result<Function> {
    let mut b = Builder::new(sig.name.to_string());
    let mut scopes = Scopes::default();
    let mut tensors = HashMap::new();
    for (name, value) in &spec.values {
        scopes.define_global(name.clone(), Val::Int(*value));
    }
    for p in &sig.params {
        let ty = match p.kind {
            ParamKind::Tensor { rank, .. } => Type::Tensor(TensorType {
                dtype: p.dtype,
                rank,
                aligned: p.aligned,
            }),
            ParamKind::Tensors { rank, .. } => Type::Tensors(TensorType {
                dtype: p.dtype,
                rank,
                aligned: p.aligned,
            }),
            ParamKind::Scalar => Type::Scalar(p.dtype),
        };
        let v = b.param(p.name.to_string(), ty);
        if let ParamKind::Tensor { mutable, .. } | ParamKind::Tensors { mutable, .. } = p.kind {
            tensors.insert(v, (p.name.to_string(), mutable));
        }
        scopes.define_global(p.name.to_string(), Val::Ir(v));
    }
    let mut translator = Translator {
        b,
        scopes,
        helpers: HashMap::new(),
        calls: Vec::new(),
        label: label.map(str::to_string),
        tensors,
        views: HashMap::new(),
        windows: HashMap::new(),
        assertions: 0,
        prints: 0,
        errors: Vec::new(),
    };
    translator.collect_helpers(&item.block)?;
    let folded = guards::fold_guards(&item.block.stmts);
    match translator.block_stmts(folded.as_deref().unwrap_or(&item.block.stmts), true) {
        Ok(Val::Unit) => {}
        Ok(_) => {
            if let Some(Stmt::Expr(e, None)) = item.block.stmts.last() {
                let e = translator.err(
                    e,
                    "a kernel returns nothing: end this expression with `;` or store it to a tensor",
                );
                translator.report(e);
            }
        }
        Err(e) => translator.report(e),
    }
    translator.recorded()?;
    let Translator { b, label, .. } = translator;
    b.finish()
        .map_err(|e| label_err(label.as_deref(), build_err(&item.sig.ident, e)))
}

/// The state of one translation.
pub(crate) struct Translator<'k> {
    /// The builder of the kernel.
    pub(crate) b: Builder,
    /// The variables in scope.
    pub(crate) scopes: Scopes,
    /// The `#[tile_fn]` helpers defined in the kernel body, by name.
    pub(crate) helpers: HashMap<String, &'k syn::ItemFn>,
    /// The helpers being inlined, outermost first (to reject recursion).
    pub(crate) calls: Vec<String>,
    /// The specialization named in messages, if there are several.
    pub(crate) label: Option<String>,
    /// The tensor parameters: name and whether declared `&mut`.
    pub(crate) tensors: HashMap<Value, (String, bool)>,
    /// For each partition view, the tensor it views (to check stores).
    pub(crate) views: HashMap<Value, Value>,
    /// For each partition view of a window, the window.
    pub(crate) windows: HashMap<Value, window::ViewWindow>,
    /// The number of the next `device_assert!`.
    pub(crate) assertions: u32,
    /// The number of the next `device_print!`.
    pub(crate) prints: u32,
    /// The errors recorded so far (`recover.rs`).
    pub(crate) errors: Vec<syn::Error>,
}

impl<'k> Translator<'k> {
    /// An error at `node`, naming the specialization when there are several.
    pub(crate) fn err(&self, node: &dyn ToTokens, message: impl std::fmt::Display) -> syn::Error {
        match &self.label {
            Some(label) => err(node, format!("{message} (in specialization {label})")),
            None => err(node, message),
        }
    }

    /// Adds the specialization label to an error built elsewhere.
    pub(crate) fn with_label(&self, e: syn::Error) -> syn::Error {
        label_err(self.label.as_deref(), e)
    }

    /// Runs a builder call, turning a broken typing rule into an error at
    /// `node`; the ops it builds get `node`'s source location (when its
    /// tokens have one).
    pub(crate) fn ir<T>(
        &mut self,
        node: &dyn ToTokens,
        f: impl FnOnce(&mut Builder) -> Result<T, BuildError>,
    ) -> syn::Result<T> {
        let outer = location::location(node).map(|loc| self.b.set_location(Some(loc)));
        let result = f(&mut self.b);
        if let Some(outer) = outer {
            self.b.set_location(outer);
        }
        match result {
            Ok(v) => Ok(v),
            Err(e) => Err(self.err(node, build_msg(e))),
        }
    }

    /// The type of an IR value.
    pub(crate) fn ty(&self, v: Value) -> Type {
        self.b.ty(v).clone()
    }

    /// Registers the `#[tile_fn]` helpers among the statements of `block`.
    fn collect_helpers(&mut self, block: &'k Block) -> syn::Result<()> {
        for stmt in &block.stmts {
            if let Stmt::Item(syn::Item::Fn(f)) = stmt {
                if !f.attrs.iter().any(|a| a.path().is_ident("tile_fn")) {
                    return Err(self.err(
                        &f.sig.ident,
                        "a function inside a kernel must be marked `#[tile_fn]` to be inlined",
                    ));
                }
                let name = f.sig.ident.to_string();
                if self.helpers.insert(name.clone(), f).is_some() {
                    return Err(self.err(
                        &f.sig.ident,
                        format!("the helper `{name}` is defined twice"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Lowers a block in a new scope and returns its value.
    pub(crate) fn block(&mut self, block: &Block) -> syn::Result<Val> {
        self.scopes.push();
        let out = self.block_stmts(&block.stmts, false);
        self.scopes.pop();
        out
    }

    /// Lowers statements; the value is the tail expression's (or `()`).
    /// `fn_body` allows a final `return` (helper bodies). A failed
    /// statement is recorded and the next one lowered (`recover.rs`); a
    /// failed tail fails the block with an error that is not reported.
    pub(crate) fn block_stmts(&mut self, stmts: &[Stmt], fn_body: bool) -> syn::Result<Val> {
        let mut tail = Val::Unit;
        for (i, stmt) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            tail = match self.stmt(stmt, last, fn_body) {
                Ok(v) => v,
                Err(e) => {
                    self.recover(stmt, e);
                    if last && matches!(stmt, Stmt::Expr(Expr::Return(_), _) | Stmt::Expr(_, None))
                    {
                        return Err(poisoned());
                    }
                    Val::Unit
                }
            };
        }
        Ok(tail)
    }

    /// Lowers one statement; its value is that of an expression without `;`
    /// (or of the final `return` of a helper), `()` otherwise.
    fn stmt(&mut self, stmt: &Stmt, last: bool, fn_body: bool) -> syn::Result<Val> {
        match stmt {
            Stmt::Local(local) => self.local(local)?,
            Stmt::Item(syn::Item::Fn(f)) if fn_body && self.calls.is_empty() => {
                if !f.attrs.iter().any(|a| a.path().is_ident("tile_fn")) {
                    return Err(self.err(&f.sig.ident, "a function inside a kernel must be marked `#[tile_fn]` to be inlined"));
                }
            }
            Stmt::Item(item) => {
                return Err(self.err(item, "items other than `#[tile_fn]` helpers at the top of the kernel body are not supported here"))
            }
            Stmt::Macro(m) => self.macro_stmt(&m.mac)?,
            Stmt::Expr(Expr::Return(r), _) => {
                if !(fn_body && last) || self.calls.is_empty() {
                    return Err(self.err(r, "`return` is not supported here: a kernel ends a program early only with a guard clause at the top level of its body (`if cond { ..; return; }`), and kernels and helpers otherwise end with a tail expression (structured control flow); restructure with `if`/`else`"));
                }
                return match &r.expr {
                    Some(e) => self.expr(e),
                    None => Ok(Val::Unit),
                };
            }
            Stmt::Expr(e, semi) => {
                let v = self.expr(e)?;
                if semi.is_none() {
                    return Ok(v);
                }
            }
        }
        Ok(Val::Unit)
    }

    fn local(&mut self, local: &syn::Local) -> syn::Result<()> {
        let Some(init) = &local.init else {
            return Err(self.err(
                local,
                "a `let` needs a value: tile variables are SSA values",
            ));
        };
        if let Some((_, diverge)) = &init.diverge {
            return Err(self.err(diverge, "`let ... else` is not supported in tile kernels"));
        }
        let (pat, ty) = match &local.pat {
            Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        let mut v = self.expr(&init.expr)?;
        if let Some(ty) = ty {
            v = self.annotate(v, ty, &init.expr)?;
        }
        self.bind(pat, v, &init.expr)
    }

    /// Binds a pattern (a name, `mut name`, `_` or a tuple of those) to a value.
    pub(crate) fn bind(&mut self, pat: &Pat, v: Val, value_node: &dyn ToTokens) -> syn::Result<()> {
        match pat {
            Pat::Ident(pi) => {
                if pi.by_ref.is_some() || pi.subpat.is_some() {
                    return Err(self.err(
                        pat,
                        "`ref` and `@` patterns are not supported; bind a plain name",
                    ));
                }
                self.scopes
                    .define(pi.ident.to_string(), v, pi.mutability.is_some());
                Ok(())
            }
            Pat::Wild(_) => Ok(()),
            Pat::Tuple(pt) => {
                let Val::Tuple(items) = v else {
                    return Err(self.err(
                        value_node,
                        format!(
                            "cannot destructure {} into a tuple pattern",
                            self.describe(&v)
                        ),
                    ));
                };
                if items.len() != pt.elems.len() {
                    return Err(self.err(
                        pat,
                        format!(
                            "the pattern has {} elements but the value is a tuple of {}",
                            pt.elems.len(),
                            items.len()
                        ),
                    ));
                }
                for (p, item) in pt.elems.iter().zip(items) {
                    self.bind(p, item, value_node)?;
                }
                Ok(())
            }
            Pat::Paren(p) => self.bind(&p.pat, v, value_node),
            other => Err(self.err(
                other,
                "unsupported pattern: bind a name, `mut name`, `_` or a tuple of those",
            )),
        }
    }

    /// Lowers an expression.
    pub(crate) fn expr(&mut self, e: &Expr) -> syn::Result<Val> {
        match e {
            Expr::Lit(l) => self.literal(&l.lit),
            Expr::Path(p) => self.path(p),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Binary(bin) => self.binary_expr(bin),
            Expr::Unary(u) => self.unary_expr(u),
            Expr::Cast(c) => self.as_cast(c),
            Expr::Call(c) => self.call(c),
            Expr::MethodCall(m) => self.method(m),
            Expr::Block(b) => {
                if let Some(label) = &b.label {
                    return Err(self.err(label, "block labels are not supported"));
                }
                self.block(&b.block)
            }
            Expr::If(i) => self.if_expr(i),
            Expr::ForLoop(f) => self.for_loop(f),
            Expr::Tuple(t) => {
                let items = t.elems.iter().map(|x| self.expr(x)).collect::<syn::Result<Vec<_>>>()?;
                Ok(if items.is_empty() { Val::Unit } else { Val::Tuple(items) })
            }
            Expr::Field(f) => self.tuple_field(f),
            Expr::Assign(a) => self.assign(&a.left, &a.right, a),
            Expr::While(w) => self.while_loop(w),
            Expr::Loop(l) => Err(self.err(&l.loop_token, "`loop` is not supported: use `while` with a scalar condition, or `for i in lo..hi`")),
            Expr::Closure(c) => Err(self.err(c, "closures are not supported in tile kernels: define a `#[tile_fn]` helper inside the kernel instead")),
            Expr::Reference(r) => Err(self.err(r, "references are not supported in tile kernels: tiles and scalars are values, pass them directly")),
            Expr::Unsafe(u) => Err(self.err(&u.unsafe_token, "`unsafe` blocks are not supported in tile kernels: there is nothing unsafe to do")),
            Expr::Macro(m) => self.macro_stmt(&m.mac).map(|()| Val::Unit),
            Expr::Return(r) => Err(self.err(r, "`return` is not supported here: a kernel ends a program early only with a guard clause at the top level of its body (`if cond { ..; return; }`), and kernels and helpers otherwise end with a tail expression (structured control flow); restructure with `if`/`else`")),
            Expr::Break(b) => Err(self.err(b, "`break` is not supported: end a `while` loop through its condition")),
            Expr::Continue(c) => Err(self.err(c, "`continue` is not supported: use `if` inside the loop body")),
            Expr::Index(i) => self.index(i),
            Expr::Array(a) => Err(self.err(a, "an array is a shape or axis list: it is only accepted as an argument, e.g. `zeros::<f32>([M, N])`")),
            Expr::Range(r) => Err(self.err(r, "a range is only accepted as the iterable of a `for` loop or an argument of `.slice(..)`")),
            Expr::Match(m) => Err(self.err(&m.match_token, "`match` is not supported: use `if`/`else` on a scalar, or `select` on tiles")),
            Expr::Async(a) => Err(self.err(a, "`async` is not supported in tile kernels")),
            Expr::Await(a) => Err(self.err(a, "`.await` is not supported in tile kernels")),
            Expr::Struct(s) => Err(self.err(s, "struct literals are not supported in tile kernels: use tuples")),
            Expr::Try(t) => Err(self.err(t, "the `?` operator is not supported in tile kernels")),
            Expr::Let(l) => Err(self.err(l, "`let` in a condition is not supported")),
            other => Err(self.err(other, "this expression is not supported in a tile kernel")),
        }
    }

    /// A short description of a value for messages.
    pub(crate) fn describe(&self, v: &Val) -> String {
        match v {
            Val::Ir(x) => self.ty(*x).to_string(),
            Val::Int(i) => format!("the integer {i}"),
            Val::Float(f) => format!("the float {f:?}"),
            Val::Bool(b) => format!("the bool {b}"),
            Val::Tuple(items) => format!("a tuple of {}", items.len()),
            Val::Layout(l) => format!("the layout {l}"),
            Val::Window(w) => window::describe_window(w),
            Val::Unit => "`()`".into(),
            Val::Poisoned => "a value whose error is reported".into(),
        }
    }

    fn tuple_field(&mut self, f: &syn::ExprField) -> syn::Result<Val> {
        let base = self.expr(&f.base)?;
        let syn::Member::Unnamed(index) = &f.member else {
            return Err(self.err(&f.member, "fields are not supported: only tuple fields `.0`, `.1`, ...; to call a method write `x.name(..)`"));
        };
        match base {
            Val::Tuple(mut items) if (index.index as usize) < items.len() => {
                Ok(items.swap_remove(index.index as usize))
            }
            other => Err(self.err(
                f,
                format!("no field `.{}` on {}", index.index, self.describe(&other)),
            )),
        }
    }

    fn assign(&mut self, left: &Expr, right: &Expr, node: &dyn ToTokens) -> syn::Result<Val> {
        let v = self.expr(right)?;
        self.assign_to(left, v, node)?;
        Ok(Val::Unit)
    }

    /// Assigns a value to a place: a mutable variable or a tuple of places.
    pub(crate) fn assign_to(
        &mut self,
        left: &Expr,
        v: Val,
        node: &dyn ToTokens,
    ) -> syn::Result<()> {
        match left {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.segments[0].ident.to_string();
                match self.scopes.lookup(&name) {
                    None => Err(self.err(left, format!("cannot find variable `{name}` in this scope"))),
                    Some(b) if !b.mutable => Err(self.err(
                        left,
                        format!("cannot assign twice to immutable variable `{name}`: declare it with `let mut {name}`"),
                    )),
                    Some(_) => {
                        self.scopes.set(&name, v);
                        Ok(())
                    }
                }
            }
            Expr::Tuple(t) => {
                let Val::Tuple(items) = v else {
                    return Err(self.err(node, format!("cannot destructure {} into a tuple", self.describe(&v))));
                };
                if items.len() != t.elems.len() {
                    return Err(self.err(node, format!("the tuple has {} places but the value has {} elements", t.elems.len(), items.len())));
                }
                for (place, item) in t.elems.iter().zip(items) {
                    self.assign_to(place, item, node)?;
                }
                Ok(())
            }
            Expr::Paren(p) => self.assign_to(&p.expr, v, node),
            Expr::Infer(_) => Ok(()),
            other => Err(self.err(other, "only variables (and tuples of them) can be assigned: tiles are values; store to a tensor with a view's `.store(..)`")),
        }
    }
}

/// Appends "(in specialization ...)" to every message of `e`.
fn label_err(label: Option<&str>, e: syn::Error) -> syn::Error {
    let Some(label) = label else { return e };
    if e.to_string().contains("(in specialization") {
        return e;
    }
    let mut out: Option<syn::Error> = None;
    for one in e {
        let one = syn::Error::new(one.span(), format!("{one} (in specialization {label})"));
        match &mut out {
            Some(o) => o.combine(one),
            None => out = Some(one),
        }
    }
    out.unwrap_or_else(|| err(&proc_macro2::TokenStream::new(), label))
}
