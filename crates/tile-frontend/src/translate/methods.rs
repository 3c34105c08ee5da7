//! Method calls: tensor extents, partition-view loads and stores, elementwise
//! math, casts, reductions and scans, sorts, and movement.
//!
//! Naming: `x.max(y)` / `x.min(y)` are elementwise (as on Rust floats);
//! the reductions along an axis are `x.max_along(axis)` / `x.min_along(axis)`,
//! beside `x.sum(axis)`, `x.prod(axis)`, `x.argmax(axis)`, `x.argmin(axis)`,
//! each with a `_keepdim` variant that keeps the reduced axis with extent 1.

use super::ops::Bin;
use super::{Translator, Val};
use syn::{Expr, ExprMethodCall};
use tile_ir::{ArgKind, BinaryOp, Padding, ReduceKind, ScanKind, Type, UnaryOp, Value};

const TILE_METHODS: &str = "exp, exp2, exp_m1/expm1, ln/log, log2, ln_1p/log1p, sqrt, rsqrt, cbrt, sin, cos, tan, asin, acos, atan, atan2(x), sinh, cosh, tanh, asinh, acosh, atanh, sigmoid, erf, erfc, abs, floor, ceil, round_tf32, max(y), min(y), powf(y), hypot(y), cast::<T>(), cast_nonsaturating::<T>(), bitcast::<T>(), sum, prod, max_along, min_along, argmax, argmin (each also `_keepdim`), cumsum, cumprod, unpack_fp4(axis), pack_fp4(axis), reduce(axis, |a, b| ..), reduce_keepdim, scan, sort, sort_descending, reshape, permute, transpose, expand, broadcast_to, flip, slice, pad, squeeze, unsqueeze, flatten, unflatten, repeat, repeat_interleave, roll, split, chunk";

fn unary_of(name: &str) -> Option<UnaryOp> {
    Some(match name {
        "exp" => UnaryOp::Exp,
        "exp2" => UnaryOp::Exp2,
        "ln" | "log" => UnaryOp::Log,
        "log2" => UnaryOp::Log2,
        "sqrt" => UnaryOp::Sqrt,
        "rsqrt" => UnaryOp::Rsqrt,
        "sin" => UnaryOp::Sin,
        "cos" => UnaryOp::Cos,
        "tanh" => UnaryOp::Tanh,
        "erf" => UnaryOp::Erf,
        "erfc" => UnaryOp::Erfc,
        "tan" => UnaryOp::Tan,
        "asin" => UnaryOp::Asin,
        "acos" => UnaryOp::Acos,
        "atan" => UnaryOp::Atan,
        "sinh" => UnaryOp::Sinh,
        "cosh" => UnaryOp::Cosh,
        "asinh" => UnaryOp::Asinh,
        "acosh" => UnaryOp::Acosh,
        "atanh" => UnaryOp::Atanh,
        "sigmoid" => UnaryOp::Sigmoid,
        "ln_1p" | "log1p" => UnaryOp::Log1p,
        "exp_m1" | "expm1" => UnaryOp::Expm1,
        "cbrt" => UnaryOp::Cbrt,
        "abs" => UnaryOp::Abs,
        "floor" => UnaryOp::Floor,
        "ceil" => UnaryOp::Ceil,
        "round" => UnaryOp::Round,
        "round_ties_even" => UnaryOp::RoundTiesEven,
        "round_tf32" => UnaryOp::RoundTf32,
        _ => return None,
    })
}

/// The elementwise methods of two operands, named as on Rust's floats
/// (`y.atan2(x)` is the angle of the point (x, y)).
fn binary_method(name: &str) -> Option<BinaryOp> {
    Some(match name {
        "max" => BinaryOp::Max,
        "min" => BinaryOp::Min,
        "powf" => BinaryOp::Pow,
        "atan2" => BinaryOp::Atan2,
        "hypot" => BinaryOp::Hypot,
        _ => return None,
    })
}

enum Reduction {
    Reduce(ReduceKind),
    Arg(ArgKind),
}

fn reduction_of(name: &str) -> Option<(Reduction, bool)> {
    let (base, keepdim) = match name.strip_suffix("_keepdim") {
        Some(b) => (b, true),
        None => (name, false),
    };
    let r = match base {
        "sum" => Reduction::Reduce(ReduceKind::Sum),
        "prod" => Reduction::Reduce(ReduceKind::Prod),
        "max_along" => Reduction::Reduce(ReduceKind::Max),
        "min_along" => Reduction::Reduce(ReduceKind::Min),
        "argmax" => Reduction::Arg(ArgKind::ArgMax),
        "argmin" => Reduction::Arg(ArgKind::ArgMin),
        _ => return None,
    };
    Some((r, keepdim))
}

