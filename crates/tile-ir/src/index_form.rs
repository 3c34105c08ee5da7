//! How an integer tile varies along one of its axes, whatever the
//! arguments: Triton's axis analysis (constancy and contiguity) for the
//! index tiles of `gather` and `scatter`. An index tile whose innermost
//! index runs with the element's coordinate, from a multiple of the vector
//! width, and whose other indices and mask do not change along that axis
//! addresses whole aligned vectors, which the GPU then reads and writes
//! with one predicate each, with no element-by-element path.
//!
//! Along axis `a`, a tile is
//!
//! * [`AxisForm::Uniform`]: equal along `a` (every element equals those
//!   that differ from it only in the coordinate along `a`);
//! * [`AxisForm::Coordinate`]: the element's coordinate along `a` plus a
//!   tile uniform along `a` whose elements are multiples of `2^zeros`;
//! * [`AxisForm::Unknown`]: anything else.
//!
//! from these rules (`U` uniform, `C(z)` a coordinate, `z(x)` the trailing
//! zero bits known of `x`'s elements):
//!
//! ```text
//! scalar, full, an axis of extent 1     U
//! iota along the last axis it counts on C(z(its stride over the others))
//! broadcast, expand                     U along a repeated axis, else the operand's
//! C(z) ± U                              C(min(z, z(U)))    (U + C(z) too)
//! an integer cast of C(z)               C(min(z, the new width))
//! any elementwise op of U only          U
//! ```
//!
//! Index arithmetic wraps modulo `2^bits`; a `C(z)` still holds, in every
//! group of `w ≤ 2^z` elements along `a` from a coordinate that is a
//! multiple of `w`, `w` consecutive values from a multiple of `w`: the
//! group's first value is a multiple of `w`, as `2^bits` is, so the group
//! cannot wrap in its middle.

use crate::divisibility::Divisibility;
use crate::dtype::DType;
use crate::function::{Function, ValueDef};
use crate::ops::{BinaryOp, OpKind};
use crate::types::Type;
use crate::Value;
use std::cell::RefCell;
use std::collections::HashMap;

/// How a tile varies along one axis (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisForm {
    /// Equal along the axis.
    Uniform,
    /// The coordinate along the axis plus a tile uniform along it whose
    /// elements are multiples of `2^zeros`.
    Coordinate {
        /// Trailing zero bits of the uniform part.
        zeros: u32,
    },
    /// Anything else.
    Unknown,
}

/// The axis forms of a function's tiles, computed on demand.
pub struct IndexForms<'f> {
    func: &'f Function,
    divisibility: Divisibility<'f>,
    /// Forms known so far, by value and axis.
    known: RefCell<HashMap<(Value, usize), AxisForm>>,
}

impl<'f> IndexForms<'f> {
    /// The analysis of `func`.
    pub fn new(func: &'f Function) -> Self {
        IndexForms {
            func,
            divisibility: Divisibility::new(func),
            known: RefCell::new(HashMap::new()),
        }
    }

    /// How `v` varies along its axis `axis` (a scalar is uniform along
    /// every axis).
    pub fn along(&self, v: Value, axis: usize) -> AxisForm {
        let dims = match self.func.ty(v) {
            Type::Tile(tile) => tile.shape.dims().to_vec(),
            Type::Scalar(_) => return AxisForm::Uniform,
            _ => return AxisForm::Unknown,
        };
        if let Some(&form) = self.known.borrow().get(&(v, axis)) {
            return form;
        }
        let form = match dims.get(axis) {
            None => AxisForm::Unknown,
            Some(1) => AxisForm::Uniform,
            Some(_) => self.derive(v, axis, &dims),
        };
        self.known.borrow_mut().insert((v, axis), form);
        form
    }

