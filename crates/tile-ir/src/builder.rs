//! Building kernels in code, with every op typed by [`crate::rules`] as it is
//! created.
//!
//! ```
//! use tile_ir::builder::Builder;
//! use tile_ir::{BinaryOp, DType, Padding, TensorType, Type};
//!
//! let mut b = Builder::new("vector_add");
//! let tensor = Type::Tensor(TensorType::new(DType::F32, 1));
//! let (x, y, out) = (b.param("x", tensor.clone()), b.param("y", tensor.clone()), b.param("out", tensor));
//! let pid = b.program_id(0)?;
//! let (vx, vy, vo) = (b.partition_view(x, &[1024])?, b.partition_view(y, &[1024])?, b.partition_view(out, &[1024])?);
//! let sum = {
//!     let a = b.load_masked(vx, &[pid], Padding::Zero)?;
//!     let c = b.load_masked(vy, &[pid], Padding::Zero)?;
//!     b.binary(BinaryOp::Add, a, c)?
//! };
//! b.store_masked(sum, vo, &[pid])?;
//! let kernel = b.finish()?;
//! assert_eq!(kernel.params.len(), 3);
//! # Ok::<(), tile_ir::builder::BuildError>(())
//! ```

use crate::dtype::DType;
use crate::function::{Function, Region, Value};
use crate::location::Location;
use crate::ops::{
    ArgKind, BinaryOp, CmpPred, DotPrecision, MemOrder, MemScope, OpKind, Padding, ReduceKind,
    ScanKind, SliceRange, UnaryOp,
};
use crate::rules;
use crate::scalar::Scalar;
use crate::types::{Shape, Type};
use crate::verify::{self, VerifyError};

mod indexed;
mod regions;

pub use indexed::AtomicAccess;

/// A rule broken while building, or a verifier error from [`Builder::finish`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// An op's operands broke its typing rule.
    #[error("{op}({operands}): {message}")]
    Rule {
        /// The op's name.
        op: &'static str,
        /// The operand types, comma-separated.
        operands: String,
        /// The broken rule.
        message: String,
    },
    /// The finished kernel failed verification.
    #[error(transparent)]
    Verify(#[from] VerifyError),
}

/// Builds one kernel, region by region.
#[derive(Debug)]
pub struct Builder {
    func: Function,
    /// The regions being filled, innermost last; the bottom one is the body.
    open: Vec<Region>,
    /// The location given to the ops built from now on.
    loc: Option<Location>,
}

impl Builder {
    /// Starts a kernel named `name` with an empty body.
    pub fn new(name: impl Into<String>) -> Self {
        Builder {
            func: Function::new(name),
            open: vec![Region::default()],
            loc: None,
        }
    }

    /// Gives the ops built from now on the location `loc` and returns the
    /// one they had (to restore it).
    pub fn set_location(&mut self, loc: Option<Location>) -> Option<Location> {
        std::mem::replace(&mut self.loc, loc)
    }

    /// Adds a kernel parameter.
    pub fn param(&mut self, name: impl Into<String>, ty: Type) -> Value {
        self.func.add_param(name, ty)
    }

    /// The type of a value built so far.
    pub fn ty(&self, value: Value) -> &Type {
        self.func.ty(value)
    }

    /// Appends an op of `kind` to the innermost open region, typing its
    /// results by the op's rule, and returns them.
    pub fn op(&mut self, kind: OpKind, operands: &[Value]) -> Result<Vec<Value>, BuildError> {
        let types = self.infer(&kind, operands)?;
        Ok(self.append(kind, operands.to_vec(), types, Vec::new()))
    }

    /// Appends an op with exactly one result and returns it.
    pub fn op1(&mut self, kind: OpKind, operands: &[Value]) -> Result<Value, BuildError> {
        let name = kind.name();
        let results = self.op(kind, operands)?;
        match results.as_slice() {
            [one] => Ok(*one),
            _ => Err(self.rule_error(
                name,
                operands,
                format!("has {} results, not 1", results.len()),
            )),
        }
    }

    /// Finishes the kernel and verifies it.
    pub fn finish(mut self) -> Result<Function, BuildError> {
        self.func.body = self.open.swap_remove(0);
        verify::verify(&self.func)?;
        Ok(self.func)
    }

    /// `program_id axis`.
    pub fn program_id(&mut self, axis: u8) -> Result<Value, BuildError> {
        self.op1(OpKind::ProgramId { axis }, &[])
    }

