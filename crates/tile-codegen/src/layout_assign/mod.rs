//! Layout assignment: a distributed layout for every tile value.
//!
//! This first version gives every tile value of shape `S` the default
//! blocked layout of `S` ([`DistLayout::blocked`]) for the specialization's
//! warp count, with [`vector_width`]`(S)` consecutive elements per thread
//! along the innermost axis, so that a load or store can move them in one
//! vector access. Whether it may is a runtime question (the tensor's strides
//! and base address are runtime values): the lowering emits both forms behind
//! a uniform contiguity and alignment test. Because two values of one shape
//! always share a layout, elementwise ops never need a conversion; every op
//! whose result element depends on other coordinates of its operand
//! (movement, reduction, scan, dot) goes through shared memory.

mod blocked;

pub(crate) use blocked::row_major;
pub use blocked::{DistLayout, LayoutBuildError};

use std::collections::BTreeMap;
use tile_ir::{Function, Type, Value};

/// The layouts of one function's tile values.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutPlan {
    /// The warps of a block.
    pub num_warps: u32,
    /// The layout of each tile value, by value.
    pub values: BTreeMap<Value, DistLayout>,
}

/// Assigns a layout to every tile value of `func` (results and region
/// arguments) for blocks of `num_warps` warps.
pub fn assign(func: &Function, num_warps: u32) -> Result<LayoutPlan, LayoutBuildError> {
    let mut values = BTreeMap::new();
    for (value, info) in func.values.iter() {
        if let Type::Tile(t) = &info.ty {
            let dims = t.shape.dims();
            values.insert(
                value,
                DistLayout::blocked(dims, num_warps, vector_width(dims))?,
            );
        }
    }
    Ok(LayoutPlan { num_warps, values })
}

/// The elements per thread along the innermost axis of a tile of `shape`:
/// 4 (16 bytes of f32) when the innermost extent is a multiple of 4, else 2
/// when it is even, else 1. The extent must be a multiple so that every
/// partition's first element, hence every vector, is aligned when the
/// tensor's rows are.
pub fn vector_width(shape: &[usize]) -> usize {
    match shape.last() {
        Some(n) if n % 4 == 0 => 4,
        Some(n) if n % 2 == 0 => 2,
        _ => 1,
    }
}
