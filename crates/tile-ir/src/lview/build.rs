//! Builder methods of the layout-view ops; each is typed by
//! [`super::rules`] as it is added.

use super::LViewOp;
use crate::builder::{BuildError, Builder};
use crate::function::Value;
use crate::layout::{Layout, Swizzle};
use crate::ops::{OpKind, Padding};
use crate::types::Shape;

impl Builder {
    fn lview1(&mut self, op: LViewOp, operands: &[Value]) -> Result<Value, BuildError> {
        self.op1(OpKind::LView(op), operands)
    }

    /// `layout_view`: `tensor` seen through `layout`, base 0.
    pub fn layout_view(&mut self, tensor: Value, layout: &Layout) -> Result<Value, BuildError> {
        let layout = layout.clone();
        self.lview1(LViewOp::Make { layout }, &[tensor])
    }

    /// `lview_tile`: the tile of extents `shape` at tile coordinate `index`.
    pub fn lview_tile(
        &mut self,
        view: Value,
        shape: &[usize],
        index: &[Value],
    ) -> Result<Value, BuildError> {
        let mut operands = vec![view];
        operands.extend_from_slice(index);
        let shape = shape.to_vec();
        self.lview1(LViewOp::Tile { shape }, &operands)
    }

    /// `lview_split`: part `index` of `parts` along mode `axis`.
    pub fn lview_split(
        &mut self,
        view: Value,
        axis: usize,
        parts: usize,
        index: Value,
    ) -> Result<Value, BuildError> {
        self.lview1(LViewOp::Split { axis, parts }, &[view, index])
    }

    /// `lview_vectorize`: modes `(outer..., vector...)` for vectors of `shape`.
    pub fn lview_vectorize(&mut self, view: Value, shape: &[usize]) -> Result<Value, BuildError> {
        let shape = shape.to_vec();
        self.lview1(LViewOp::Vectorize { shape }, &[view])
    }

    /// `lview_slice`: the range `start..stop` of each mode.
    pub fn lview_slice(
        &mut self,
        view: Value,
        ranges: &[(usize, usize)],
    ) -> Result<Value, BuildError> {
        let ranges = ranges.to_vec();
        self.lview1(LViewOp::Slice { ranges }, &[view])
    }

    /// `lview_transpose`: mode `k` of the result is mode `perm[k]`.
    pub fn lview_transpose(&mut self, view: Value, perm: &[usize]) -> Result<Value, BuildError> {
        let perm = perm.to_vec();
        self.lview1(LViewOp::Transpose { perm }, &[view])
    }

    /// `lview_reshape`: the elements in row-major order with modes of `shape`.
    pub fn lview_reshape(&mut self, view: Value, shape: &[usize]) -> Result<Value, BuildError> {
        let shape = Shape::new(shape);
        self.lview1(LViewOp::Reshape { shape }, &[view])
    }

    /// `lview_compose`: the view's layout composed with `layout`.
    pub fn lview_compose(&mut self, view: Value, layout: &Layout) -> Result<Value, BuildError> {
        let layout = layout.clone();
        self.lview1(LViewOp::Compose { layout }, &[view])
    }

    /// `lview_swizzle`: the view with its offsets swizzled.
    pub fn lview_swizzle(&mut self, view: Value, swizzle: Swizzle) -> Result<Value, BuildError> {
        self.lview1(LViewOp::Swizzle { swizzle }, &[view])
    }

    /// `lview_coalesce`: the view's layout coalesced.
    pub fn lview_coalesce(&mut self, view: Value) -> Result<Value, BuildError> {
        self.lview1(LViewOp::Coalesce, &[view])
    }

    /// `lview_distribute`: the elements thread `tid` of `threads` owns.
    pub fn lview_distribute(
        &mut self,
        view: Value,
        threads: &Layout,
        tid: Value,
    ) -> Result<Value, BuildError> {
        let threads = threads.clone();
        self.lview1(LViewOp::Distribute { threads }, &[view, tid])
    }

    /// `lview_load`: every element of the view, as a tile.
    pub fn lview_load(&mut self, view: Value) -> Result<Value, BuildError> {
        self.lview1(LViewOp::Load, &[view])
    }

    /// `lview_load_masked`: as `lview_load`, padding elements outside the
    /// tensor's element space.
    pub fn lview_load_masked(
        &mut self,
        view: Value,
        padding: Padding,
    ) -> Result<Value, BuildError> {
        self.lview1(LViewOp::LoadMasked { padding }, &[view])
    }

    /// `lview_store`: writes `tile` to every element of the view.
    pub fn lview_store(&mut self, tile: Value, view: Value) -> Result<(), BuildError> {
        self.op(OpKind::LView(LViewOp::Store), &[tile, view])
            .map(drop)
    }

    /// `lview_store_masked`: as `lview_store`, skipping elements outside the
    /// tensor's element space.
    pub fn lview_store_masked(&mut self, tile: Value, view: Value) -> Result<(), BuildError> {
        self.op(OpKind::LView(LViewOp::StoreMasked), &[tile, view])
            .map(drop)
    }
}
