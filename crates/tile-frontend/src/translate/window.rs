//! Windows of tensors: `t.offset([o0, o1])` (the tensor from element
//! `(o0, o1)` on) and `t.window([o0, o1], [n0, n1])` (at most `n_k`
//! elements along axis `k` from there), which `partition_view` cuts into
//! tiles like a whole tensor: `partition_view(x.offset([row0, 0]), [BM,
//! D])` reads rows `row0 + i·BM ..` of a packed batch. The view's
//! index space, masks and `num_tiles` are the window's; its extent along
//! axis `k` is `min(dim_k − o_k, n_k)`, 0 past the end (docs/ir.md).

use super::{Translator, Val};
use syn::{Expr, ExprMethodCall};
use tile_ir::{BinaryOp, DType, Scalar, Value};

/// A tensor seen from an element offset, not yet cut into tiles.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    /// The tensor parameter.
    pub(crate) tensor: Value,
    /// The offset along each axis (integer scalars).
    pub(crate) offsets: Vec<Value>,
    /// The extent along each axis (integer scalars), for `window`.
    pub(crate) extents: Option<Vec<Value>>,
}

/// The window a partition view was made from.
#[derive(Clone, Debug)]
pub(crate) struct ViewWindow {
    /// The offsets, as `i32` values.
    pub(crate) offsets: Vec<Value>,
    /// The extents given to `window`, as `i32` values (none for `offset`).
    pub(crate) extents: Option<Vec<Value>>,
}

impl Translator<'_> {
    /// `t.offset([o, ..])` or `t.window([o, ..], [n, ..])` on a tensor of
    /// `rank` axes.
    pub(crate) fn tensor_window(
        &mut self,
        tensor: Value,
        rank: usize,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let bounded = m.method == "window";
        let usage = if bounded {
            "window([offset, ..], [extent, ..])"
        } else {
            "offset([offset, ..])"
        };
        let a = self.argn(args, if bounded { 2 } else { 1 }, usage, m)?;
        let mut lists = Vec::new();
        for (e, what) in a.iter().zip(["the offsets", "the extents"]) {
            let elems = self.array_elems(e, what)?;
            if elems.len() != rank {
                return Err(self.err(
                    *e,
                    format!("{what} of a window of a tensor of rank {rank} are {rank} integers, found {}", elems.len()),
                ));
            }
            let mut values = Vec::new();
            for &x in &elems {
                let v = self.expr(x)?;
                if let Val::Int(i) = v {
                    if i < 0 {
                        return Err(
                            self.err(x, format!("{what} of a window are at least 0, found {i}"))
                        );
                    }
                }
                let v = self.data(&v, None, x)?;
                match self.ty(v) {
                    tile_ir::Type::Scalar(d) if d.is_int() => values.push(v),
                    other => {
                        return Err(self.err(
                            x,
                            format!("{what} of a window are integer scalars, found {other}"),
                        ))
                    }
                }
            }
            lists.push(values);
        }
        let extents = bounded.then(|| lists.pop()).flatten();
        let offsets = lists.pop().unwrap_or_default();
        Ok(Val::Window(Box::new(Window {
            tensor,
            offsets,
            extents,
        })))
    }

    /// `partition_view(window, [shape])`.
    pub(crate) fn window_view(
        &mut self,
        window: &Window,
        shape: &[usize],
        node: &dyn quote::ToTokens,
    ) -> syn::Result<Value> {
        let offsets = self.as_i32(&window.offsets, node)?;
        let extents = match &window.extents {
            Some(e) => Some(self.as_i32(e, node)?),
            None => None,
        };
        let view = self.ir(node, |b| {
            b.partition_view_window(window.tensor, shape, &offsets, extents.as_deref())
        })?;
        self.views.insert(view, window.tensor);
        self.windows.insert(view, ViewWindow { offsets, extents });
        Ok(view)
    }

    /// The extent of `view` along `axis` (`i32`): the tensor's, or for a
    /// window `min(max(dim − o, 0), n)`.
    pub(crate) fn view_extent(
        &mut self,
        view: Value,
        tensor: Value,
        axis: usize,
        node: &dyn quote::ToTokens,
    ) -> syn::Result<Value> {
        let dim = self.ir(node, |b| b.dim(tensor, axis))?;
        let Some(w) = self.windows.get(&view).cloned() else {
            return Ok(dim);
        };
        let zero = self.ir(node, |b| b.constant(Scalar::I32(0)))?;
        let room = self.ir(node, |b| b.binary(BinaryOp::Sub, dim, w.offsets[axis]))?;
        let room = self.ir(node, |b| b.binary(BinaryOp::Max, room, zero))?;
        match w.extents {
            Some(n) => self.ir(node, |b| b.binary(BinaryOp::Min, room, n[axis])),
            None => Ok(room),
        }
    }

    /// The offset of `view`'s window along `axis` (`i32`), or `None` for a
    /// view of the whole tensor.
    pub(crate) fn view_offset(&self, view: Value, axis: usize) -> Option<Value> {
        self.windows.get(&view).map(|w| w.offsets[axis])
    }

    /// Whether `view` is a window with extents (`window`), whose elements
    /// outside it may lie inside the tensor.
    pub(crate) fn view_is_bounded(&self, view: Value) -> bool {
        self.windows.get(&view).is_some_and(|w| w.extents.is_some())
    }

    fn as_i32(&mut self, values: &[Value], node: &dyn quote::ToTokens) -> syn::Result<Vec<Value>> {
        values
            .iter()
            .map(|&v| match self.ty(v).dtype() {
                DType::I32 => Ok(v),
                _ => self.ir(node, |b| b.cast(v, DType::I32)),
            })
            .collect()
    }
}

/// The description of a window in errors.
pub(crate) fn describe_window(w: &Window) -> String {
    let what = if w.extents.is_some() {
        "window"
    } else {
        "offset"
    };
    format!(
        "a tensor's {what} of rank {} (cut it into tiles with `partition_view(t.{what}(..), [shape])`)",
        w.offsets.len()
    )
}
