//! Layout views: `layout_view(t, shape, stride)` and the methods of the view
//! it returns (Mojo `LayoutTensor`'s `tile`, `split`, `vectorize`, `slice`,
//! `transpose`, `reshape`, `composition`, `coalesce`, `distribute`, the
//! loads and stores, `fill` and `copy_from`, and CuTe's `swizzle`). Layouts are written as CuTe shape and stride int-tuples:
//! nested tuples or arrays of compile-time integers, `((4, 2), 8)`.

use super::{Translator, Val};
use syn::{Expr, ExprCall, ExprMethodCall};
use tile_ir::layout::{IntTuple, Layout, Swizzle};
use tile_ir::{Padding, Type, Value};

/// The methods of a layout view, as listed in errors.
const LVIEW_METHODS: &str = "tile, split, vectorize, slice, transpose, permute, reshape, compose, coalesce, distribute, swizzle, load, load_masked, load_masked_with, store, store_masked, fill, copy_from";

impl Translator<'_> {
    /// `layout_view(tensor, shape, stride)` or `layout_view(tensor, layout)`.
    pub(crate) fn layout_view_call(&mut self, c: &ExprCall, args: &[&Expr]) -> syn::Result<Val> {
        let usage = "layout_view(tensor, shape, stride) or layout_view(tensor, layout)";
        let a = if args.len() == 2 {
            args
        } else {
            self.argn(args, 3, usage, c)?
        };
        let tensor = match self.expr(a[0])? {
            Val::Ir(v) if matches!(self.ty(v), Type::Tensor(_)) => v,
            other => {
                return Err(self.err(
                    a[0],
                    format!(
                        "`layout_view` takes a tensor parameter, found {}",
                        self.describe(&other)
                    ),
                ))
            }
        };
        let layout = match a {
            [_, layout] => self.layout_value(layout)?,
            _ => self.layout_arg(a[1], a[2], c)?,
        };
        let view = self.ir(c, |b| b.layout_view(tensor, &layout))?;
        self.views.insert(view, tensor);
        Ok(Val::Ir(view))
    }

    /// A layout from shape and stride int-tuple expressions.
    pub(crate) fn layout_arg(
        &mut self,
        shape: &Expr,
        stride: &Expr,
        node: &dyn quote::ToTokens,
    ) -> syn::Result<Layout> {
        let s = self.int_tuple(shape, "a layout's shape")?;
        let d = self.int_tuple(stride, "a layout's stride")?;
        Layout::new(s, d).map_err(|e| self.err(node, format!("invalid layout: {e}")))
    }

    /// A CuTe int-tuple: a compile-time integer, or a tuple or array of
    /// int-tuples.
    pub(crate) fn int_tuple(&mut self, e: &Expr, what: &str) -> syn::Result<IntTuple> {
        let items: Vec<&Expr> = match e {
            Expr::Tuple(t) => t.elems.iter().collect(),
            Expr::Array(a) => a.elems.iter().collect(),
            Expr::Paren(p) => return self.int_tuple(&p.expr, what),
            _ => {
                let n = self.const_int(e, what)?;
                let n = i64::try_from(n)
                    .map_err(|_| self.err(e, format!("{what}: {n} does not fit in i64")))?;
                return Ok(IntTuple::Int(n));
            }
        };
        let modes = items
            .into_iter()
            .map(|x| self.int_tuple(x, what))
            .collect::<syn::Result<Vec<_>>>()?;
        Ok(IntTuple::Tuple(modes))
    }

    /// A method call on a layout view.
    pub(crate) fn lview_method(
        &mut self,
        view: Value,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let Type::LayoutView(vt) = self.ty(view) else {
            return Err(self.err(&m.receiver, "expected a layout view"));
        };
        let rank = vt.layout.rank();
        let derived = match name {
            "tile" => {
                let Some((shape, index)) = args.split_first() else {
                    return Err(self.err(m, "`tile([extents], index..)` needs the tile extents"));
                };
                let shape = self.shape_arg(shape)?;
                let index = self.indices(index, "a layout-view index")?;
                self.ir(m, |b| b.lview_tile(view, &shape, &index))?
            }
            "split" => {
                let a = self.argn(args, 3, "split(axis, parts, index)", m)?;
                let axis = self.axis_arg(a[0], rank, "the layout view")?;
                let parts = self.const_usize(a[1], "the number of parts")?;
                let index = self.indices(&a[2..], "a layout-view index")?[0];
                self.ir(m, |b| b.lview_split(view, axis, parts, index))?
            }
            "vectorize" => {
                let a = self.argn(args, 1, "vectorize([extents])", m)?;
                let shape = self.shape_arg(a[0])?;
                self.ir(m, |b| b.lview_vectorize(view, &shape))?
            }
            "slice" => {
                let a = self.argn(args, 1, "slice([start..end, ..])", m)?;
                let ranges = self.mode_ranges(a[0], &vt.layout)?;
                self.ir(m, |b| b.lview_slice(view, &ranges))?
            }
            "transpose" => {
                self.argn(args, 0, "transpose()", m)?;
                if rank != 2 {
                    return Err(self.err(
                        &m.method,
                        format!("`transpose()` swaps the two modes of a rank-2 view; this view has {rank} modes: use `permute([..])`"),
                    ));
                }
                self.ir(m, |b| b.lview_transpose(view, &[1, 0]))?
            }
            "permute" => {
                let a = self.argn(args, 1, "permute([modes])", m)?;
                let perm = self.usize_list(a[0], "a permutation of the modes")?;
                self.ir(m, |b| b.lview_transpose(view, &perm))?
            }
            "reshape" => {
                let a = self.argn(args, 1, "reshape([extents])", m)?;
                let shape = self.shape_arg(a[0])?;
                self.ir(m, |b| b.lview_reshape(view, &shape))?
            }
            "compose" => {
                let layout = match args {
                    [layout] => self.layout_value(layout)?,
                    _ => {
                        let a = self.argn(args, 2, "compose(shape, stride) or compose(layout)", m)?;
                        self.layout_arg(a[0], a[1], m)?
                    }
                };
                self.ir(m, |b| b.lview_compose(view, &layout))?
            }
            "coalesce" => {
                self.argn(args, 0, "coalesce()", m)?;
                self.ir(m, |b| b.lview_coalesce(view))?
            }
            "distribute" => {
                let (threads, tid) = match args {
                    [layout, tid] => (self.layout_value(layout)?, *tid),
                    _ => {
                        let a = self.argn(
                            args,
                            3,
                            "distribute(thread_shape, thread_stride, thread_id) or distribute(thread_layout, thread_id)",
                            m,
                        )?;
                        (self.layout_arg(a[0], a[1], m)?, a[2])
                    }
                };
                let tid = self.indices(&[tid], "a layout-view index")?[0];
                self.ir(m, |b| b.lview_distribute(view, &threads, tid))?
            }
            "swizzle" => {
                let a = self.argn(args, 3, "swizzle(bits, base, shift)", m)?;
                let bits = self.const_usize(a[0], "a swizzle's bits")?;
                let base = self.const_usize(a[1], "a swizzle's base")?;
                let shift = self.const_int(a[2], "a swizzle's shift")?;
                let swizzle = u32::try_from(bits)
                    .ok()
                    .zip(u32::try_from(base).ok())
                    .zip(i32::try_from(shift).ok())
                    .ok_or_else(|| format!("Sw<{bits},{base},{shift}> does not fit"))
                    .and_then(|((b, m), s)| Swizzle::new(b, m, s).map_err(|e| e.to_string()))
                    .map_err(|e| self.err(m, format!("invalid swizzle: {e}")))?;
                self.ir(m, |b| b.lview_swizzle(view, swizzle))?
            }
            "tiled_iterator" => {
                return Err(self.err(
                    &m.method,
                    "a `tiled_iterator` is walked by a `for` loop: `for t in v.tiled_iterator([extents], axis, coords..) { .. }`",
                ))
            }
            _ => return self.lview_access(view, name, args, m),
        };
        if let Some(tensor) = self.views.get(&view).copied() {
            self.views.insert(derived, tensor);
        }
        Ok(Val::Ir(derived))
    }

    /// The loads and stores of a layout view.
    fn lview_access(
        &mut self,
        view: Value,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        match name {
            "load" => {
                self.argn(args, 0, "load()", m)?;
                self.ir(m, |b| b.lview_load(view)).map(Val::Ir)
            }
            "load_masked" => {
                self.argn(args, 0, "load_masked()", m)?;
                self.ir(m, |b| b.lview_load_masked(view, Padding::Zero))
                    .map(Val::Ir)
            }
            "load_masked_with" => {
                let a = self.argn(args, 1, "load_masked_with(padding)", m)?;
                let padding = self.padding(a[0], self.ty(view).dtype())?;
                self.ir(m, |b| b.lview_load_masked(view, padding))
                    .map(Val::Ir)
            }
            "store" | "store_masked" => {
                let a = self.argn(args, 1, &format!("{name}(tile)"), m)?;
                self.check_writable(view, m)?;
                let dtype = self.ty(view).dtype();
                let v = self.expr(a[0])?;
                let x = self.data(&v, Some(dtype), a[0])?;
                if name == "store" {
                    self.ir(m, |b| b.lview_store(x, view))?;
                } else {
                    self.ir(m, |b| b.lview_store_masked(x, view))?;
                }
                Ok(Val::Unit)
            }
            "fill" => {
                // Mojo's `fill(val)`: a store of a constant tile (masked for
                // an edge tile: its elements past the edge are not in it).
                let a = self.argn(args, 1, "fill(value)", m)?;
                self.check_writable(view, m)?;
                let dtype = self.ty(view).dtype();
                let v = self.expr(a[0])?;
                let x = self.data(&v, Some(dtype), a[0])?;
                if !matches!(self.ty(x), Type::Scalar(_)) {
                    return Err(self.err(
                        a[0],
                        format!(
                            "`fill` takes a scalar, found {}: store a tile with `store(tile)`",
                            self.ty(x)
                        ),
                    ));
                }
                let shape = self.lview_shape(view, m)?;
                let tile = self.ir(m, |b| b.broadcast(x, &shape))?;
                self.store_view(tile, view, m)?;
                Ok(Val::Unit)
            }
            "copy_from" => self.lview_copy_from(view, args, m),
            _ => Err(self.err(
                &m.method,
                format!("no method `{name}` on a layout view; layout views have {LVIEW_METHODS}"),
            )),
        }
    }

    /// Mojo's `dst.copy_from(src)`: every element of layout view `src`
    /// stored to `view` at the same index in CuTe's colexicographic order
    /// (so views of different shapes and equal sizes copy element `i` to
    /// element `i`); a load and a store, with a permute and reshapes
    /// between them when the shapes differ.
    fn lview_copy_from(
        &mut self,
        view: Value,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let a = self.argn(args, 1, "copy_from(view)", m)?;
        self.check_writable(view, m)?;
        let src = match self.expr(a[0])? {
            Val::Ir(v) if matches!(self.ty(v), Type::LayoutView(_)) => v,
            other => {
                let found = self.describe(&other);
                return Err(self.err(
                    a[0],
                    format!("`copy_from` copies from a layout view, found {found}"),
                ));
            }
        };
        let (from, to) = (self.ty(src).dtype(), self.ty(view).dtype());
        if from != to {
            return Err(self.err(
                a[0],
                format!("`copy_from` copies between views of one dtype: the source holds {from}, this view {to}"),
            ));
        }
        let (src_shape, dst_shape) = (self.lview_shape(src, m)?, self.lview_shape(view, m)?);
        let (n, want) = (
            src_shape.iter().product::<usize>(),
            dst_shape.iter().product::<usize>(),
        );
        if n != want {
            return Err(self.err(
                a[0],
                format!("`copy_from` copies between views of one size: the source has {n} elements ({src_shape:?}), this view {want} ({dst_shape:?})"),
            ));
        }
        let edge = self.is_masked(src) || self.is_masked(view);
        if edge && src_shape != dst_shape {
            return Err(self.err(
                a[0],
                format!("`copy_from` between views of different shapes ({src_shape:?} and {dst_shape:?}) copies element `i` to element `i`, which an edge tile (a masked view) does not keep: copy between views of one shape"),
            ));
        }
        let mut tile = if self.is_masked(src) {
            self.ir(m, |b| b.lview_load_masked(src, Padding::Zero))?
        } else {
            self.ir(m, |b| b.lview_load(src))?
        };
        if src_shape != dst_shape {
            // Colexicographic order is row-major order of the reversed axes.
            let reversed = |shape: &[usize]| -> (Vec<usize>, Vec<usize>) {
                (
                    (0..shape.len()).rev().collect(),
                    shape.iter().rev().copied().collect(),
                )
            };
            let (perm, _) = reversed(&src_shape);
            let (back, dst_reversed) = reversed(&dst_shape);
            tile = self.ir(m, |b| {
                let t = b.permute(tile, &perm)?;
                let t = b.reshape(t, &dst_reversed)?;
                b.permute(t, &back)
            })?;
        }
        self.store_view(tile, view, m)?;
        Ok(Val::Unit)
    }

    /// Whether `view`'s type is a masked layout view (an edge tile).
    fn is_masked(&self, view: Value) -> bool {
        matches!(self.ty(view), Type::LayoutView(t) if t.masked)
    }

    /// Stores `tile` to every element of `view`: of an edge tile, to the
    /// elements in it (a masked store).
    fn store_view(&mut self, tile: Value, view: Value, m: &ExprMethodCall) -> syn::Result<()> {
        if self.is_masked(view) {
            self.ir(m, |b| b.lview_store_masked(tile, view))
        } else {
            self.ir(m, |b| b.lview_store(tile, view))
        }
    }

    /// The shape of the tile a load of layout view `view` gives: its modes'
    /// sizes.
    fn lview_shape(&self, view: Value, m: &ExprMethodCall) -> syn::Result<Vec<usize>> {
        match self.ty(view) {
            Type::LayoutView(t) => Ok(t
                .layout
                .modes()
                .iter()
                .map(|mode| usize::try_from(mode.size()).unwrap_or(0))
                .collect()),
            other => Err(self.err(m, format!("expected a layout view, found {other}"))),
        }
    }

    /// Per mode, a compile-time range `start..end`, or `..` for the whole mode.
    fn mode_ranges(&mut self, e: &Expr, layout: &Layout) -> syn::Result<Vec<(usize, usize)>> {
        let elems = self.array_elems(e, "the ranges")?;
        let mut out = Vec::new();
        for (k, x) in elems.into_iter().enumerate() {
            let Expr::Range(r) = x else {
                return Err(self.err(
                    x,
                    "each mode takes a range `start..end`, or `..` for all of it",
                ));
            };
            if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                return Err(self.err(x, "write an exclusive range `start..end`"));
            }
            let size = layout.mode(k).map_or(0, |m| m.size());
            let start = match &r.start {
                Some(s) => self.const_usize(s, "a range start")?,
                None => 0,
            };
            let end = match &r.end {
                Some(s) => self.const_usize(s, "a range end")?,
                None => usize::try_from(size).unwrap_or(0),
            };
            out.push((start, end));
        }
        Ok(out)
    }
}