    /// The form of tile `v` of extents `dims` along `axis` from its
    /// definition.
    fn derive(&self, v: Value, axis: usize, dims: &[usize]) -> AxisForm {
        let ValueDef::Result { op, .. } = self.func.values[v].def else {
            return AxisForm::Unknown;
        };
        let op = self.func.op(op);
        let operand = |i: usize| op.operands.get(i).copied();
        let along = |i: usize| operand(i).map_or(AxisForm::Unknown, |x| self.along(x, axis));
        let all_uniform = || (0..op.operands.len()).all(|i| along(i) == AxisForm::Uniform);
        match &op.kind {
            OpKind::Full { .. } => AxisForm::Uniform,
            OpKind::Iota { dtype, .. } if dtype.is_int() => iota_along(dims, axis, *dtype),
            OpKind::Broadcast { .. } | OpKind::Expand { .. } => {
                let Some(x) = operand(0) else {
                    return AxisForm::Unknown;
                };
                let from = match self.func.ty(x) {
                    Type::Tile(tile) => tile.shape.dims().to_vec(),
                    Type::Scalar(_) => return AxisForm::Uniform,
                    _ => return AxisForm::Unknown,
                };
                // Numpy broadcasting aligns the operand's axes to the right.
                match (axis + from.len()).checked_sub(dims.len()) {
                    Some(k) if from[k] == dims[axis] => self.along(x, k),
                    _ => AxisForm::Uniform,
                }
            }
            OpKind::Binary(BinaryOp::Add) => match (along(0), along(1)) {
                (AxisForm::Uniform, AxisForm::Uniform) => AxisForm::Uniform,
                (AxisForm::Coordinate { zeros }, AxisForm::Uniform) => AxisForm::Coordinate {
                    zeros: zeros.min(operand(1).map_or(0, |x| self.zeros(x))),
                },
                (AxisForm::Uniform, AxisForm::Coordinate { zeros }) => AxisForm::Coordinate {
                    zeros: zeros.min(operand(0).map_or(0, |x| self.zeros(x))),
                },
                _ => AxisForm::Unknown,
            },
            OpKind::Binary(BinaryOp::Sub) => match (along(0), along(1)) {
                (AxisForm::Uniform, AxisForm::Uniform) => AxisForm::Uniform,
                (AxisForm::Coordinate { zeros }, AxisForm::Uniform) => AxisForm::Coordinate {
                    zeros: zeros.min(operand(1).map_or(0, |x| self.zeros(x))),
                },
                _ => AxisForm::Unknown,
            },
            OpKind::Cast { to } => match (along(0), operand(0).map(|x| self.func.ty(x).dtype())) {
                (AxisForm::Coordinate { zeros }, Some(from)) if from.is_int() && to.is_int() => {
                    AxisForm::Coordinate {
                        zeros: zeros.min(width(*to)),
                    }
                }
                (form, _) => uniform_or_unknown(form == AxisForm::Uniform),
            },
            OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Bitcast { .. } => uniform_or_unknown(all_uniform()),
            _ => AxisForm::Unknown,
        }
    }

    /// The trailing zero bits every element of integer `v` has: a scalar's
    /// from [`Divisibility`], a tile's through broadcasts, constants and
    /// the arithmetic the scalar analysis follows; 0 where unknown.
    fn zeros(&self, v: Value) -> u32 {
        if !matches!(self.func.ty(v), Type::Tile(_)) {
            return self.divisibility.divisor(v).trailing_zeros();
        }
        let Some(op) = self.func.defining_op(v) else {
            return 0;
        };
        let op = self.func.op(op);
        let of = |i: usize| op.operands.get(i).map_or(0, |&x| self.zeros(x));
        match &op.kind {
            OpKind::Full { value, .. } => match value.to_i128() {
                Some(0) => width(self.func.ty(v).dtype()),
                Some(c) => c.trailing_zeros(),
                None => 0,
            },
            OpKind::Broadcast { .. } | OpKind::Expand { .. } => of(0),
            OpKind::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::Min | BinaryOp::Max) => {
                of(0).min(of(1))
            }
            OpKind::Binary(BinaryOp::Mul) => of(0).saturating_add(of(1)),
            _ => 0,
        }
    }
}

/// An integer iota of extents `dims` along `axis`: each element holds its
/// row-major linear index `Σ c_k·s_k`, so along `axis` it is the coordinate
/// plus the other terms where the axis' stride `s_axis` is 1 (every later
/// extent 1), the other terms multiples of their strides.
fn iota_along(dims: &[usize], axis: usize, dtype: DType) -> AxisForm {
    if dims[axis + 1..].iter().any(|&d| d > 1) {
        return AxisForm::Unknown;
    }
    let mut zeros = width(dtype);
    let mut stride = 1usize;
    for k in (0..dims.len()).rev() {
        if k != axis && dims[k] > 1 {
            zeros = zeros.min(stride.trailing_zeros());
        }
        stride = stride.saturating_mul(dims[k]);
    }
    AxisForm::Coordinate { zeros }
}

/// `Uniform` where `uniform`, else `Unknown`.
fn uniform_or_unknown(uniform: bool) -> AxisForm {
    if uniform {
        AxisForm::Uniform
    } else {
        AxisForm::Unknown
    }
}

/// The bits of an integer dtype.
fn width(dtype: DType) -> u32 {
    8 * dtype.size_bytes() as u32
}
