//! Products on tensor cores that have no instruction for their operands:
//! rewritten, before layout assignment, into products of f16 tiles, which
//! every target with tensor cores multiplies, instead of chains of fused
//! multiply-adds unrolled per thread (tens of seconds to compile a
//! 64×128×128 tile, kilobytes of spills). Triton upcasts the same way.
//!
//! - **FP8** `tensor` dots where the target has an f16 instruction but no
//!   FP8 one of the format (sm_80 and sm_86, gfx1100, and gfx90a and
//!   gfx942, whose FP8 is the FNUZ variant), or none that takes the dot's
//!   shape on its warps (an FP8 `mma.sync` needs `K` a multiple of 32): each
//!   operand is cast to f16 right before the dot. The cast is exact (E4M3 and E5M2 values are f16
//!   values), so the products and their sums are the FP8 dot's: its result
//!   is the `tensor` precision's (docs/semantics.md §6).
//! - **i8** dots (exact, wrapping `i32`) with `K` at most [`I8_K`]: `c +
//!   cast(dot(cast(a, f16), cast(b, f16), 0), i32)`. Each product is an
//!   integer of at most 2¹⁴ in magnitude, so every partial sum of at most
//!   `I8_K` of them is an integer below 2²⁴, exact in the f32 accumulator
//!   in any order and grouping: the f32 result is the exact sum, its cast
//!   exact, and the wrapping `i32` addition of `c` the dot's.
//!
//! The loads feed the casts, so their tiles are loaded into registers and
//! staged converted, not copied by `cp.async` as stored.

use super::TensorCores;
use tile_ir::{
    BinaryOp, DType, DotPrecision, Function, OpId, OpKind, Region, Scalar, TileType, Type, Value,
};

/// The largest `K` of an i8 dot taken to f16 tensor cores: `K · 2¹⁴ ≤ 2²⁴`.
const I8_K: usize = 1024;

/// How a dot is widened.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Widening {
    /// FP8 operands cast to f16.
    Fp8,
    /// i8 operands cast to f16, the product added to `c` in `i32`.
    I8,
}

/// The tensor cores a lowering has, and its warps.
#[derive(Clone, Copy)]
pub(super) struct Cores {
    /// The instructions.
    pub(super) tensor_cores: TensorCores,
    /// Warps per block.
    pub(super) num_warps: u32,
}

/// `func` with its products widened where `cores` have no instruction
/// for them (see the module docs), or `None` where nothing changes.
pub(super) fn widened_products(func: &Function, cores: Cores) -> Option<Function> {
    cores.tensor_cores.family()?;
    let mut widened = func.clone();
    let mut body = std::mem::take(&mut widened.body);
    let changed = widen_region(&mut widened, &mut body, cores);
    widened.body = body;
    changed.then_some(widened)
}

/// Widens the dots of `region` and of the regions nested in it; whether
/// any changed.
fn widen_region(func: &mut Function, region: &mut Region, cores: Cores) -> bool {
    let mut changed = false;
    let mut ops = Vec::with_capacity(region.ops.len());
    for &id in &region.ops {
        let mut nested = std::mem::take(&mut func.ops[id].regions);
        for inner in &mut nested {
            changed |= widen_region(func, inner, cores);
        }
        func.ops[id].regions = nested;
        match widening(func, id, cores) {
            Some(Widening::Fp8) => {
                for which in 0..2 {
                    let operand = func.ops[id].operands[which];
                    let cast = cast_op(func, id, operand, DType::F16);
                    func.ops[id].operands[which] = func.ops[cast].results[0];
                    ops.push(cast);
                }
                changed = true;
            }
            Some(Widening::I8) => {
                ops.extend(widen_i8(func, id));
                changed = true;
                continue;
            }
            None => {}
        }
        ops.push(id);
    }
    region.ops = ops;
    changed
}

/// The ops that replace the i8 dot `id`: the casts, the f16 dot into a
/// zero f32 accumulator, its cast to `i32`, and `id` itself, now the
/// addition of `c` (so its result, and every use of it, stays).
fn widen_i8(func: &mut Function, id: OpId) -> Vec<OpId> {
    let [a, b, c] = [0, 1, 2].map(|i| func.ops[id].operands[i]);
    let (a16, b16) = (
        cast_op(func, id, a, DType::F16),
        cast_op(func, id, b, DType::F16),
    );
    let Type::Tile(acc) = func.ty(c).clone() else {
        unreachable!("the verifier typed the dot's accumulator as a tile");
    };
    let f32_tile = Type::Tile(TileType {
        dtype: DType::F32,
        ..acc.clone()
    });
    let zero = func.create_op(
        OpKind::Full {
            value: Scalar::F32(0.0),
            shape: acc.shape.clone(),
        },
        vec![],
        vec![f32_tile.clone()],
        vec![],
    );
    let operands = vec![
        func.ops[a16].results[0],
        func.ops[b16].results[0],
        func.ops[zero].results[0],
    ];
    let product = func.create_op(
        OpKind::Dot {
            precision: DotPrecision::Tensor,
        },
        operands,
        vec![f32_tile],
        vec![],
    );
    let sum = func.ops[product].results[0];
    let exact = cast_op(func, id, sum, acc.dtype);
    let loc = func.ops[id].loc.clone();
    for op in [zero, product] {
        func.ops[op].loc = loc.clone();
    }
    func.ops[id].kind = OpKind::Binary(BinaryOp::Add);
    func.ops[id].operands = vec![c, func.ops[exact].results[0]];
    vec![a16, b16, zero, product, exact, id]
}

/// A new `cast` of `value` to `dtype`, at the source location of op `at`.
fn cast_op(func: &mut Function, at: OpId, value: Value, dtype: DType) -> OpId {
    let Type::Tile(tile) = func.ty(value).clone() else {
        unreachable!("dot operands are tiles");
    };
    let ty = Type::Tile(TileType { dtype, ..tile });
    let cast = func.create_op(OpKind::Cast { to: dtype }, vec![value], vec![ty], vec![]);
    func.ops[cast].loc = func.ops[at].loc.clone();
    cast
}

/// How op `id` is widened on `cores`, if it is a dot that is.
fn widening(func: &Function, id: OpId, cores: Cores) -> Option<Widening> {
    let op = func.op(id);
    let (OpKind::Dot { precision }, [a, b, _]) = (&op.kind, op.operands.as_slice()) else {
        return None;
    };
    let (da, db) = (func.ty(*a).dtype(), func.ty(*b).dtype());
    let k = func.ty(*a).tile_shape()?.dims().get(1).copied()?;
    match (precision, da) {
        (DotPrecision::Tensor, _) if da.is_f8() && da == db => {
            let fp8 = cores.tensor_cores.fp8()
                && crate::layout_assign::mma_dot(func, id, cores.num_warps, cores.tensor_cores)
                    .is_some();
            (!fp8).then_some(Widening::Fp8)
        }
        (DotPrecision::Ieee, DType::I8) if db == DType::I8 && k <= I8_K => Some(Widening::I8),
        _ => None,
    }
}
