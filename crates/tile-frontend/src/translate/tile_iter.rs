//! Mojo's `tiled_iterator` on layout views, as a Rust iterator in a `for`:
//!
//! ```text
//! for a in va.tiled_iterator([BM, BK], 1, pid_m, 0) { .. }
//! for (a, b) in va.tiled_iterator([BM, BK], 1, pid_m, 0)
//!     .zip(vb.tiled_iterator([BK, BN], 0, 0, pid_n)).take(k_tiles) { .. }
//! ```
//!
//! `v.tiled_iterator([extents], axis, coords..)` yields the views
//! `v.tile([extents], coords)` with the coordinate along `axis` counting up
//! from its start, until the last tile of the view along that axis (an
//! edge tile, masked, when the extent does not divide the mode, as `tile`
//! gives). `.zip(other)` walks two
//! in step and `.take(n)` stops after `n` tiles; the loop runs the fewest
//! of their counts. It lowers to a counted `for` whose body derives each
//! view from the counter: no IR op of its own.

use super::{Translator, Val};
use syn::{Expr, ExprMethodCall};
use tile_ir::{BinaryOp, DType, Type, Value};

/// One `tiled_iterator`: the view, the tile extents, the axis it walks and
/// its starting tile coordinates.
pub(crate) struct TileIter {
    view: Value,
    shape: Vec<usize>,
    axis: usize,
    start: Vec<Value>,
    /// How many tiles it yields: the tiles of the mode from the start.
    count: Value,
}

/// The iterators a `for` walks in step, with the tuple nesting of `zip`.
pub(crate) enum TileItems {
    /// One iterator (its index in the list).
    One(usize),
    /// `a.zip(b)`: a pair.
    Pair(Box<TileItems>, Box<TileItems>),
}

/// What a `for` over tiled iterators walks: the iterators, how their items
/// nest, and the `take(n)` bounds.
pub(crate) struct TileWalk {
    pub(crate) iters: Vec<TileIter>,
    pub(crate) items: TileItems,
    takes: Vec<Value>,
}

/// Whether `e` is a `tiled_iterator` chain (`.tiled_iterator(..)` under any
/// `.zip(..)` and `.take(..)`).
pub(crate) fn is_tile_walk(e: &Expr) -> bool {
    match e {
        Expr::MethodCall(m) if m.method == "tiled_iterator" => true,
        Expr::MethodCall(m) if m.method == "zip" || m.method == "take" => is_tile_walk(&m.receiver),
        Expr::Paren(p) => is_tile_walk(&p.expr),
        _ => false,
    }
}