impl Translator<'_> {
    pub(crate) fn method(&mut self, m: &ExprMethodCall) -> syn::Result<Val> {
        let name = m.method.to_string();
        let result = self.method_of_receiver(m);
        let takes_a_type = matches!(name.as_str(), "cast" | "cast_nonsaturating" | "bitcast");
        if m.turbofish.is_some() && !takes_a_type {
            // An unknown method reports itself; a known one takes no types.
            result?;
            return Err(self.err(&m.turbofish, format!("`{name}` takes no type arguments")));
        }
        result
    }

    fn method_of_receiver(&mut self, m: &ExprMethodCall) -> syn::Result<Val> {
        let recv = self.expr(&m.receiver)?;
        if let Val::Layout(l) = &recv {
            return self.layout_method(l, m);
        }
        let name = m.method.to_string();
        let args: Vec<&Expr> = m.args.iter().collect();
        if let Val::Ir(v) = recv {
            match self.ty(v) {
                Type::Tensor(t) => return self.tensor_method(v, t.rank, &name, &args, m),
                Type::Tensors(_) => return self.tensors_method(v, &name, &args, m),
                Type::PartitionView(_) => return self.view_method(v, &name, &args, m),
                Type::LayoutView(_) => return self.lview_method(v, &name, &args, m),
                _ => {}
            }
        }
        if matches!(recv, Val::Tuple(_) | Val::Unit | Val::Window(_)) {
            return Err(self.err(
                &m.method,
                format!("no method `{name}` on {}", self.describe(&recv)),
            ));
        }
        self.data_method(recv, &name, &args, m)
    }

    fn tensor_method(
        &mut self,
        t: Value,
        rank: usize,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        match name {
            "dim" | "shape" => {
                let a = self.argn(args, 1, &format!("{name}(axis)"), m)?;
                let axis = self.axis_arg(a[0], rank, "the tensor")?;
                self.ir(m, |b| b.dim(t, axis)).map(Val::Ir)
            }
            "offset" | "window" => self.tensor_window(t, rank, args, m),
            _ => Err(self.err(
                &m.method,
                format!("no method `{name}` on a tensor; tensors have `dim(axis)`, `offset([o, ..])` and `window([o, ..], [n, ..])`; to load or store, make a view with `partition_view(t, [shape])`"),
            )),
        }
    }

    /// Integer scalar operands; `what` names them in the error.
    pub(crate) fn indices(&mut self, args: &[&Expr], what: &str) -> syn::Result<Vec<Value>> {
        let mut out = Vec::new();
        for a in args {
            let v = self.expr(a)?;
            let x = self.data(&v, None, *a)?;
            match self.ty(x) {
                Type::Scalar(d) if d.is_int() => out.push(x),
                other => {
                    return Err(self.err(
                        *a,
                        format!("{what} must be an integer scalar, found {other}"),
                    ))
                }
            }
        }
        Ok(out)
    }

    fn view_method(
        &mut self,
        view: Value,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let Type::PartitionView(vt) = self.ty(view) else {
            return Err(self.err(&m.receiver, "expected a partition view"));
        };
        if let Some((op, tail)) = super::atomic::atomic_name(name) {
            return self.view_atomic(view, (op, tail == "_masked"), args, m);
        }
        match name {
            "atomic_load" | "atomic_load_masked" | "atomic_store" | "atomic_store_masked" => {
                let access = (name.starts_with("atomic_store"), name.ends_with("_masked"));
                return self.view_atomic_access(view, access, args, m);
            }
            "num_tiles" => return self.view_num_tiles(view, args, m),
            _ => {}
        }
        match name {
            "load" | "load_masked" => {
                let idx = self.indices(args, "a partition index")?;
                let out = if name == "load" {
                    self.ir(m, |b| b.load(view, &idx))?
                } else {
                    self.ir(m, |b| b.load_masked(view, &idx, Padding::Zero))?
                };
                Ok(Val::Ir(out))
            }
            "load_masked_with" => {
                let Some((first, rest)) = args.split_first() else {
                    return Err(self.err(m, "`load_masked_with(padding, index..)` needs a padding, e.g. `Padding::NegInf`"));
                };
                let padding = self.padding(first, vt.dtype)?;
                let idx = self.indices(rest, "a partition index")?;
                self.ir(m, |b| b.load_masked(view, &idx, padding)).map(Val::Ir)
            }
            "store" | "store_masked" => {
                let Some((first, rest)) = args.split_first() else {
                    return Err(self.err(m, format!("`{name}(tile, index..)` needs the tile to store")));
                };
                self.check_writable(view, m)?;
                let v = self.expr(first)?;
                let x = self.data(&v, Some(vt.dtype), *first)?;
                let xt = self.ty(x);
                if xt.dtype() != vt.dtype {
                    return Err(self.err(
                        *first,
                        format!("the stored value is {} but the view holds {}: convert it with `.cast::<{}>()`", xt.dtype(), vt.dtype, vt.dtype),
                    ));
                }
                let x = match xt.tile_shape() {
                    None => self.broadcast_to_shape(x, &vt.tile, *first)?,
                    Some(s) if *s == vt.tile => x,
                    Some(s) => {
                        let hint = keepdim_hint(s.dims(), vt.tile.dims());
                        return Err(self.err(*first, format!("the stored tile has shape {s}, but the view's tiles have shape {}{hint}", vt.tile)))
                    }
                };
                let idx = self.indices(rest, "a partition index")?;
                if name == "store" {
                    self.ir(m, |b| b.store(x, view, &idx))?;
                } else {
                    self.ir(m, |b| b.store_masked(x, view, &idx))?;
                }
                Ok(Val::Unit)
            }
            _ => Err(self.err(
                &m.method,
                format!("no method `{name}` on a partition view; views have load, load_masked, load_masked_with, store, store_masked, num_tiles, and atomic_load, atomic_store, atomic_add, atomic_max, atomic_min, atomic_and, atomic_or, atomic_xor, atomic_xchg (each also `_masked`)"),
            )),
        }
    }

    /// An error unless `view` is a view of a `&mut Tensor` parameter.
    pub(crate) fn check_writable(&self, view: Value, m: &ExprMethodCall) -> syn::Result<()> {
        match self.views.get(&view).and_then(|t| self.tensors.get(t)) {
            Some((tname, false)) => Err(self.err(
                &m.receiver,
                format!(
                    "cannot store through a view of {}",
                    super::arrays::read_only(tname)
                ),
            )),
            _ => Ok(()),
        }
    }

    pub(crate) fn padding(&mut self, e: &Expr, dtype: tile_ir::DType) -> syn::Result<Padding> {
        let named = |p: &syn::Path| -> Option<String> {
            (p.segments.len() == 2 && p.segments[0].ident == "Padding")
                .then(|| p.segments[1].ident.to_string())
        };
        match e {
            Expr::Path(p) => match named(&p.path).as_deref() {
                Some("Zero") => Ok(Padding::Zero),
                Some("Nan") => Ok(Padding::Nan),
                Some("PosInf") => Ok(Padding::PosInf),
                Some("NegInf") => Ok(Padding::NegInf),
                _ => Err(self.err(e, "expected a padding: `Padding::Zero`, `Padding::Nan`, `Padding::PosInf`, `Padding::NegInf` or `Padding::Value(c)`")),
            },
            Expr::Call(c) if matches!(&*c.func, Expr::Path(p) if named(&p.path).as_deref() == Some("Value")) && c.args.len() == 1 => {
                let v = self.expr(&c.args[0])?;
                if !v.is_const() {
                    return Err(self.err(&c.args[0], "`Padding::Value(c)` takes a compile-time constant"));
                }
                Ok(Padding::Value(self.scalar_of(&v, dtype, &c.args[0])?))
            }
            _ => Err(self.err(e, "expected a padding: `Padding::Zero`, `Padding::Nan`, `Padding::PosInf`, `Padding::NegInf` or `Padding::Value(c)`")),
        }
    }

    fn data_method(
        &mut self,
        recv: Val,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        if let Some(op) = unary_of(name) {
            self.argn(args, 0, &format!("{name}()"), m)?;
            let x = self.data(&recv, None, &m.receiver)?;
            return self.ir(m, |b| b.unary(op, x)).map(Val::Ir);
        }
        if let Some(op) = binary_method(name) {
            let a = self.argn(args, 1, &format!("{name}(other)"), m)?;
            let y = self.expr(a[0])?;
            return self.binary(Bin::Arith(op), recv, y, m);
        }
        if name == "clamp" {
            // Rust's `clamp` and Triton's `tl.clamp`: `x.max(lo).min(hi)`.
            let a = self.argn(args, 2, "clamp(lo, hi)", m)?;
            let (lo, hi) = (self.expr(a[0])?, self.expr(a[1])?);
            let at_least = self.binary(Bin::Arith(BinaryOp::Max), recv, lo, m)?;
            return self.binary(Bin::Arith(BinaryOp::Min), at_least, hi, m);
        }
        if name == "cast_nonsaturating" {
            self.argn(args, 0, "cast_nonsaturating::<T>()", m)?;
            let Some(d) = self.cast_target(m)? else {
                return Err(self.err(
                    &m.method,
                    "write the target dtype: `.cast_nonsaturating::<f8e4m3>()`",
                ));
            };
            let x = self.data(&recv, None, &m.receiver)?;
            return self.cast_nonsaturating(x, d, m);
        }
        if name == "bitcast" {
            self.argn(args, 0, "bitcast::<T>()", m)?;
            let Some(d) = self.cast_target(m)? else {
                return Err(self.err(&m.method, "write the target dtype: `.bitcast::<u32>()`"));
            };
            let x = self.data(&recv, None, &m.receiver)?;
            return self.bitcast(x, d, m);
        }
        if name == "cast" {
            self.argn(args, 0, "cast::<T>()", m)?;
            let Some(d) = self.cast_target(m)? else {
                return Err(self.err(&m.method, "write the target dtype: `.cast::<f16>()`"));
            };
            let x = self.data(&recv, None, &m.receiver)?;
            if self.ty(x).dtype() == d {
                return Ok(Val::Ir(x));
            }
            return self.ir(m, |b| b.cast(x, d)).map(Val::Ir);
        }
        let x = self.data(&recv, None, &m.receiver)?;
        let ty = self.ty(x);
        let Some(shape) = ty.tile_shape().cloned() else {
            let known = reduction_of(name).is_some()
                || super::movement::is_movement(name)
                || super::reshaping::is_reshaping(name)
                || name.starts_with("cum")
                || name.ends_with("_fp4")
                || super::combine::is_combine(name)
                || super::sort::is_sort(name);
            let msg = if known {
                format!("`{name}` works on tiles, found the scalar {ty}")
            } else {
                format!("no method `{name}` on {ty}; the methods are {TILE_METHODS}")
            };
            return Err(self.err(&m.method, msg));
        };
        let of = format!("the tile {ty}");
        if let Some((r, keepdim)) = reduction_of(name) {
            let a = self.argn(args, 1, &format!("{name}(axis)"), m)?;
            let axis = self.axis_arg(a[0], shape.rank(), &of)?;
            return match r {
                Reduction::Reduce(k) => self.ir(m, |b| b.reduce(k, x, axis, keepdim)),
                Reduction::Arg(k) => self.ir(m, |b| b.arg_reduce(k, x, axis, keepdim)),
            }
            .map(Val::Ir);
        }
        if super::combine::is_combine(name) {
            return self.combine_method(x, name, args, m);
        }
        if name == "cumsum" || name == "cumprod" {
            let a = self.argn(args, 1, &format!("{name}(axis)"), m)?;
            let axis = self.axis_arg(a[0], shape.rank(), &of)?;
            let k = if name == "cumsum" {
                ScanKind::CumSum
            } else {
                ScanKind::CumProd
            };
            return self.ir(m, |b| b.scan(k, x, axis)).map(Val::Ir);
        }
        if name == "unpack_fp4" || name == "pack_fp4" {
            let a = self.argn(args, 1, &format!("{name}(axis)"), m)?;
            let axis = self.axis_arg(a[0], shape.rank(), &of)?;
            return match name {
                "unpack_fp4" => self.ir(m, |b| b.unpack_fp4(x, axis)),
                _ => self.ir(m, |b| b.pack_fp4(x, axis)),
            }
            .map(Val::Ir);
        }
        if super::sort::is_sort(name) {
            return self.sort(x, &shape, name, args, m);
        }
        if super::movement::is_movement(name) {
            return self.movement(x, &shape, name, args, m);
        }
        if super::reshaping::is_reshaping(name) {
            return self.reshaping(x, &shape, name, args, m);
        }
        Err(self.err(
            &m.method,
            format!("no method `{name}` on {ty}; the methods are {TILE_METHODS}"),
        ))
    }

    fn cast_target(&self, m: &ExprMethodCall) -> syn::Result<Option<tile_ir::DType>> {
        let Some(t) = &m.turbofish else {
            return Ok(None);
        };
        let args = syn::AngleBracketedGenericArguments {
            colon2_token: t.colon2_token,
            lt_token: t.lt_token,
            args: t.args.clone(),
            gt_token: t.gt_token,
        };
        self.turbofish_dtype(Some(&args), m)
    }
}

/// A hint for a tile of shape `got` stored where `want` is expected, when
/// `want` is `got` with one more axis of extent 1: what a reduction without
/// `_keepdim` leaves.
fn keepdim_hint(got: &[usize], want: &[usize]) -> String {
    let axis = (0..want.len()).find(|&a| {
        want[a] == 1
            && want.len() == got.len() + 1
            && want[..a] == got[..a]
            && want[a + 1..] == got[a..]
    });
    match axis {
        Some(a) => format!("; a reduction drops its axis: `sum_keepdim({a})` (or `max_along_keepdim`, ...) keeps it with extent 1, as does `.unsqueeze({a})`"),
        None => String::new(),
    }
}
