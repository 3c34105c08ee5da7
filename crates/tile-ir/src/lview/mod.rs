//! Layout views: the memory of a tensor parameter seen through a static CuTe
//! [`Layout`], and the ops that derive, load and store them (Mojo
//! `LayoutTensor`'s `tile`, `split`, `vectorize`, `slice`, `transpose`,
//! `reshape`, `composition`, `coalesce` and `distribute`, and CuTe's
//! swizzled layouts).
//!
//! A view value is a tensor argument, a static layout (in its type, see
//! [`crate::types::LayoutViewType`]) and a runtime base offset: the element
//! at natural coordinate `c` is at element offset `base + layout(c)` of the
//! tensor's element space. Each derived view's layout comes from the layout
//! algebra in [`mod@derive`]; the typing rules are in [`rules`] and the meaning
//! in the interpreter. See "Layout views" in `docs/ir.md`.

mod build;
pub mod derive;
pub mod rules;

use crate::function::{Function, Value, ValueDef};
use crate::layout::{Layout, Swizzle};
use crate::ops::{OpKind, Padding};
use crate::text::syntax::{
    Decimal, Extents, Ints, LayoutText, Modes, PadValue, Parts, ShapeOf, SwizzleText, TileExtents,
    VectorExtents, ViewRanges,
};
use crate::types::Shape;

crate::ops::table::op_table! {
/// A layout-view op, with its static attributes; operands are listed in each
/// variant's doc comment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LViewOp {
    /// `layout_view %t <layout>`: the tensor `%t` seen through `layout`, with
    /// base 0.
    Make {
        /// The view's layout.
        layout: Layout as LayoutText,
    } = "layout_view %tensor $layout",
    /// `lview_tile %v [t0, ...] [%i0, ...]` (Mojo `tile`): the tile of shape
    /// `[t0, ...]` at tile coordinate `(i0, ...)`; one extent and one index
    /// per mode.
    Tile {
        /// The tile extent of each mode.
        shape: Vec<usize> as Ints<TileExtents>,
    } = "lview_tile %view $shape [%index*]",
    /// `lview_split %v axis <a> parts <n> [%i]` (Mojo `split(count, idx)`):
    /// part `i` of `n` equal parts along mode `a`.
    Split {
        /// The mode split.
        axis: usize as Decimal,
        /// The number of parts.
        parts: usize as Parts,
    } = "lview_split %view axis $axis $parts [%index*]",
    /// `lview_vectorize %v [v0, ...]` (Mojo `vectorize`): modes
    /// `(outer..., vector...)`, so a load yields the vectors as trailing axes.
    Vectorize {
        /// The vector extent of each mode.
        shape: Vec<usize> as Ints<VectorExtents>,
    } = "lview_vectorize %view $shape",
    /// `lview_slice %v [s0:e0, ...]` (Mojo `slice`): the range `s:e` (step 1)
    /// of each mode.
    Slice {
        /// Per mode, the half-open range of 1-D indices kept.
        ranges: Vec<(usize, usize)> as ViewRanges,
    } = "lview_slice %view $ranges",
    /// `lview_transpose %v [p0, ...]` (Mojo `transpose`): mode `k` of the
    /// result is mode `perm[k]` of the operand.
    Transpose {
        /// A permutation of the modes.
        perm: Vec<usize> as Ints<Modes>,
    } = "lview_transpose %view $perm",
    /// `lview_reshape %v [d0, ...]` (Mojo `reshape`): the same elements in
    /// row-major coordinate order, with modes of the given sizes.
    Reshape {
        /// The new mode sizes.
        shape: Shape as ShapeOf<Extents>,
    } = "lview_reshape %view $shape",
    /// `lview_compose %v <layout>` (Mojo `composition`): the view's layout
    /// composed with `layout`.
    Compose {
        /// The right operand of the composition.
        layout: Layout as LayoutText,
    } = "lview_compose %view $layout",
    /// `lview_coalesce %v` (Mojo `coalesce`): the view's layout coalesced.
    Coalesce = "lview_coalesce %view",
    /// `lview_distribute %v <threads> %tid` (Mojo `distribute`): the elements
    /// owned by thread `tid` of the thread layout, cyclically.
    Distribute {
        /// The thread layout: thread coordinate to thread id.
        threads: Layout as LayoutText,
    } = "lview_distribute %view $threads %thread",
    /// `lview_swizzle %v Sw<b,m,s>` (CuTe's swizzled layout,
    /// `ComposedLayout(swizzle, base, layout)`): the same view with its
    /// offsets swizzled, the element at `c` at `swizzle(base + layout(c))`.
    Swizzle {
        /// The swizzle.
        swizzle: Swizzle as SwizzleText,
    } = "lview_swizzle %view $swizzle",
    /// `lview_load %v`: every element of the view, as a tile.
    Load = "lview_load %view",
    /// `lview_load_masked %v pad(<padding>)`: as `lview_load`, elements
    /// outside the tensor's element space replaced by the padding.
    LoadMasked {
        /// The value of elements outside the element space.
        padding: Padding as PadValue,
    } = "lview_load_masked %view pad($padding)",
    /// `lview_store %x, %v`: writes a tile to every element of the view.
    Store = "lview_store %tile, %view",
    /// `lview_store_masked %x, %v`: as `lview_store`, skipping elements
    /// outside the tensor's element space.
    StoreMasked = "lview_store_masked %tile, %view",
}
}