impl Translator<'_> {
    /// The walk of the `tiled_iterator` chain `e` (see [`is_tile_walk`]).
    pub(crate) fn tile_walk(&mut self, e: &Expr) -> syn::Result<TileWalk> {
        let (mut iters, mut takes) = (Vec::new(), Vec::new());
        let items = self.walk_items(e, &mut iters, &mut takes)?;
        Ok(TileWalk {
            iters,
            items,
            takes,
        })
    }

    /// The items of the chain `e`, its iterators pushed to `iters` and its
    /// `take` bounds to `takes`.
    fn walk_items(
        &mut self,
        e: &Expr,
        iters: &mut Vec<TileIter>,
        takes: &mut Vec<Value>,
    ) -> syn::Result<TileItems> {
        match e {
            Expr::Paren(p) => self.walk_items(&p.expr, iters, takes),
            Expr::MethodCall(m) if m.method == "take" => {
                let args: Vec<&Expr> = m.args.iter().collect();
                let a = self.argn(&args, 1, "take(n)", m)?;
                let n = self.expr(a[0])?;
                let n = self.data(&n, Some(DType::I32), a[0])?;
                if self.ty(n) != Type::Scalar(DType::I32) {
                    return Err(self.err(
                        a[0],
                        format!(
                            "`take` counts tiles with an i32 scalar, found {}",
                            self.ty(n)
                        ),
                    ));
                }
                takes.push(n);
                self.walk_items(&m.receiver, iters, takes)
            }
            Expr::MethodCall(m) if m.method == "zip" => {
                let args: Vec<&Expr> = m.args.iter().collect();
                let a = self.argn(&args, 1, "zip(iterator)", m)?;
                if !is_tile_walk(a[0]) {
                    return Err(self.err(
                        a[0],
                        "`zip` pairs tiled iterators: `va.tiled_iterator(..).zip(vb.tiled_iterator(..))`",
                    ));
                }
                let left = self.walk_items(&m.receiver, iters, takes)?;
                let right = self.walk_items(a[0], iters, takes)?;
                Ok(TileItems::Pair(Box::new(left), Box::new(right)))
            }
            Expr::MethodCall(m) => {
                let iter = self.tiled_iterator(m)?;
                iters.push(iter);
                Ok(TileItems::One(iters.len() - 1))
            }
            other => Err(self.err(other, "expected `v.tiled_iterator(..)`")),
        }
    }

    /// `v.tiled_iterator([extents], axis, coords..)`.
    fn tiled_iterator(&mut self, m: &ExprMethodCall) -> syn::Result<TileIter> {
        let recv = self.expr(&m.receiver)?;
        let view = match recv {
            Val::Ir(v) if matches!(self.ty(v), Type::LayoutView(_)) => v,
            other => {
                return Err(self.err(
                    &m.receiver,
                    format!(
                        "`tiled_iterator` walks the tiles of a layout view, found {}",
                        self.describe(&other)
                    ),
                ))
            }
        };
        let Type::LayoutView(vt) = self.ty(view) else {
            return Err(self.err(&m.receiver, "expected a layout view"));
        };
        let args: Vec<&Expr> = m.args.iter().collect();
        let usage = "tiled_iterator([extents], axis, coords..)";
        let rank = vt.layout.rank();
        if args.len() != 2 + rank {
            return Err(self.err(
                m,
                format!(
                    "`{usage}` takes the tile extents, the axis it walks and a starting coordinate per mode ({rank}), found {} argument(s)",
                    args.len()
                ),
            ));
        }
        let shape = self.shape_arg(args[0])?;
        let axis = self.axis_arg(args[1], rank, "the layout view")?;
        let start = self.indices(&args[2..], "a tile coordinate")?;
        let mode = vt.layout.mode(axis).map_or(0, |l| l.size());
        let Some(&extent) = shape.get(axis) else {
            return Err(self.err(
                args[0],
                format!(
                    "`tiled_iterator` takes one tile extent per mode ({rank}), found {}",
                    shape.len()
                ),
            ));
        };
        // Positive (`shape_arg`); the last tile is an edge tile when the
        // extent does not divide the mode.
        let extent = extent as i64;
        let tiles = (mode + extent - 1) / extent;
        let tiles = self.data(&Val::Int(i128::from(tiles)), Some(DType::I32), m)?;
        let first = self.cast_index(start[axis], DType::I32, m)?;
        let count = self.ir(m, |b| b.binary(BinaryOp::Sub, tiles, first))?;
        Ok(TileIter {
            view,
            shape,
            axis,
            start,
            count,
        })
    }

    /// The number of steps of `walk`: the fewest of its iterators' counts
    /// and its `take`s.
    pub(crate) fn walk_steps(&mut self, walk: &TileWalk, node: &Expr) -> syn::Result<Value> {
        let mut n = walk.iters[0].count;
        for &other in walk.iters[1..].iter().map(|i| &i.count).chain(&walk.takes) {
            n = self.ir(node, |b| b.binary(BinaryOp::Min, n, other))?;
        }
        Ok(n)
    }

    /// The items of step `k` (an `i32` counter) of `walk`: a view per
    /// iterator, nested as the `zip`s nest.
    pub(crate) fn walk_item(&mut self, walk: &TileWalk, k: Value, node: &Expr) -> syn::Result<Val> {
        let mut views = Vec::with_capacity(walk.iters.len());
        for it in &walk.iters {
            let mut coords = it.start.clone();
            let dtype = self.ty(coords[it.axis]).dtype();
            let step = self.cast_index(k, dtype, node)?;
            coords[it.axis] =
                self.ir(node, |b| b.binary(BinaryOp::Add, it.start[it.axis], step))?;
            let tile = self.ir(node, |b| b.lview_tile(it.view, &it.shape, &coords))?;
            if let Some(tensor) = self.views.get(&it.view).copied() {
                self.views.insert(tile, tensor);
            }
            views.push(tile);
        }
        Ok(nest(&walk.items, &views))
    }

    /// `x` (an integer scalar) as `dtype`.
    fn cast_index(
        &mut self,
        x: Value,
        dtype: DType,
        node: &dyn quote::ToTokens,
    ) -> syn::Result<Value> {
        if self.ty(x).dtype() == dtype {
            return Ok(x);
        }
        self.ir(node, |b| b.cast(x, dtype))
    }
}

/// The views of one step nested as the `zip`s nest.
fn nest(items: &TileItems, views: &[Value]) -> Val {
    match items {
        TileItems::One(i) => Val::Ir(views[*i]),
        TileItems::Pair(a, b) => Val::Tuple(vec![nest(a, views), nest(b, views)]),
    }
}
