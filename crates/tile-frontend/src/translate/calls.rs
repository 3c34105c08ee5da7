//! Calls of builtin functions (grid queries, views, tile constructors,
//! `dot`, `cat`, `select`, `fma`, `cdiv`, `multiple_of`) and of `#[tile_fn]` helpers, which
//! are inlined.

use super::ops::Bin;
use super::sync::GridCall;
use super::{Translator, Val};
use syn::{Expr, ExprCall, PathArguments};
use tile_ir::{BinaryOp, DType, DotPrecision, Scalar, Type};

/// The builtin functions, as listed in errors.
const BUILTINS: &str = "program_id, num_programs, partition_view, layout_view, zeros, ones, full, iota, dot, dot_ieee, dot_tf32, dot_scaled, cat, stack, select, fma, cdiv, multiple_of, min, max, pow, atan2, hypot, rand, randint, randn, gather, scatter, reduce, reduce_keepdim, scan, make_layout and the layout algebra (row_major, col_major, composition, complement, coalesce, right_inverse, left_inverse, logical_product, blocked_product, raked_product, logical_divide, zipped_divide, tiled_divide, upcast, downcast), atomic_add, atomic_max, atomic_min, atomic_and, atomic_or, atomic_xor, atomic_xchg, atomic_cas, fence, debug_barrier, gdc_wait, gdc_launch_dependents";