impl LViewOp {
    /// Whether the op writes memory (the stores).
    pub fn writes_memory(&self) -> bool {
        matches!(self, LViewOp::Store | LViewOp::StoreMasked)
    }

    /// Whether the op reads memory (the loads); every other op only computes
    /// a view and is pure.
    pub fn reads_memory(&self) -> bool {
        matches!(self, LViewOp::Load | LViewOp::LoadMasked { .. })
    }
}

/// The tensor that `view` reads and writes: follows a layout view back
/// through the ops that derived it to the tensor operand of its
/// `layout_view` (or, for a partition view, of its `partition_view`);
/// `None` for any other value. The view operand of every store (`store`,
/// `store_masked`, `lview_store`, `lview_store_masked`) is operand 1.
pub fn viewed_tensor(func: &Function, view: Value) -> Option<Value> {
    let mut value = view;
    // Each step goes to an earlier definition; the bound only guards
    // malformed IR against a cycle.
    for _ in 0..=func.ops.len() {
        let ValueDef::Result { op, .. } = func.values.get(value)?.def else {
            return None;
        };
        let op = func.ops.get(op)?;
        let first = *op.operands.first()?;
        match &op.kind {
            OpKind::PartitionView { .. } | OpKind::LView(LViewOp::Make { .. }) => {
                return Some(first)
            }
            OpKind::LView(k) if !k.reads_memory() && !k.writes_memory() => value = first,
            _ => return None,
        }
    }
    None
}

/// The parameter a view is of: its tensor's, or for a tensor of an array
/// (`get_tensor`) the array's, as a launch checks what it may write.
pub fn viewed_param(func: &Function, view: Value) -> Option<usize> {
    tensor_param(func, viewed_tensor(func, view)?)
}

/// The parameter a tensor value is: itself, or for a tensor of an array
/// (`get_tensor`) the array.
pub fn tensor_param(func: &Function, tensor: Value) -> Option<usize> {
    let tensor = match func.values.get(tensor)?.def {
        ValueDef::Result { op, .. } if func.ops.get(op)?.kind == OpKind::GetTensor => {
            *func.ops.get(op)?.operands.first()?
        }
        _ => tensor,
    };
    match func.values.get(tensor)?.def {
        ValueDef::Param(index) => Some(index),
        _ => None,
    }
}
