//! Parameters, partition views, partition indices, loads and stores.
//!
//! Each load reads an input tensor of its own, whose extents are chosen with
//! the access: a masked load's tensor leaves partial edge tiles, an unmasked
//! load's extents are multiples of the tile so every partition is in
//! bounds; some unmasked loads sit behind the guard `index < dim / tile`, or
//! in a loop `for k in 0..dim / tile`, that lets the lowering prove them in
//! bounds. Partition indices are arithmetic on `program_id`, `num_programs`,
//! loop induction variables and constants, reduced modulo the number of
//! partitions computed from `dim`, so they stay in the index space. Program
//! `p` (linear, x fastest) stores each result to partition `p` along axis 0
//! of an output tensor of its own, so no two programs write one element; the
//! store may sit in both branches of an `if` or in a loop body. Some results
//! are instead combined into a tensor with an atomic update
//! ([`Gen::atomic_output`], `atomics.rs`).

use super::{Built, Gen};
use crate::config::GenConfig;
use crate::rng::SplitMix64;
use crate::tensors::{aligned_copy, integer_tensor, random_tensor};
use crate::values::{random_scalar, Place};
use std::cell::RefCell;
use tile_ir::builder::Builder;
use tile_ir::interp::Arg;
use tile_ir::types::TENSOR_ALIGNMENT;
use tile_ir::{BinaryOp, CmpPred, DType, Padding, Scalar, TensorType, TileType, Type, Value};

/// A kernel parameter and what its argument will be.
#[derive(Clone, Debug)]
pub(crate) enum ParamPlan {
    /// A tensor of this dtype and these extents, with a random layout.
    Tensor {
        /// The element type.
        dtype: DType,
        /// The extents.
        extents: Vec<usize>,
        /// Whether the kernel promises it aligned (its layout is then a
        /// random aligned one).
        aligned: bool,
    },
    /// A tensor of this dtype and these extents, with a random layout and
    /// integer values of at most `magnitude` (exact in any dtype it fits).
    Integers {
        /// The element type.
        dtype: DType,
        /// The extents.
        extents: Vec<usize>,
        /// The largest magnitude of an element.
        magnitude: i64,
    },
    /// A tensor array of this dtype, its tensors of these extents, each
    /// with a random layout.
    Tensors {
        /// The element type.
        dtype: DType,
        /// Each tensor's extents.
        tensors: Vec<Vec<usize>>,
        /// Whether the kernel promises every tensor aligned.
        aligned: bool,
    },
    /// A scalar of this value.
    Scalar(Scalar),
}

impl ParamPlan {
    /// The argument: the scalar, or a tensor with a random layout and values.
    /// An aligned tensor holds the elements a tensor of any layout would
    /// (from `rng`), in an aligned layout drawn from `aligns`: the other
    /// arguments are the ones the seed gave before alignment existed.
    pub(crate) fn arg(
        &self,
        (rng, aligns, arrays): (&mut SplitMix64, &mut SplitMix64, &mut SplitMix64),
        cfg: &GenConfig,
    ) -> Arg {
        let mut tensor = |rng: &mut SplitMix64, dtype, extents, aligned| {
            let t = random_tensor(rng, dtype, extents, cfg.special_rate);
            match aligned {
                true => aligned_copy(aligns, &t, cfg.special_rate),
                false => t,
            }
        };
        match self {
            ParamPlan::Tensor {
                dtype,
                extents,
                aligned,
            } => Arg::Tensor(tensor(rng, *dtype, extents, *aligned)),
            ParamPlan::Tensors {
                dtype,
                tensors,
                aligned,
            } => Arg::Tensors(
                tensors
                    .iter()
                    .map(|extents| tensor(arrays, *dtype, extents, *aligned))
                    .collect(),
            ),
            ParamPlan::Integers {
                dtype,
                extents,
                magnitude,
            } => Arg::Tensor(integer_tensor(rng, *dtype, extents, *magnitude)),
            ParamPlan::Scalar(s) => Arg::Scalar(*s),
        }
    }
}

/// The integer dtypes partition indices are cast to (all hold every index).
const INDEX_DTYPES: [DType; 6] = [
    DType::I32,
    DType::I64,
    DType::U32,
    DType::U64,
    DType::I16,
    DType::U16,
];