impl<'k> Translator<'k> {
    /// The arguments of a call, checking their number.
    pub(crate) fn argn<'e>(
        &self,
        args: &'e [&'e Expr],
        n: usize,
        usage: &str,
        node: &dyn quote::ToTokens,
    ) -> syn::Result<&'e [&'e Expr]> {
        if args.len() != n {
            return Err(self.err(
                node,
                format!("`{usage}` takes {n} argument(s), found {}", args.len()),
            ));
        }
        Ok(args)
    }

    pub(crate) fn call(&mut self, c: &ExprCall) -> syn::Result<Val> {
        let Expr::Path(p) = &*c.func else {
            return Err(self.err(
                &c.func,
                "only named functions can be called in a tile kernel",
            ));
        };
        let (Some(seg), 1) = (p.path.segments.last(), p.path.segments.len()) else {
            return Err(self.err(
                p,
                format!(
                    "unknown function `{}`: the builtins are {BUILTINS}",
                    path_text(&p.path)
                ),
            ));
        };
        let name = seg.ident.to_string();
        let turbofish = match &seg.arguments {
            PathArguments::AngleBracketed(a) => Some(a),
            PathArguments::None => None,
            PathArguments::Parenthesized(a) => {
                return Err(self.err(a, "unexpected parenthesized type arguments"))
            }
        };
        let args: Vec<&Expr> = c.args.iter().collect();
        if let Some(helper) = self.helpers.get(&name).copied() {
            return self.inline_helper(helper, c);
        }
        if turbofish.is_some() && !matches!(name.as_str(), "zeros" | "ones" | "full" | "iota") {
            return Err(self.err(seg, format!("`{name}` takes no type arguments")));
        }
        let dtype = self.turbofish_dtype(turbofish, seg)?;
        if let Some((op, "")) = super::atomic::atomic_name(&name) {
            return self.atomic_call(op, c, &args);
        }
        if super::layout_fns::is_layout_fn(&name) {
            return self.layout_call(&name, c, &args);
        }
        if super::combine::is_combine(&name) {
            return self.combine_call(&name, &args, c);
        }
        match name.as_str() {
            "gather" => self.gather_call(c, &args),
            "scatter" => self.scatter_call(c, &args),
            "multiple_of" => self.multiple_of_call(c, &args),
            "fence" => self.fence_call(c, &args),
            "debug_barrier" => self.debug_barrier_call(c, &args),
            "gdc_wait" => self.grid_call(c, &args, GridCall::Wait),
            "gdc_launch_dependents" => self.grid_call(c, &args, GridCall::LaunchDependents),
            "program_id" | "num_programs" => {
                let a = self.argn(&args, 1, &format!("{name}(axis)"), c)?;
                let axis = self.const_int(a[0], "a grid axis")?;
                let Ok(axis @ 0..=2) = u8::try_from(axis) else {
                    return Err(self.err(a[0], format!("the grid axis must be 0, 1 or 2, found {axis}")));
                };
                if name == "program_id" {
                    self.ir(c, |b| b.program_id(axis)).map(Val::Ir)
                } else {
                    self.ir(c, |b| b.num_programs(axis)).map(Val::Ir)
                }
            }
            "partition_view" => {
                let a = self.argn(&args, 2, "partition_view(tensor, [shape])", c)?;
                let t = self.expr(a[0])?;
                let tensor = match t {
                    Val::Ir(v) if matches!(self.ty(v), Type::Tensor(_)) => v,
                    Val::Window(w) => {
                        let shape = self.shape_arg(a[1])?;
                        if shape.len() != w.offsets.len() {
                            return Err(self.err(a[1], format!("a partition shape of rank {} for a window of rank {}", shape.len(), w.offsets.len())));
                        }
                        return self.window_view(&w, &shape, c).map(Val::Ir);
                    }
                    other => return Err(self.err(a[0], format!("`partition_view` takes a tensor parameter or a window of one (`t.offset(..)`, `t.window(..)`), found {}", self.describe(&other)))),
                };
                let shape = self.shape_arg(a[1])?;
                let view = self.ir(c, |b| b.partition_view(tensor, &shape))?;
                self.views.insert(view, tensor);
                Ok(Val::Ir(view))
            }
            "layout_view" => self.layout_view_call(c, &args),
            "zeros" | "ones" => {
                let a = self.argn(&args, 1, &format!("{name}::<T>([shape])"), c)?;
                let shape = self.shape_arg(a[0])?;
                let d = dtype.unwrap_or(DType::F32);
                let one = if name == "ones" { Val::Int(1) } else { Val::Int(0) };
                let value = if d.is_bool() { Scalar::Bool(name == "ones") } else { self.scalar_of(&one, d, c)? };
                self.ir(c, |b| b.full(value, &shape)).map(Val::Ir)
            }
            "full" => {
                let a = self.argn(&args, 2, "full([shape], value)", c)?;
                let shape = self.shape_arg(a[0])?;
                let v = self.expr(a[1])?;
                if v.is_const() {
                    let d = dtype.or_else(|| Self::default_dtype(&v)).unwrap_or(DType::F32);
                    let value = self.scalar_of(&v, d, a[1])?;
                    return self.ir(c, |b| b.full(value, &shape)).map(Val::Ir);
                }
                let x = self.data(&v, dtype, a[1])?;
                match (self.ty(x), dtype) {
                    (Type::Scalar(d), Some(want)) if d != want => {
                        Err(self.err(a[1], format!("the value is {d} but the turbofish asks for {want}")))
                    }
                    (Type::Scalar(_), _) => self.ir(c, |b| b.broadcast(x, &shape)).map(Val::Ir),
                    (other, _) => Err(self.err(a[1], format!("`full` takes a scalar value, found {other}"))),
                }
            }
            "iota" => {
                let a = self.argn(&args, 1, "iota::<T>([shape])", c)?;
                let shape = self.shape_arg(a[0])?;
                let d = dtype.unwrap_or(DType::I32);
                self.ir(c, |b| b.iota(&shape, d)).map(Val::Ir)
            }
            "dot" | "dot_ieee" | "dot_tf32" => {
                let a = self.argn(&args, 3, &format!("{name}(a, b, acc)"), c)?;
                let mut v = Vec::new();
                for x in a {
                    let val = self.expr(x)?;
                    v.push(self.data(&val, None, *x)?);
                }
                let precision = match name.as_str() {
                    "dot_ieee" => DotPrecision::Ieee,
                    "dot_tf32" => DotPrecision::Tf32,
                    _ => return self.ir(c, |b| b.dot(v[0], v[1], v[2])).map(Val::Ir),
                };
                self.ir(c, |b| b.dot_with(v[0], v[1], v[2], precision))
                    .map(Val::Ir)
            }
            "dot_scaled" => self.dot_scaled_call(c, &args),
            "stack" => self.stack_call(c, &args),
            "cat" => {
                let a = self.argn(&args, 2, "cat([a, b, ...], axis)", c)?;
                let parts = self.array_elems(a[0], "the tiles to concatenate")?;
                let mut tiles = Vec::new();
                for x in parts {
                    let val = self.expr(x)?;
                    tiles.push(self.data(&val, None, x)?);
                }
                let Some(first) = tiles.first().map(|t| self.ty(*t)) else {
                    return Err(self.err(a[0], "`cat` needs at least two tiles"));
                };
                let rank = first.tile_shape().map_or(0, |s| s.rank());
                let axis = self.axis_arg(a[1], rank, &format!("the tile {first}"))?;
                self.ir(c, |b| b.cat(&tiles, axis)).map(Val::Ir)
            }
            "select" | "where_" => {
                let a = self.argn(&args, 3, &format!("{name}(cond, a, b)"), c)?;
                let cond = self.expr(a[0])?;
                let x = self.expr(a[1])?;
                let y = self.expr(a[2])?;
                self.select(cond, x, y, c).map(Val::Ir)
            }
            "fma" => {
                let a = self.argn(&args, 3, "fma(a, b, c)", c)?;
                let x = self.expr(a[0])?;
                let y = self.expr(a[1])?;
                let z = self.expr(a[2])?;
                let mut d = None;
                for (v, e) in [(&x, a[0]), (&y, a[1]), (&z, a[2])] {
                    if let Val::Ir(t) = v {
                        let t = self.ty(*t).dtype();
                        match d {
                            Some(o) if o != t => return Err(self.err(e, format!("mismatched dtypes {o} and {t} in `fma`"))),
                            _ => d = Some(t),
                        }
                    }
                }
                let d = d.unwrap_or(DType::F32);
                let (x, y, z) = (self.data(&x, Some(d), a[0])?, self.data(&y, Some(d), a[1])?, self.data(&z, Some(d), a[2])?);
                let (x, y) = self.broadcast_pair(x, y, "fma", c)?;
                let (x, z) = self.broadcast_pair(x, z, "fma", c)?;
                let (y, _) = self.broadcast_pair(y, z, "fma", c)?;
                let (x, _) = self.broadcast_pair(x, y, "fma", c)?;
                self.ir(c, |b| b.fma(x, y, z)).map(Val::Ir)
            }
            "rand" | "randint" | "randn" => self.random_call(&name, c, &args),
            "cdiv" => {
                let a = self.argn(&args, 2, "cdiv(a, b)", c)?;
                let x = self.expr(a[0])?;
                let y = self.expr(a[1])?;
                let sum = self.binary(Bin::Arith(BinaryOp::Add), x, y.clone(), c)?;
                let sum = self.binary(Bin::Arith(BinaryOp::Sub), sum, Val::Int(1), c)?;
                self.binary(Bin::Arith(BinaryOp::Div), sum, y, c)
            }
            "min" | "max" | "pow" | "atan2" | "hypot" => {
                let a = self.argn(&args, 2, &format!("{name}(a, b)"), c)?;
                let x = self.expr(a[0])?;
                let y = self.expr(a[1])?;
                let op = match name.as_str() {
                    "min" => BinaryOp::Min,
                    "max" => BinaryOp::Max,
                    "atan2" => BinaryOp::Atan2,
                    "hypot" => BinaryOp::Hypot,
                    _ => BinaryOp::Pow,
                };
                self.binary(Bin::Arith(op), x, y, c)
            }
            _ => Err(self.err(
                &c.func,
                format!("unknown function `{name}`: not a tile builtin ({BUILTINS}) nor a `#[tile_fn]` helper defined in this kernel or named in its `uses(..)`"),
            )),
        }
    }

    /// `select(cond, a, b)` with broadcasting of all three.
    pub(crate) fn select(
        &mut self,
        cond: Val,
        x: Val,
        y: Val,
        node: &dyn quote::ToTokens,
    ) -> syn::Result<tile_ir::Value> {
        let d = self.common_dtype(Bin::Cmp(tile_ir::CmpPred::Eq), &x, &y, node)?;
        let c = self.data(&cond, Some(DType::Bool), node)?;
        if self.ty(c).dtype() != DType::Bool {
            return Err(self.err(
                node,
                format!(
                    "the condition of `select` must be bool, found {}",
                    self.ty(c)
                ),
            ));
        }
        let a = self.data(&x, Some(d), node)?;
        let b = self.data(&y, Some(d), node)?;
        let (a, b) = self.broadcast_pair(a, b, "select", node)?;
        let (c, a) = self.broadcast_pair(c, a, "select", node)?;
        let (b, _) = self.broadcast_pair(b, c, "select", node)?;
        self.ir(node, |bld| bld.select(c, a, b))
    }

    fn inline_helper(&mut self, f: &'k syn::ItemFn, c: &ExprCall) -> syn::Result<Val> {
        let name = f.sig.ident.to_string();
        if !f.sig.generics.params.is_empty() {
            return Err(self.err(
                &f.sig.generics,
                "helpers take no generic parameters: they see the kernel's const parameters",
            ));
        }
        if self.calls.contains(&name) {
            return Err(self.err(
                c,
                format!("the helper `{name}` calls itself: recursion cannot be inlined"),
            ));
        }
        if f.sig.inputs.len() != c.args.len() {
            return Err(self.err(
                c,
                format!(
                    "the helper `{name}` takes {} argument(s), found {}",
                    f.sig.inputs.len(),
                    c.args.len()
                ),
            ));
        }
        let mut args = Vec::new();
        for a in &c.args {
            args.push(self.expr(a)?);
        }
        self.calls.push(name);
        self.scopes.push_frame();
        let result = self.helper_body(f, args);
        self.scopes.pop_frame();
        self.calls.pop();
        result
    }

    pub(crate) fn helper_body(&mut self, f: &'k syn::ItemFn, args: Vec<Val>) -> syn::Result<Val> {
        for (input, v) in f.sig.inputs.iter().zip(args) {
            let syn::FnArg::Typed(pt) = input else {
                return Err(self.err(input, "a helper is a free function; it takes no `self`"));
            };
            self.bind(&pt.pat, v, &pt.pat)?;
        }
        self.block_stmts(&f.block.stmts, true)
    }
}

fn path_text(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}