    /// `num_programs axis`.
    pub fn num_programs(&mut self, axis: u8) -> Result<Value, BuildError> {
        self.op1(OpKind::NumPrograms { axis }, &[])
    }

    /// A scalar constant.
    pub fn constant(&mut self, value: Scalar) -> Result<Value, BuildError> {
        self.op1(OpKind::Constant { value }, &[])
    }

    /// A tile of `shape` filled with `value`.
    pub fn full(&mut self, value: Scalar, shape: &[usize]) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Full {
                value,
                shape: Shape::new(shape),
            },
            &[],
        )
    }

    /// A tile of `shape` holding each element's row-major index.
    pub fn iota(&mut self, shape: &[usize], dtype: DType) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Iota {
                shape: Shape::new(shape),
                dtype,
            },
            &[],
        )
    }

    /// An elementwise op of one operand.
    pub fn unary(&mut self, op: UnaryOp, x: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::Unary(op), &[x])
    }

    /// An elementwise op of two operands of one type.
    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::Binary(op), &[a, b])
    }

    /// An elementwise comparison.
    pub fn cmp(&mut self, pred: CmpPred, a: Value, b: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::Cmp(pred), &[a, b])
    }

    /// `cond ? a : b` elementwise.
    pub fn select(&mut self, cond: Value, a: Value, b: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::Select, &[cond, a, b])
    }

    /// `a * b + c` with one rounding.
    pub fn fma(&mut self, a: Value, b: Value, c: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::Fma, &[a, b, c])
    }

    /// Elementwise conversion to `to`.
    pub fn cast(&mut self, x: Value, to: DType) -> Result<Value, BuildError> {
        self.op1(OpKind::Cast { to }, &[x])
    }

    /// Elementwise reinterpretation of the bits as `to` (of the same width).
    pub fn bitcast(&mut self, x: Value, to: DType) -> Result<Value, BuildError> {
        self.op1(OpKind::Bitcast { to }, &[x])
    }

    /// Numpy broadcast of a scalar or tile to `shape`.
    pub fn broadcast(&mut self, x: Value, shape: &[usize]) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Broadcast {
                shape: Shape::new(shape),
            },
            &[x],
        )
    }

    /// The same elements in another shape.
    pub fn reshape(&mut self, x: Value, shape: &[usize]) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Reshape {
                shape: Shape::new(shape),
            },
            &[x],
        )
    }

    /// Axis permutation: result axis `i` is operand axis `perm[i]`.
    pub fn permute(&mut self, x: Value, perm: &[usize]) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Permute {
                perm: perm.to_vec(),
            },
            &[x],
        )
    }

    /// Repeats axes of extent 1 to `shape`.
    pub fn expand(&mut self, x: Value, shape: &[usize]) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Expand {
                shape: Shape::new(shape),
            },
            &[x],
        )
    }

    /// Reverses the listed axes.
    pub fn flip(&mut self, x: Value, axes: &[usize]) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Flip {
                axes: axes.to_vec(),
            },
            &[x],
        )
    }

    /// Per axis, the elements `start, start+step, ...` below `stop`.
    pub fn slice(
        &mut self,
        x: Value,
        start: &[usize],
        stop: &[usize],
        step: &[usize],
    ) -> Result<Value, BuildError> {
        if start.len() != stop.len() || start.len() != step.len() {
            return Err(self.rule_error(
                "slice",
                &[x],
                format!(
                    "needs as many starts, stops and steps, found {}, {} and {}",
                    start.len(),
                    stop.len(),
                    step.len()
                ),
            ));
        }
        let ranges = (0..start.len())
            .map(|a| SliceRange {
                start: start[a],
                stop: stop[a],
                step: step[a],
            })
            .collect();
        let kind = OpKind::Slice { ranges };
        self.op1(kind, &[x])
    }

    /// Surrounds a tile with `value`.
    pub fn pad(
        &mut self,
        x: Value,
        low: &[usize],
        high: &[usize],
        value: Scalar,
    ) -> Result<Value, BuildError> {
        let kind = OpKind::Pad {
            low: low.to_vec(),
            high: high.to_vec(),
            value,
        };
        self.op1(kind, &[x])
    }

    /// Concatenation along `axis`.
    pub fn cat(&mut self, parts: &[Value], axis: usize) -> Result<Value, BuildError> {
        self.op1(OpKind::Cat { axis }, parts)
    }

    /// The FP4 (E2M1) pairs packed in the `u8` tile `x` along `axis`, as
    /// `f4e2m1` values (`unpack_fp4`).
    pub fn unpack_fp4(&mut self, x: Value, axis: usize) -> Result<Value, BuildError> {
        self.op1(OpKind::UnpackFp4 { axis }, &[x])
    }

    /// The `f4e2m1` tile `x` packed two values to a `u8` along `axis`
    /// (`pack_fp4`).
    pub fn pack_fp4(&mut self, x: Value, axis: usize) -> Result<Value, BuildError> {
        self.op1(OpKind::PackFp4 { axis }, &[x])
    }

    /// A reduction along `axis`.
    pub fn reduce(
        &mut self,
        kind: ReduceKind,
        x: Value,
        axis: usize,
        keepdim: bool,
    ) -> Result<Value, BuildError> {
        self.op1(
            OpKind::Reduce {
                kind,
                axis,
                keepdim,
            },
            &[x],
        )
    }

    /// The `i32` index of the first maximum or minimum along `axis`.
    pub fn arg_reduce(
        &mut self,
        kind: ArgKind,
        x: Value,
        axis: usize,
        keepdim: bool,
    ) -> Result<Value, BuildError> {
        self.op1(
            OpKind::ArgReduce {
                kind,
                axis,
                keepdim,
            },
            &[x],
        )
    }

    /// An inclusive scan along `axis`.
    pub fn scan(&mut self, kind: ScanKind, x: Value, axis: usize) -> Result<Value, BuildError> {
        self.op1(OpKind::Scan { kind, axis }, &[x])
    }

    /// `a · b + c` with the operands' default precision
    /// ([`DotPrecision::default_for`]).
    pub fn dot(&mut self, a: Value, b: Value, c: Value) -> Result<Value, BuildError> {
        let precision = DotPrecision::default_for(self.ty(a).dtype(), self.ty(b).dtype());
        self.dot_with(a, b, c, precision)
    }

    /// `a · b + c` summed as `precision` allows.
    pub fn dot_with(
        &mut self,
        a: Value,
        b: Value,
        c: Value,
        precision: DotPrecision,
    ) -> Result<Value, BuildError> {
        self.op1(OpKind::Dot { precision }, &[a, b, c])
    }

    /// `a' · b' + c` of block-scaled operands (see [`crate::scaled`]): each
    /// operand with its scales when it is of an element format, `None`
    /// when it is `bf16` or `f16`.
    pub fn dot_scaled(
        &mut self,
        (a, a_scale): (Value, Option<Value>),
        (b, b_scale): (Value, Option<Value>),
        c: Value,
    ) -> Result<Value, BuildError> {
        let operands: Vec<Value> = [Some(a), a_scale, Some(b), b_scale, Some(c)]
            .into_iter()
            .flatten()
            .collect();
        self.op1(OpKind::DotScaled, &operands)
    }

    /// The runtime extent of a tensor along `axis`.
    pub fn dim(&mut self, tensor: Value, axis: usize) -> Result<Value, BuildError> {
        self.op1(OpKind::Dim { axis }, &[tensor])
    }

    /// Tensor `index` (an integer scalar) of a tensor array
    /// ([`OpKind::GetTensor`]).
    pub fn get_tensor(&mut self, tensors: Value, index: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::GetTensor, &[tensors, index])
    }

    /// The number of tensors of a tensor array, `i32`.
    pub fn num_tensors(&mut self, tensors: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::NumTensors, &[tensors])
    }

    /// The tensor cut into tiles of `shape`.
    pub fn partition_view(&mut self, tensor: Value, shape: &[usize]) -> Result<Value, BuildError> {
        self.op1(
            OpKind::PartitionView {
                shape: Shape::new(shape),
            },
            &[tensor],
        )
    }

    /// The window of the tensor at element `offsets` (one integer scalar
    /// per axis), of at most `extents` elements per axis when given, cut
    /// into tiles of `shape` ([`OpKind::PartitionView`]).
    pub fn partition_view_window(
        &mut self,
        tensor: Value,
        shape: &[usize],
        offsets: &[Value],
        extents: Option<&[Value]>,
    ) -> Result<Value, BuildError> {
        let mut operands = vec![tensor];
        operands.extend(offsets);
        operands.extend(extents.unwrap_or_default());
        self.op1(
            OpKind::PartitionView {
                shape: Shape::new(shape),
            },
            &operands,
        )
    }

    /// Loads the partition at `index`; every element must lie in the tensor.
    pub fn load(&mut self, view: Value, index: &[Value]) -> Result<Value, BuildError> {
        self.op1(OpKind::Load, &prepend(&[view], index))
    }

    /// Loads the partition at `index`, padding elements outside the tensor.
    pub fn load_masked(
        &mut self,
        view: Value,
        index: &[Value],
        padding: Padding,
    ) -> Result<Value, BuildError> {
        self.op1(OpKind::LoadMasked { padding }, &prepend(&[view], index))
    }

    /// Stores `tile` to the partition at `index`; every element must lie in
    /// the tensor.
    pub fn store(&mut self, tile: Value, view: Value, index: &[Value]) -> Result<(), BuildError> {
        self.op(OpKind::Store, &prepend(&[tile, view], index))
            .map(drop)
    }

    /// Stores `tile` to the partition at `index`, skipping elements outside
    /// the tensor.
    pub fn store_masked(
        &mut self,
        tile: Value,
        view: Value,
        index: &[Value],
    ) -> Result<(), BuildError> {
        self.op(OpKind::StoreMasked, &prepend(&[tile, view], index))
            .map(drop)
    }

    /// `x` (an integer scalar) promised a multiple of `divisor`, checked as
    /// assertion `id` ([`OpKind::MultipleOf`]).
    pub fn multiple_of(&mut self, id: u32, divisor: u32, x: Value) -> Result<Value, BuildError> {
        self.op1(OpKind::MultipleOf { id, divisor }, &[x])
    }

    /// Fails the program where `cond` (a `bool` scalar or tile) is false,
    /// with `message` formatting `values` ([`OpKind::Assert`]).
    pub fn assert(
        &mut self,
        id: u32,
        message: &str,
        cond: Value,
        values: &[Value],
    ) -> Result<(), BuildError> {
        let kind = OpKind::Assert {
            id,
            message: message.to_string(),
        };
        self.op(kind, &prepend(&[cond], values)).map(drop)
    }

    /// A line per program, or per element of the tiles among `values` (all
    /// of one shape), of `message` formatting `values` ([`OpKind::Print`]).
    pub fn print(&mut self, id: u32, message: &str, values: &[Value]) -> Result<(), BuildError> {
        let kind = OpKind::Print {
            id,
            message: message.to_string(),
        };
        self.op(kind, values).map(drop)
    }

    /// A fence of `order` for the threads of `scope` ([`OpKind::Fence`]).
    pub fn fence(&mut self, order: MemOrder, scope: MemScope) -> Result<(), BuildError> {
        self.op(OpKind::Fence { order, scope }, &[]).map(drop)
    }

    /// A barrier of the program's threads ([`OpKind::Barrier`]).
    pub fn barrier(&mut self) -> Result<(), BuildError> {
        self.op(OpKind::Barrier, &[]).map(drop)
    }

    /// A wait for the grids the launch depends on ([`OpKind::GridWait`]).
    pub fn grid_wait(&mut self) -> Result<(), BuildError> {
        self.op(OpKind::GridWait, &[]).map(drop)
    }

    /// A signal that dependent launches may start
    /// ([`OpKind::GridLaunchDependents`]).
    pub fn grid_launch_dependents(&mut self) -> Result<(), BuildError> {
        self.op(OpKind::GridLaunchDependents, &[]).map(drop)
    }

    fn infer(&self, kind: &OpKind, operands: &[Value]) -> Result<Vec<Type>, BuildError> {
        let types: Vec<&Type> = operands.iter().map(|&v| self.ty(v)).collect();
        match rules::infer(kind, &types) {
            Ok(Some(results)) => Ok(results),
            Ok(None) => Ok(Vec::new()),
            Err(message) => Err(self.rule_error(kind.name(), operands, message)),
        }
    }

    fn rule_error(&self, op: &'static str, operands: &[Value], message: String) -> BuildError {
        let operands = operands
            .iter()
            .map(|&v| self.ty(v).to_string())
            .collect::<Vec<_>>()
            .join(", ");
        BuildError::Rule {
            op,
            operands,
            message,
        }
    }

    fn append(
        &mut self,
        kind: OpKind,
        operands: Vec<Value>,
        types: Vec<Type>,
        regions: Vec<Region>,
    ) -> Vec<Value> {
        let op = self.func.create_op(kind, operands, types, regions);
        self.func.ops[op].loc = self.loc.clone();
        if let Some(region) = self.open.last_mut() {
            region.ops.push(op);
        }
        self.func.op(op).results.clone()
    }
}

fn prepend(head: &[Value], tail: &[Value]) -> Vec<Value> {
    head.iter().chain(tail).copied().collect()
}
