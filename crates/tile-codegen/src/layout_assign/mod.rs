//! Layout assignment: a distributed layout for every tile value.
//!
//! This first version gives every tile value of shape `S` the default
//! blocked layout of `S` ([`DistLayout::blocked`]) for the specialization's
//! warp count, with one element per thread along the innermost axis (vector
//! width 1: tensor strides are runtime values, so 16-byte contiguity cannot be
//! proven at compile time yet). Because two values of one shape always share
//! a layout, elementwise ops never need a conversion; every op whose result
//! element depends on other coordinates of its operand (movement, reduction,
//! scan, dot) goes through shared memory in the lowering.

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
            values.insert(value, DistLayout::blocked(t.shape.dims(), num_warps, 1)?);
        }
    }
    Ok(LayoutPlan { num_warps, values })
}
