//! `expand-fp4-pairs`: every `unpack_fp4` and `pack_fp4` rewritten as the
//! shifts, bitcasts and reshapes that define it, for the lowerings.
//!
//! `unpack_fp4 %x axis a` of `x: [.., n, ..]` inserts an axis of extent 1
//! after `a`, expands it to 2 (each byte twice), shifts the copies right
//! by 0 and 4 bits, reads the low four bits of each as `f4e2m1`, and merges
//! the two axes into one of `2n`. `pack_fp4 %y axis a` splits axis `a` of
//! `y: [.., 2n, ..]` into `[n, 2]`, reads each value's four bits as a
//! `u8`, shifts the second of each pair left by 4 and sums each pair (the
//! bits do not overlap, so the sum is their union).

use super::expansion::{expand_ops, Emitter};
use super::Pass;
use crate::dtype::DType;
use crate::function::{Function, Value};
use crate::ops::{BinaryOp, OpKind, ReduceKind};
use crate::types::{Shape, TileType, Type};

/// The `expand-fp4-pairs` pass.
pub struct ExpandFp4Pairs;

impl Pass for ExpandFp4Pairs {
    fn name(&self) -> &'static str {
        "expand-fp4-pairs"
    }

    fn run(&self, func: &mut Function) -> bool {
        expand_ops(func, &|emit, id| {
            let op = emit.func.op(id);
            let (kind, operand) = (op.kind.clone(), *op.operands.first()?);
            // An ill-typed op stays, for the verifier to name.
            let types = [emit.func.ty(operand)];
            crate::rules::infer(&kind, &types).ok()?;
            match kind {
                OpKind::UnpackFp4 { axis } => Some(unpack(emit, operand, axis)),
                OpKind::PackFp4 { axis } => Some(pack(emit, operand, axis)),
                _ => None,
            }
        })
    }
}

/// `dims` with the axis `at` of extent `extent` inserted.
fn inserted(dims: &[usize], at: usize, extent: usize) -> Vec<usize> {
    let mut out = dims.to_vec();
    out.insert(at, extent);
    out
}

/// The shifts of a pair's two values along axis `at` of a tile of `pairs`
/// dims (the pair axis of extent 2): 0 and 4 bits, as `u8`.
fn nibble_shifts(emit: &mut Emitter, pairs: &[usize], at: usize) -> Value {
    let mut dims = vec![1; pairs.len()];
    dims[at] = 2;
    emit.steps(&dims, 4, &Shape::new(pairs.to_vec()))
}

fn unpack(emit: &mut Emitter, x: Value, axis: usize) -> Value {
    let dims = emit.shape(x).dims().to_vec();
    let r = emit.reshape(x, &inserted(&dims, axis + 1, 1));
    let pairs = inserted(&dims, axis + 1, 2);
    let twice = emit.expand(r, &pairs);
    let shifts = nibble_shifts(emit, &pairs, axis + 1);
    let shifted = emit.binary(BinaryOp::Shr, twice, shifts);
    let values = emit.bitcast(shifted, DType::F4E2M1);
    let mut out = dims;
    out[axis] *= 2;
    emit.reshape(values, &out)
}

fn pack(emit: &mut Emitter, y: Value, axis: usize) -> Value {
    let mut dims = emit.shape(y).dims().to_vec();
    dims[axis] /= 2;
    let pairs = inserted(&dims, axis + 1, 2);
    let split = emit.reshape(y, &pairs);
    let bits = emit.bitcast(split, DType::U8);
    let shifts = nibble_shifts(emit, &pairs, axis + 1);
    let placed = emit.binary(BinaryOp::Shl, bits, shifts);
    let kind = OpKind::Reduce {
        kind: ReduceKind::Sum,
        axis: axis + 1,
        keepdim: false,
    };
    let ty = Type::Tile(TileType {
        shape: Shape::new(dims),
        dtype: DType::U8,
    });
    emit.op(kind, vec![placed], ty)
}

/// Whether `func` has an `unpack_fp4` or a `pack_fp4`.
pub(super) fn has_fp4_pairs(func: &Function) -> bool {
    func.find_op(|op| {
        matches!(op.kind, OpKind::UnpackFp4 { .. } | OpKind::PackFp4 { .. }).then_some(())
    })
    .is_some()
}
