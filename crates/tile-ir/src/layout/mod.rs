//! CuTe-style layout algebra.
//!
//! A [`Layout`] `Shape:Stride` is a function from coordinates to offsets:
//! a 1-D index becomes a (hierarchical) coordinate colexicographically and
//! the coordinate's inner product with the stride is the offset. The
//! algebra builds new layouts from old ones, each an ordinary function on
//! integers:
//!
//! | operation | meaning |
//! |---|---|
//! | [`coalesce`], [`coalesce_by`] | fewest modes, same function |
//! | [`composition`], [`composition_tiler`] | `R(i) = A(B(i))` |
//! | [`complement`] | the layout of the offsets `A` misses |
//! | [`logical_divide`] and the zipped, tiled and flat forms | split into (tile, rest) |
//! | [`logical_product`], [`blocked_product`], [`raked_product`], … | repeat a block |
//! | [`right_inverse`], [`left_inverse`] | undo a layout |
//! | [`upcast`], [`downcast`], [`recast`] | change element width |
//! | [`Swizzle`], [`ComposedLayout`] | XOR bit permutations of offsets |
//!
//! Definitions follow CuTe (NVIDIA CUTLASS) with the project's choices in
//! `docs/layouts.md`. Every operation returns [`LayoutError`] instead of
//! panicking when its rule fails.

#![deny(missing_docs)]

mod coalesce;
mod complement;
mod composition;
mod coord;
mod divide;
mod error;
mod int_tuple;
mod inverse;
// The layout type lives in `layout/layout.rs`, one concept per file.
#[allow(clippy::module_inception)]
mod layout;
mod ordered;
mod parse;
mod product;
mod recast;
mod swizzle;
mod table;
mod tiler;

pub use coalesce::{coalesce, coalesce_by};
pub use complement::complement;
pub use composition::{composition, composition_tiler};
pub use coord::Coord;
pub use divide::{flat_divide, logical_divide, tiled_divide, zipped_divide};
pub use error::{LayoutError, Result};
pub use int_tuple::{shape_div, IntTuple};
pub use inverse::{left_inverse, right_inverse};
pub use layout::{crd2idx, idx2crd, Layout};
pub use ordered::make_ordered_layout;
pub use product::{
    blocked_product, flat_product, logical_product, raked_product, tile_to_shape, tiled_product,
    zipped_product,
};
pub use recast::{downcast, recast, upcast};
pub use swizzle::{ComposedLayout, Swizzle};
pub use tiler::Tiler;
