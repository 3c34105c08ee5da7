//! `expand-scaled-dots`: every `dot_scaled` rewritten as the ops that
//! define it, for targets without a block-scaled tensor-core instruction.
//!
//! Each scaled operand `x: [R, K]` with scales `s: [R, K / G]` becomes
//! `cast(cast(x, f32) × cast(s', f32), compute)`, where `s'` repeats each
//! scale over its group (`reshape` to `[R, K / G, 1]`, `expand` to
//! `[R, K / G, G]`, `reshape` to `[R, K]`; `b`'s scales, stored
//! `[N, K / G]`, are first permuted to `[K / G, N]` and repeated along the
//! first axis). The scales move as stored, one byte each, and widen last.
//! The product of an element and a scale is exact in `f32` (both are short
//! floats, and the scales are powers of two or `f8e4m3` values), so the one
//! rounding, to the compute dtype, is the definition's. The operands then
//! meet in a `dot` of precision `tensor`.

use super::rewrite::{put_regions, take_regions, Substitution};
use super::Pass;
use crate::dtype::DType;
use crate::function::{Function, OpId, Region, Value};
use crate::ops::{BinaryOp, DotPrecision, OpKind};
use crate::scaled::{compute_dtype, scale_group, ScaledOperands};
use crate::types::{Shape, TileType, Type};

/// The `expand-scaled-dots` pass.
pub struct ExpandScaledDots;

impl Pass for ExpandScaledDots {
    fn name(&self) -> &'static str {
        "expand-scaled-dots"
    }

    fn run(&self, func: &mut Function) -> bool {
        let mut subst = Substitution::default();
        let body = std::mem::take(&mut func.body);
        func.body = expand_region(func, body, &mut subst);
        subst.apply(func);
        !subst.is_empty()
    }
}

fn expand_region(func: &mut Function, region: Region, subst: &mut Substitution) -> Region {
    let mut ops = Vec::with_capacity(region.ops.len());
    for id in region.ops {
        let regions = take_regions(func, id)
            .into_iter()
            .map(|nested| expand_region(func, nested, subst))
            .collect();
        put_regions(func, id, regions);
        if func.op(id).kind != OpKind::DotScaled {
            ops.push(id);
            continue;
        }
        let mut expansion = Vec::new();
        let mut emit = Emitter {
            func,
            ops: &mut expansion,
            loc: id,
        };
        // An ill-typed `dot_scaled` stays, for the verifier to name.
        match emit.scaled_dot(id) {
            Some(result) => {
                ops.extend(expansion);
                subst.replace(func.op(id).results[0], result);
            }
            None => ops.push(id),
        }
    }
    Region {
        args: region.args,
        ops,
    }
}

/// Appends the ops of one expansion, each with the location of the
/// `dot_scaled` it replaces.
struct Emitter<'f> {
    func: &'f mut Function,
    ops: &'f mut Vec<OpId>,
    loc: OpId,
}

