//! What the expanding passes share: each op a rule picks is replaced by the
//! ops that define it, placed where it stood and carrying its location.

use super::rewrite::{put_regions, take_regions, Substitution};
use crate::dtype::DType;
use crate::function::{Function, OpId, Region, Value};
use crate::ops::{BinaryOp, OpKind};
use crate::scalar::Scalar;
use crate::types::{Shape, TileType, Type};

/// Replaces every op for which `rule` returns its expansion's result (the
/// ops it emitted through the [`Emitter`] take its place); ops for which it
/// returns `None` stay. Says whether anything changed.
pub(super) fn expand_ops(
    func: &mut Function,
    rule: &dyn Fn(&mut Emitter, OpId) -> Option<Value>,
) -> bool {
    let mut subst = Substitution::default();
    let body = std::mem::take(&mut func.body);
    func.body = expand_region(func, body, rule, &mut subst);
    subst.apply(func);
    !subst.is_empty()
}

fn expand_region(
    func: &mut Function,
    region: Region,
    rule: &dyn Fn(&mut Emitter, OpId) -> Option<Value>,
    subst: &mut Substitution,
) -> Region {
    let mut ops = Vec::with_capacity(region.ops.len());
    for id in region.ops {
        let regions = take_regions(func, id)
            .into_iter()
            .map(|nested| expand_region(func, nested, rule, subst))
            .collect();
        put_regions(func, id, regions);
        let mut expansion = Vec::new();
        let mut emit = Emitter {
            func,
            ops: &mut expansion,
            loc: id,
        };
        match rule(&mut emit, id) {
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

/// Appends the ops of one expansion, each with the location of the op it
/// replaces.
pub(super) struct Emitter<'f> {
    pub(super) func: &'f mut Function,
    ops: &'f mut Vec<OpId>,
    loc: OpId,
}

impl Emitter<'_> {
    /// The shape of a tile (empty for a scalar).
    pub(super) fn shape(&self, v: Value) -> Shape {
        self.func
            .ty(v)
            .tile_shape()
            .cloned()
            .unwrap_or_else(|| Shape::new(Vec::new()))
    }

    /// The extents of a rank-2 tile (the rule checked the rank).
    pub(super) fn dims2(&self, v: Value) -> [usize; 2] {
        let shape = self.shape(v);
        let dims = shape.dims();
        [dims[0], dims[dims.len() - 1]]
    }

    /// `x` converted to `to` (itself when it is of that dtype).
    pub(super) fn cast(&mut self, x: Value, to: DType) -> Value {
        if self.func.ty(x).dtype() == to {
            return x;
        }
        self.elementwise(OpKind::Cast { to }, vec![x], to)
    }

    /// The bits of `x` read as `to`.
    pub(super) fn bitcast(&mut self, x: Value, to: DType) -> Value {
        self.elementwise(OpKind::Bitcast { to }, vec![x], to)
    }

    /// `op` on two tiles of one type.
    pub(super) fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let dtype = self.func.ty(a).dtype();
        self.elementwise(OpKind::Binary(op), vec![a, b], dtype)
    }

    /// A tile of `dims` whose element at `i` along `axis` is `step · i`
    /// (the other axes of extent 1), of `dtype`, broadcast to `to`.
    pub(super) fn steps(&mut self, dims: &[usize], step: u8, to: &Shape) -> Value {
        let shape = Shape::new(dims.to_vec());
        let tile = |dtype| {
            Type::Tile(TileType {
                shape: shape.clone(),
                dtype,
            })
        };
        let iota = self.op(
            OpKind::Iota {
                shape: shape.clone(),
                dtype: DType::U8,
            },
            vec![],
            tile(DType::U8),
        );
        let value = Scalar::U8(step);
        let full = self.op(
            OpKind::Full {
                value,
                shape: shape.clone(),
            },
            vec![],
            tile(DType::U8),
        );
        let stepped = self.binary(BinaryOp::Mul, iota, full);
        self.movement(OpKind::Broadcast { shape: to.clone() }, stepped, to.clone())
    }

    /// `x` reshaped to `dims`.
    pub(super) fn reshape(&mut self, x: Value, dims: &[usize]) -> Value {
        let shape = Shape::new(dims.to_vec());
        self.movement(
            OpKind::Reshape {
                shape: shape.clone(),
            },
            x,
            shape,
        )
    }

    /// `x` with its axes of extent 1 grown to `dims`.
    pub(super) fn expand(&mut self, x: Value, dims: &[usize]) -> Value {
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
    pub(super) fn transpose(&mut self, x: Value) -> Value {
        let [rows, cols] = self.dims2(x);
        let perm = vec![1, 0];
        self.movement(OpKind::Permute { perm }, x, Shape::new(vec![cols, rows]))
    }

    /// A movement op on `x` whose result has `shape`.
    pub(super) fn movement(&mut self, kind: OpKind, x: Value, shape: Shape) -> Value {
        let dtype = self.func.ty(x).dtype();
        self.op(kind, vec![x], Type::Tile(TileType { shape, dtype }))
    }

    /// An elementwise op whose result has the first operand's shape and
    /// `dtype`.
    fn elementwise(&mut self, kind: OpKind, operands: Vec<Value>, dtype: DType) -> Value {
        let shape = self.shape(operands[0]);
        self.op(kind, operands, Type::Tile(TileType { shape, dtype }))
    }

    /// Appends an op of one result of type `ty`.
    pub(super) fn op(&mut self, kind: OpKind, operands: Vec<Value>, ty: Type) -> Value {
        let op = self.func.create_op(kind, operands, vec![ty], Vec::new());
        self.func.ops[op].loc = self.func.op(self.loc).loc.clone();
        self.ops.push(op);
        self.func.op(op).results[0]
    }
}
