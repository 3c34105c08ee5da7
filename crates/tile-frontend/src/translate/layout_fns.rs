//! CuTe's layout algebra in kernels, evaluated while translating: layouts
//! are compile-time values (`make_layout(shape, stride)`, `row_major(shape)`,
//! `col_major(shape)`) that the algebra's functions combine
//! (`composition`, `complement`, `coalesce`, `right_inverse`,
//! `left_inverse`, `logical_product`, `blocked_product`, `raked_product`,
//! `logical_divide`, `zipped_divide`, `tiled_divide`, `upcast`,
//! `downcast`), and that `layout_view(t, layout)`, `v.compose(layout)` and
//! `v.distribute(layout, tid)` take. A layout's `size()`, `cosize()`,
//! `rank()` and its value at an index, `l.at(i)`, are compile-time integers.
//! Every function is `tile_ir::layout`'s, so a kernel computes the layouts
//! the library does; an error names the function and the layouts.

use super::{Translator, Val};
use syn::{Expr, ExprCall, ExprMethodCall};
use tile_ir::layout::{self, Layout, Tiler};

/// The layout functions a kernel can call.
const LAYOUT_FNS: [&str; 16] = [
    "make_layout",
    "row_major",
    "col_major",
    "composition",
    "complement",
    "coalesce",
    "right_inverse",
    "left_inverse",
    "logical_product",
    "blocked_product",
    "raked_product",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "upcast",
    "downcast",
];

/// Whether `name` is a layout function.
pub(super) fn is_layout_fn(name: &str) -> bool {
    LAYOUT_FNS.contains(&name)
}

impl Translator<'_> {
    /// A call of a layout function: the layout it computes.
    pub(crate) fn layout_call(
        &mut self,
        name: &str,
        c: &ExprCall,
        args: &[&Expr],
    ) -> syn::Result<Val> {
        let result = match name {
            "make_layout" => {
                let a = self.argn(args, 2, "make_layout(shape, stride)", c)?;
                return self.layout_arg(a[0], a[1], c).map(Val::Layout);
            }
            "row_major" | "col_major" => {
                let a = self.argn(args, 1, &format!("{name}(shape)"), c)?;
                let shape = self.int_tuple(a[0], "a layout's shape")?;
                if name == "row_major" {
                    Layout::row_major(shape)
                } else {
                    Layout::column_major(shape)
                }
            }
            "coalesce" | "right_inverse" | "left_inverse" => {
                let a = self.argn(args, 1, &format!("{name}(layout)"), c)?;
                let l = self.layout_value(a[0])?;
                match name {
                    "coalesce" => Ok(layout::coalesce(&l)),
                    "right_inverse" => layout::right_inverse(&l),
                    _ => layout::left_inverse(&l),
                }
            }
            "complement" | "upcast" | "downcast" => {
                let a = self.argn(args, 2, &format!("{name}(layout, n)"), c)?;
                let l = self.layout_value(a[0])?;
                let n = self.const_int(a[1], "an integer")?;
                let n = i64::try_from(n)
                    .map_err(|_| self.err(a[1], format!("{n} does not fit in i64")))?;
                match name {
                    "complement" => layout::complement(&l, n),
                    "upcast" => layout::upcast(&l, n),
                    _ => layout::downcast(&l, n),
                }
            }
            "composition" | "blocked_product" | "raked_product" => {
                let a = self.argn(args, 2, &format!("{name}(a, b)"), c)?;
                let (x, y) = (self.layout_value(a[0])?, self.layout_value(a[1])?);
                match name {
                    "composition" => layout::composition(&x, &y),
                    "blocked_product" => layout::blocked_product(&x, &y),
                    _ => layout::raked_product(&x, &y),
                }
            }
            _ => {
                let usage = format!("{name}(layout, tiler)");
                let a = self.argn(args, 2, &usage, c)?;
                let l = self.layout_value(a[0])?;
                let tiler = self.tiler_value(a[1])?;
                match name {
                    "logical_product" => layout::logical_product(&l, &tiler),
                    "logical_divide" => layout::logical_divide(&l, &tiler),
                    "zipped_divide" => layout::zipped_divide(&l, &tiler),
                    _ => layout::tiled_divide(&l, &tiler),
                }
            }
        };
        result.map(Val::Layout).map_err(|e| {
            // The library's messages mostly start with the function's name.
            let text = e.to_string();
            match text.strip_prefix(&format!("{name}: ")) {
                Some(rest) => self.err(c, format!("`{name}`: {rest}")),
                None => self.err(c, format!("`{name}`: {text}")),
            }
        })
    }

    /// The layout an expression evaluates to.
    pub(crate) fn layout_value(&mut self, e: &Expr) -> syn::Result<Layout> {
        match self.expr(e)? {
            Val::Layout(l) => Ok(l),
            other => Err(self.err(
                e,
                format!(
                    "expected a layout (`make_layout(shape, stride)`, `row_major(shape)`, ..), found {}",
                    self.describe(&other)
                ),
            )),
        }
    }

    /// A tiler: a layout, or a shape int-tuple (an integer `n` is `n:1`, a
    /// tuple applies by mode).
    fn tiler_value(&mut self, e: &Expr) -> syn::Result<Tiler> {
        if matches!(e, Expr::Tuple(_) | Expr::Array(_) | Expr::Lit(_)) {
            let shape = self.int_tuple(e, "a tiler's shape")?;
            return Tiler::from_shape(&shape)
                .map_err(|err| self.err(e, format!("invalid tiler: {err}")));
        }
        match self.expr(e)? {
            Val::Layout(l) => Ok(Tiler::Layout(l)),
            Val::Int(n) => {
                let n = i64::try_from(n).map_err(|_| self.err(e, "a tiler too large"))?;
                Tiler::from_shape(&layout::IntTuple::Int(n))
                    .map_err(|err| self.err(e, format!("invalid tiler: {err}")))
            }
            other => Err(self.err(
                e,
                format!(
                    "a tiler is a layout or a shape `(4, 8)`, found {}",
                    self.describe(&other)
                ),
            )),
        }
    }

    /// A method of a layout value: `size()`, `cosize()`, `rank()`, `at(i)`.
    pub(crate) fn layout_method(&mut self, l: &Layout, m: &ExprMethodCall) -> syn::Result<Val> {
        let name = m.method.to_string();
        let args: Vec<&Expr> = m.args.iter().collect();
        let n = match name.as_str() {
            "size" | "cosize" | "rank" => {
                self.argn(&args, 0, &format!("{name}()"), m)?;
                match name.as_str() {
                    "size" => l.size(),
                    "cosize" => l.cosize(),
                    _ => l.rank() as i64,
                }
            }
            "at" => {
                let a = self.argn(&args, 1, "at(index)", m)?;
                let i = self.const_int(a[0], "a layout index")?;
                let i = i64::try_from(i).map_err(|_| self.err(a[0], "an index too large"))?;
                if i < 0 || i >= l.size() {
                    return Err(self.err(
                        a[0],
                        format!("index {i} is outside the layout {l} of size {}", l.size()),
                    ));
                }
                l.call(i)
            }
            _ => {
                return Err(self.err(
                    &m.method,
                    format!("no method `{name}` on the layout {l}; a layout has size(), cosize(), rank() and at(i)"),
                ))
            }
        };
        Ok(Val::Int(i128::from(n)))
    }
}