impl Emitter<'_> {
    /// The expansion of `dot_scaled` `id`, its result; `None` when the op
    /// breaks its typing rule.
    fn scaled_dot(&mut self, id: OpId) -> Option<Value> {
        let operands = self.func.op(id).operands.clone();
        let types: Vec<&Type> = operands.iter().map(|&v| self.func.ty(v)).collect();
        crate::rules::infer(&OpKind::DotScaled, &types).ok()?;
        let dtypes: Vec<DType> = types.iter().map(|t| t.dtype()).collect();
        let pos = ScaledOperands::locate(&dtypes).ok()?;
        let compute = compute_dtype(dtypes[pos.a], dtypes[pos.b]);
        let a = self.operand(
            operands[pos.a],
            pos.a_scale.map(|i| operands[i]),
            false,
            compute,
        );
        let b = self.operand(
            operands[pos.b],
            pos.b_scale.map(|i| operands[i]),
            true,
            compute,
        );
        let c = operands[pos.c];
        let ty = self.func.ty(c).clone();
        let precision = DotPrecision::Tensor;
        Some(self.op(OpKind::Dot { precision }, vec![a, b, c], ty))
    }

    /// One operand scaled and rounded to `compute`; `transposed` for `b`,
    /// whose scales are stored `[N, K / G]` against its `[K, N]`.
    fn operand(
        &mut self,
        x: Value,
        scale: Option<Value>,
        transposed: bool,
        compute: DType,
    ) -> Value {
        let Some(scale) = scale else {
            return self.cast(x, compute);
        };
        let group = scale_group(self.func.ty(scale).dtype()).unwrap_or(1);
        let repeated = if transposed {
            // [N, G] → [G, N] → [G, 1, N] → [G, group, N] → [K, N].
            let s = self.transpose(scale);
            let [groups, cols] = self.dims2(s);
            let s = self.reshape(s, &[groups, 1, cols]);
            let s = self.expand(s, &[groups, group, cols]);
            self.reshape(s, &[groups * group, cols])
        } else {
            // [M, G] → [M, G, 1] → [M, G, group] → [M, K].
            let [rows, groups] = self.dims2(scale);
            let s = self.reshape(scale, &[rows, groups, 1]);
            let s = self.expand(s, &[rows, groups, group]);
            self.reshape(s, &[rows, groups * group])
        };
        let wide = self.cast(x, DType::F32);
        let s = self.cast(repeated, DType::F32);
        let ty = Type::Tile(TileType {
            shape: self.shape(x),
            dtype: DType::F32,
        });
        let scaled = self.op(OpKind::Binary(BinaryOp::Mul), vec![wide, s], ty);
        self.cast(scaled, compute)
    }
}

impl Emitter<'_> {
    /// The extents of a rank-2 tile (the rule checked the rank).
    fn dims2(&self, v: Value) -> [usize; 2] {
        let shape = self.shape(v);
        let dims = shape.dims();
        [dims[0], dims[dims.len() - 1]]
    }

    fn shape(&self, v: Value) -> Shape {
        self.func
            .ty(v)
            .tile_shape()
            .cloned()
            .unwrap_or_else(|| Shape::new(Vec::new()))
    }

    fn cast(&mut self, x: Value, to: DType) -> Value {
        if self.func.ty(x).dtype() == to {
            return x;
        }
        let ty = Type::Tile(TileType {
            shape: self.shape(x),
            dtype: to,
        });
        self.op(OpKind::Cast { to }, vec![x], ty)
    }

    fn reshape(&mut self, x: Value, dims: &[usize]) -> Value {
        let shape = Shape::new(dims.to_vec());
        self.movement(
            OpKind::Reshape {
                shape: shape.clone(),
            },
            x,
            shape,
        )
    }

    fn expand(&mut self, x: Value, dims: &[usize]) -> Value {
        let shape = Shape::new(dims.to_vec());
        self.movement(
            OpKind::Expand {
                shape: shape.clone(),
            },
            x,
            shape,
        )
    }

    /// The transpose of a rank-2 tile.
    fn transpose(&mut self, x: Value) -> Value {
        let [rows, cols] = self.dims2(x);
        let perm = vec![1, 0];
        self.movement(OpKind::Permute { perm }, x, Shape::new(vec![cols, rows]))
    }

    /// A movement op on `x` whose result has `shape`.
    fn movement(&mut self, kind: OpKind, x: Value, shape: Shape) -> Value {
        let dtype = self.func.ty(x).dtype();
        self.op(kind, vec![x], Type::Tile(TileType { shape, dtype }))
    }

    fn op(&mut self, kind: OpKind, operands: Vec<Value>, ty: Type) -> Value {
        let op = self.func.create_op(kind, operands, vec![ty], Vec::new());
        self.func.ops[op].loc = self.func.op(self.loc).loc.clone();
        self.ops.push(op);
        self.func.op(op).results[0]
    }
}

/// `func` with its `dot_scaled`s expanded, or `None` when it has none: how
/// a lowering without block-scaled instructions takes a kernel.
pub fn expanded_scaled_dots(func: &Function) -> Option<Function> {
    func.find_op(|op| (op.kind == OpKind::DotScaled).then_some(()))?;
    let mut expanded = func.clone();
    ExpandScaledDots.run(&mut expanded);
    Some(expanded)
}
