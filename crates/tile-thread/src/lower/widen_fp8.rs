//! FP8 products on tensor cores without FP8 instructions (sm_80's and
//! sm_86's `mma.sync`, RDNA 3's WMMA, CDNA's MFMA, whose FP8 is another
//! format): each FP8 operand of a `tensor` dot is cast to f16 right before
//! it, so that the dot runs on the f16 instruction instead of as a chain
//! of fused multiply-adds unrolled per thread (tens of seconds to compile
//! a 64×128×128 tile, kilobytes of spills), as Triton upcasts them.
//!
//! The cast is exact (E4M3 and E5M2 values are f16 values), so the
//! products and their sums are those of the FP8 dot: the result is the
//! `tensor` precision's (docs/semantics.md §6), as on sm_89's FP8
//! instruction. The loads feed the casts, so their tiles are loaded into
//! registers and staged converted, not copied by `cp.async` as stored.

use super::TensorCores;
use tile_ir::{DType, DotPrecision, Function, OpId, OpKind, Region, TileType, Type};

/// `func` with the FP8 operands of its `tensor` dots cast to f16 where
/// `tensor_cores` has an f16 instruction but no FP8 one, or `None` where
/// nothing changes.
pub(super) fn widened_fp8_dots(func: &Function, tensor_cores: TensorCores) -> Option<Function> {
    if tensor_cores.fp8() || tensor_cores.family().is_none() {
        return None;
    }
    let mut widened = func.clone();
    let mut body = std::mem::take(&mut widened.body);
    let changed = widen_region(&mut widened, &mut body);
    widened.body = body;
    changed.then_some(widened)
}

/// Widens the dots of `region` and of the regions nested in it; whether
/// any changed.
fn widen_region(func: &mut Function, region: &mut Region) -> bool {
    let mut changed = false;
    let mut ops = Vec::with_capacity(region.ops.len());
    for &id in &region.ops {
        let mut nested = std::mem::take(&mut func.ops[id].regions);
        for inner in &mut nested {
            changed |= widen_region(func, inner);
        }
        func.ops[id].regions = nested;
        if fp8_tensor_dot(func, id) {
            for which in 0..2 {
                let operand = func.ops[id].operands[which];
                let Type::Tile(tile) = func.ty(operand).clone() else {
                    continue;
                };
                let ty = Type::Tile(TileType {
                    dtype: DType::F16,
                    ..tile
                });
                let cast = func.create_op(OpKind::Cast { to: DType::F16 }, vec![operand], vec![ty], vec![]);
                func.ops[cast].loc = func.ops[id].loc.clone();
                func.ops[id].operands[which] = func.ops[cast].results[0];
                ops.push(cast);
            }
            changed = true;
        }
        ops.push(id);
    }
    region.ops = ops;
    changed
}

/// Whether op `id` is a `tensor` dot of two FP8 tiles of one format.
fn fp8_tensor_dot(func: &Function, id: OpId) -> bool {
    let op = func.op(id);
    let (OpKind::Dot { precision }, [a, b, _]) = (&op.kind, op.operands.as_slice()) else {
        return false;
    };
    let (da, db) = (func.ty(*a).dtype(), func.ty(*b).dtype());
    *precision == DotPrecision::Tensor && da.is_f8() && da == db
}
