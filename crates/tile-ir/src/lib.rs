//! The tile IR: the program representation every stage of `tile` shares.
//!
//! A [`Function`] is a kernel run once per program instance over a grid. Its
//! values are scalars (uniform across the instance), tiles (static shape and
//! dtype), global tensors (runtime extents and strides) and partition views.
//! Control flow is structured (`for`, `if`) and block-uniform: conditions and
//! bounds are scalars. Ops live in an arena and are named by typed handles;
//! see `docs/ir.md` for the text form and the meaning of every op.

// The IR and its interpreter need no `unsafe` (host buffers are aligned in
// safe code, see `interp::buffer`); keep it that way.
#![forbid(unsafe_code)]

pub mod arena;
pub mod assertion;
pub mod builder;
pub mod device_print;
pub mod divisibility;
pub mod dtype;
pub mod eval;
pub mod f8;
pub mod format;
pub mod function;
pub mod index_form;
pub mod interp;
pub mod layout;
pub mod location;
pub mod lview;
pub mod mx;
pub mod names;
mod narrow;
pub mod ops;
pub mod passes;
pub mod rules;
pub mod samples;
pub mod scalar;
pub mod scaled;
pub mod text;
pub mod types;
pub mod verify;

pub use dtype::DType;
pub use function::{Function, Op, OpId, Param, Region, Value, ValueDef, ValueInfo};
pub use location::Location;
pub use lview::LViewOp;
pub use names::ValueNames;
pub use ops::{
    ArgKind, AtomicOp, BinaryOp, CmpPred, DotPrecision, MemOrder, MemScope, OpFamily, OpKind,
    Padding, ReduceKind, Route, ScanKind, SliceRange, UnaryOp,
};
pub use scalar::Scalar;
pub use types::{LayoutViewType, PartitionViewType, Shape, TensorType, TileType, Type};