impl Gen<'_> {
    /// A new tensor parameter, promised aligned by chance where its
    /// innermost extent is a multiple of 16 bytes; by chance a tensor of a
    /// new tensor array instead, picked here.
    pub(super) fn tensor_param(
        &mut self,
        b: &mut Builder,
        dtype: DType,
        extents: Vec<usize>,
    ) -> Built<Value> {
        let name = format!("t{}", self.params.len());
        let aligned = extents
            .last()
            .is_some_and(|&e| (e * dtype.size_bytes()).is_multiple_of(TENSOR_ALIGNMENT))
            && self.aligns.chance(self.cfg.aligned_rate);
        let ty = TensorType {
            aligned,
            ..TensorType::new(dtype, extents.len())
        };
        if self.arrays.chance(self.cfg.array_rate) {
            return self.array_tensor(b, (name, ty), extents);
        }
        self.params.push(ParamPlan::Tensor {
            dtype,
            extents,
            aligned,
        });
        Ok(b.param(name, Type::Tensor(ty)))
    }

    /// A new tensor array `name` of `ty`'s tensors, one of `extents` and up
    /// to two others (their innermost extent the same, so that an
    /// alignment promise holds for each), and the `get_tensor` of that one,
    /// at a constant index or a scalar parameter's.
    fn array_tensor(
        &mut self,
        b: &mut Builder,
        (name, ty): (String, TensorType),
        extents: Vec<usize>,
    ) -> Built<Value> {
        let count = self.arrays.range(1, 3);
        let picked = self.arrays.range(0, count - 1);
        let mut tensors = Vec::with_capacity(count);
        for k in 0..count {
            let mut other: Vec<usize> = extents
                .iter()
                .map(|&e| self.arrays.range(1, e + 2))
                .collect();
            if let (Some(last), Some(&inner)) = (other.last_mut(), extents.last()) {
                *last = inner;
            }
            tensors.push(if k == picked { extents.clone() } else { other });
        }
        self.params.push(ParamPlan::Tensors {
            dtype: ty.dtype,
            tensors,
            aligned: ty.aligned,
        });
        let array = b.param(name, Type::Tensors(ty));
        let index = Scalar::I32(picked as i32);
        let index = if self.arrays.chance(0.5) {
            b.constant(index)?
        } else {
            let name = format!("s{}", self.params.len());
            self.params.push(ParamPlan::Scalar(index));
            b.param(name, Type::Scalar(DType::I32))
        };
        b.get_tensor(array, index)
    }

    /// A new scalar parameter with a random value.
    pub(super) fn scalar_param(&mut self, b: &mut Builder, dtype: DType) -> Value {
        let name = format!("s{}", self.params.len());
        let value = random_scalar(&mut self.rng, dtype, 0.0, Place::Constant);
        self.params.push(ParamPlan::Scalar(value));
        b.param(name, Type::Scalar(dtype))
    }

    /// A load of a tile of type `t` from a new input tensor, or `None` when
    /// the configuration allows no more inputs.
    pub(super) fn load(&mut self, b: &mut Builder, t: &TileType) -> Built<Option<Value>> {
        if self.inputs >= self.cfg.max_inputs {
            return Ok(None);
        }
        self.inputs += 1;
        if self.gathers.chance(self.cfg.gather_rate) {
            return self.gather(b, t).map(Some);
        }
        let masked = self.rng.chance(0.6);
        let dims = t.shape.dims();
        let extents: Vec<usize> = dims
            .iter()
            .map(|&s| {
                if masked {
                    (s * self.rng.range(0, 2) + self.rng.range(0, s - 1)).max(1)
                } else {
                    s * self.rng.range(1, 2)
                }
            })
            .collect();
        let tensor = self.tensor_param(b, t.dtype, extents.clone())?;
        let windowed = masked && self.windows.chance(self.cfg.window_rate);
        let (view, parts) = if windowed {
            self.window_view(b, tensor, dims, &extents)?
        } else {
            (b.partition_view(tensor, dims)?, vec![None; dims.len()])
        };
        if !masked && self.may_nest() && self.rng.chance(0.4) {
            return self.guarded_load(b, t, tensor, view);
        }
        let mut index = Vec::with_capacity(dims.len());
        for (axis, &s) in dims.iter().enumerate() {
            index.push(self.input_index(b, (tensor, parts[axis]), axis, s)?);
        }
        if masked {
            let padding = self.padding(t.dtype);
            b.load_masked(view, &index, padding).map(Some)
        } else {
            b.load(view, &index).map(Some)
        }
    }

    /// A tile of type `t` gathered from a new 1-D input of `len` elements at
    /// `(a · j + p) % (len + extra)` (`j` the element's row-major position,
    /// `p` the linear program id), masked to the indices below `len`, with
    /// a generated value where the mask is off: reads at scattered and
    /// repeated addresses, and out-of-range indices masked off.
    fn gather(&mut self, b: &mut Builder, t: &TileType) -> Built<Value> {
        let dims = t.shape.dims().to_vec();
        let numel: usize = dims.iter().product();
        let len = self.rng.range(1, 2 * numel);
        let extra = self.rng.range(0, 3);
        let stride = self.rng.range(1, 5);
        let tensor = self.tensor_param(b, t.dtype, vec![len])?;
        let pid = self.linear_program(b)?;
        let j = b.iota(&dims, DType::I32)?;
        let stride = self.int_constant(b, DType::I32, stride as i128)?;
        let stride = b.broadcast(stride, &dims)?;
        let pid = b.broadcast(pid, &dims)?;
        let spread = b.binary(BinaryOp::Mul, j, stride)?;
        let spread = b.binary(BinaryOp::Add, spread, pid)?;
        let modulus = self.int_constant(b, DType::I32, (len + extra) as i128)?;
        let modulus = b.broadcast(modulus, &dims)?;
        let index = b.binary(BinaryOp::Rem, spread, modulus)?;
        let len = self.int_constant(b, DType::I32, len as i128)?;
        let len = b.broadcast(len, &dims)?;
        let mask = b.cmp(CmpPred::Lt, index, len)?;
        let other = self.leaf(b, &Type::Tile(t.clone()))?;
        b.gather(tensor, &[index], mask, other)
    }

    /// `if term_d < dim_d / s_d for every axis d { load view[term] } else {
    /// zeros }`, the guarded fast path of a kernel that handles full tiles
    /// unmasked; or, for one random axis `l`, the same with a loop
    /// `for k in 0..dim_l / s_l { load view[.., k, ..] }` in the branch
    /// instead of a guard on that axis (the last tile loaded, or zeros). The
    /// lowering proves these loads in bounds: the terms are non-negative and
    /// the guards and the loop bound them by whole tiles.
    fn guarded_load(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        tensor: Value,
        view: Value,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let looped = self
            .rng
            .chance(0.5)
            .then(|| self.rng.range(0, dims.len() - 1));
        let mut terms = Vec::with_capacity(dims.len());
        let mut loop_tiles = None;
        let mut cond = b.constant(Scalar::Bool(true))?;
        for (axis, &s) in dims.iter().enumerate() {
            let extent = b.dim(tensor, axis)?;
            let s = self.int_constant(b, DType::I32, s as i128)?;
            let tiles = b.binary(BinaryOp::Div, extent, s)?;
            if looped == Some(axis) {
                // The loop's induction variable takes this axis' place.
                loop_tiles = Some(tiles);
                terms.push(tiles);
                continue;
            }
            let term = self.index_term(b)?;
            let inside = b.cmp(CmpPred::Lt, term, tiles)?;
            cond = b.binary(BinaryOp::And, cond, inside)?;
            terms.push(term);
        }
        let this = RefCell::new(self);
        let then = |b: &mut Builder| -> Built<Vec<Value>> {
            let mut g = this.borrow_mut();
            let (Some(axis), Some(tiles)) = (looped, loop_tiles) else {
                let mut index = Vec::with_capacity(terms.len());
                for &term in &terms {
                    index.push(g.index_dtype(b, term)?);
                }
                return Ok(vec![b.load(view, &index)?]);
            };
            let zero = g.int_constant(b, DType::I32, 0)?;
            let one = g.int_constant(b, DType::I32, 1)?;
            let init = b.full(Scalar::zero(t.dtype), dims)?;
            b.for_loop(zero, tiles, one, &[init], |b, k, _| {
                let mut index = Vec::with_capacity(terms.len());
                for (d, &term) in terms.iter().enumerate() {
                    index.push(g.index_dtype(b, if d == axis { k } else { term })?);
                }
                Ok(vec![b.load(view, &index)?])
            })
        };
        let zeros = |b: &mut Builder| -> Built<Vec<Value>> {
            Ok(vec![b.full(Scalar::zero(t.dtype), dims)?])
        };
        let results = b.if_else(cond, &[Type::Tile(t.clone())], then, zeros)?;
        Ok(results.first().copied())
    }

    /// A random padding valid for `dtype`.
    fn padding(&mut self, dtype: DType) -> Padding {
        let mut choices = vec![Padding::Zero];
        if Padding::Nan.value(dtype).is_some() {
            choices.push(Padding::Nan);
        }
        if dtype.has_infinity() {
            choices.extend([Padding::PosInf, Padding::NegInf]);
        }
        let value = self.constant_value(dtype);
        choices.push(Padding::Value(value));
        self.rng.pick(&choices)
    }

    /// A partition index along `axis` of a view of tile extent `s` over
    /// `tensor`, inside the index space whatever the tensor's extent.
    fn input_index(
        &mut self,
        b: &mut Builder,
        (tensor, window_parts): (Value, Option<usize>),
        axis: usize,
        s: usize,
    ) -> Built<Value> {
        if self.rng.chance(0.45) {
            return self.int_constant(b, DType::I32, 0);
        }
        // term % ceil(dim / s), with term >= 0; a window's number of
        // partitions is known.
        let mut term = self.index_term(b)?;
        for _ in 0..self.rng.range(0, 1) {
            let more = self.index_term(b)?;
            term = b.binary(BinaryOp::Add, term, more)?;
        }
        let parts = match window_parts {
            Some(parts) => self.int_constant(b, DType::I32, parts as i128)?,
            None => {
                let extent = b.dim(tensor, axis)?;
                let s_minus_one = self.int_constant(b, DType::I32, s as i128 - 1)?;
                let s = self.int_constant(b, DType::I32, s as i128)?;
                let padded = b.binary(BinaryOp::Add, extent, s_minus_one)?;
                b.binary(BinaryOp::Div, padded, s)?
            }
        };
        let index = b.binary(BinaryOp::Rem, term, parts)?;
        self.index_dtype(b, index)
    }

    /// A view of tile `dims` of a window of `tensor` (of `extents`): at an
    /// offset below each extent, half the time with an extent of its own
    /// (sometimes past the tensor's end), each a constant or a scalar
    /// parameter of an integer dtype (a parameter sometimes promised a
    /// multiple of a power of two dividing it); and each axis' number of
    /// partitions (at least one).
    fn window_view(
        &mut self,
        b: &mut Builder,
        tensor: Value,
        dims: &[usize],
        extents: &[usize],
    ) -> Built<(Value, Vec<Option<usize>>)> {
        let bounded = self.windows.chance(0.5);
        let (mut offsets, mut limits, mut parts) = (Vec::new(), Vec::new(), Vec::new());
        for (&e, &s) in extents.iter().zip(dims) {
            let o = self.windows.range(0, e - 1);
            let room = e - o;
            let n = self.windows.range(1, room + 2);
            let window = if bounded { room.min(n) } else { room };
            parts.push(Some(window.div_ceil(s)));
            offsets.push(o);
            limits.push(n);
        }
        let operand = |g: &mut Self, b: &mut Builder, v: usize| -> Built<Value> {
            let dtype = g
                .windows
                .pick(&[DType::I32, DType::I64, DType::U32, DType::I16]);
            let value = tile_ir::eval::cast(Scalar::I64(v as i64), dtype);
            if g.windows.chance(0.5) {
                let name = format!("s{}", g.params.len());
                g.params.push(ParamPlan::Scalar(value));
                let p = b.param(name, Type::Scalar(dtype));
                if !g.hints.chance(g.cfg.hint_rate) {
                    return Ok(p);
                }
                // A power of two dividing `v` (any for 0), at most 16.
                let most = if v == 0 {
                    4
                } else {
                    v.trailing_zeros().min(4) as usize
                };
                let divisor = 1u32 << g.hints.range(0, most);
                let id = g.next_hint;
                g.next_hint += 1;
                return b.multiple_of(id, divisor, p);
            }
            b.constant(value)
        };
        let offsets = offsets
            .into_iter()
            .map(|o| operand(self, b, o))
            .collect::<Built<Vec<_>>>()?;
        let limits = if bounded {
            Some(
                limits
                    .into_iter()
                    .map(|n| operand(self, b, n))
                    .collect::<Built<Vec<_>>>()?,
            )
        } else {
            None
        };
        let view = b.partition_view_window(tensor, dims, &offsets, limits.as_deref())?;
        Ok((view, parts))
    }

    /// A non-negative `i32` scalar from the grid, a loop, or a constant.
    fn index_term(&mut self, b: &mut Builder) -> Built<Value> {
        match self.rng.range(0, 3) {
            0 if !self.ivs.is_empty() => {
                let ivs = self.ivs.clone();
                let iv = self.rng.pick(&ivs);
                if b.ty(iv).dtype() == DType::I32 {
                    Ok(iv)
                } else {
                    b.cast(iv, DType::I32)
                }
            }
            0 | 1 => self.grid_scalar(b),
            _ => {
                let c = self.rng.range(0, 5) as i128;
                self.int_constant(b, DType::I32, c)
            }
        }
    }

    /// `program_id` or `num_programs` along a random axis.
    pub(super) fn grid_scalar(&mut self, b: &mut Builder) -> Built<Value> {
        let axis = self.rng.range(0, 2) as u8;
        if self.rng.chance(0.6) {
            b.program_id(axis)
        } else {
            b.num_programs(axis)
        }
    }

    /// `index` (an `i32`), sometimes cast to another integer dtype.
    fn index_dtype(&mut self, b: &mut Builder, index: Value) -> Built<Value> {
        let dtype = self.rng.pick(&INDEX_DTYPES);
        if dtype == DType::I32 {
            Ok(index)
        } else {
            b.cast(index, dtype)
        }
    }

    /// `x + y * nx + z * nx * ny`: the linear index of this program.
    pub(super) fn linear_program(&mut self, b: &mut Builder) -> Built<Value> {
        let mut linear = b.program_id(0)?;
        let mut stride = b.num_programs(0)?;
        for axis in 1..3 {
            let id = b.program_id(axis)?;
            let scaled = b.binary(BinaryOp::Mul, id, stride)?;
            linear = b.binary(BinaryOp::Add, linear, scaled)?;
            if axis < 2 {
                let n = b.num_programs(axis)?;
                stride = b.binary(BinaryOp::Mul, stride, n)?;
            }
        }
        Ok(linear)
    }

    /// Builds a value of tile type `ty` and stores it to a new output tensor
    /// at this program's partition: at the top level, in both branches of an
    /// `if`, or in every iteration of a `for` (the last one wins).
    pub(super) fn output(&mut self, b: &mut Builder, ty: &Type) -> Built<()> {
        let Type::Tile(t) = ty else {
            return Ok(());
        };
        let depth = self.rng.range(1, self.cfg.max_depth.max(1));
        let masked = self.rng.chance(0.6);
        let programs = self.grid.iter().product::<u32>() as usize;
        let dims = t.shape.dims();
        let extents: Vec<usize> = dims
            .iter()
            .enumerate()
            .map(|(axis, &s)| match (axis, masked) {
                (0, true) => (programs - 1) * s + self.rng.range(1, s),
                (0, false) => programs * s,
                (_, true) => self.rng.range(1, s + 2),
                (_, false) => s,
            })
            .collect();
        let tensor = self.tensor_param(b, t.dtype, extents)?;
        let view = b.partition_view(tensor, dims)?;
        let mut index = vec![self.linear_program(b)?];
        for _ in 1..dims.len() {
            let zero = self.int_constant(b, DType::I32, 0)?;
            index.push(self.index_dtype(b, zero)?);
        }
        let site = Site {
            view,
            index,
            masked,
        };
        let place = if self.may_nest() {
            self.rng.range(0, 7)
        } else {
            0
        };
        match place {
            0 => {
                let cond = self.value(b, &Type::Scalar(DType::Bool), depth)?;
                let this = RefCell::new(self);
                let branch = |b: &mut Builder| -> Built<Vec<Value>> {
                    this.borrow_mut()
                        .scoped(|g| g.store_new(b, ty, depth, &site))
                };
                b.if_else(cond, &[], branch, branch).map(drop)
            }
            1 => {
                let lo = self.int_constant(b, DType::I32, 0)?;
                let trips = self.rng.range(1, 3) as i128;
                let hi = self.int_constant(b, DType::I32, trips)?;
                let step = self.int_constant(b, DType::I32, 1)?;
                b.for_loop(lo, hi, step, &[], |b, iv, _| {
                    self.scoped(|g| {
                        g.ivs.push(iv);
                        g.expose(iv);
                        g.store_new(b, ty, depth, &site)
                    })
                })
                .map(drop)
            }
            _ => self.store_new(b, ty, depth, &site).map(drop),
        }
    }

    /// Builds a value of `ty` and stores it at `site`; yields nothing.
    fn store_new(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
        site: &Site,
    ) -> Built<Vec<Value>> {
        let value = self.value(b, ty, depth)?;
        if site.masked {
            b.store_masked(value, site.view, &site.index)?;
        } else {
            b.store(value, site.view, &site.index)?;
        }
        Ok(Vec::new())
    }
}

/// Where a result is stored: a view of an output tensor and this program's
/// partition index.
struct Site {
    view: Value,
    index: Vec<Value>,
    masked: bool,
}
