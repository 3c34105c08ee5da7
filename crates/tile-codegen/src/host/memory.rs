//! `dim`, `partition_view`, and the loads and stores of partitions.
//!
//! A view of a window (`partition_view .. offset(..)`) is a view of the
//! window as a tensor of its own: its first element, its extents and the
//! tensor's strides (`HostKernel::window`).
//!
//! For a view of tile shape `S` over a tensor of extents `e`, partition `I`
//! is checked first: `0 ≤ i_k` and `i_k · S_k < e_k` (the index space, for
//! every access), then for unmasked accesses `i_k · S_k + S_k ≤ e_k`. The
//! elements inside the tensor form the box `[0, min(S_k, e_k − i_k · S_k))`
//! of the tile: a masked load fills the tile with the padding and copies the
//! box, a masked store writes the box only; both test first whether the
//! whole partition is inside, and then copy it with static trip counts.
//! Tensor accesses are unaligned (`align 1`): buffers are bytes. A store to
//! a large output the kernel never reads may stream its rows past the
//! caches instead (`stream.rs`), where a run-time test allows.

use super::alias::Memory;
use super::check::Code;
use super::error::HostError;
use super::frame::TileRef;
use super::kernel::{HostKernel, HostValue, TensorArg};
use super::lazy::Expr;
use inkwell::values::{BasicValue, BasicValueEnum, InstructionValue, IntValue, PointerValue};
use inkwell::IntPredicate;
use tile_ir::{DType, OpId, OpKind, Scalar, Value};

/// A partition being accessed: the tensor, the tile's origin in it and the
/// extents of the part inside it (`i64`).
#[derive(Clone)]
pub(super) struct Partition<'ctx> {
    tensor: TensorArg<'ctx>,
    origin: Vec<IntValue<'ctx>>,
    inside: Vec<IntValue<'ctx>>,
    /// Whether the whole partition lies inside the tensor (an `i1`).
    whole: IntValue<'ctx>,
}

/// A checked load whose elements are read where its tile is used
/// (`lazy.rs`), or copied into the frame by [`HostKernel::materialize`].
#[derive(Clone)]
pub(super) struct DeferredLoad<'ctx> {
    part: Partition<'ctx>,
    /// The address of the partition's origin.
    base: PointerValue<'ctx>,
    /// The tile's place in the frame, for the copy.
    pub(super) place: TileRef,
    /// The padding of a masked load; `None` for a load, whose partition the
    /// checks proved whole.
    pad: Option<Scalar>,
}

impl<'ctx> DeferredLoad<'ctx> {
    /// Whether the whole partition lies inside the tensor (an `i1`): `None`
    /// when that is known already.
    pub(super) fn whole(&self) -> Option<IntValue<'ctx>> {
        self.pad.map(|_| self.part.whole)
    }
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `dim`, `partition_view`, `load`, `load_masked`, `store` or
    /// `store_masked`.
    pub(super) fn memory(&mut self, id: OpId) -> Result<(), HostError> {
        let op = self.func.op(id);
        let operands = self.operands(id);
        match &op.kind {
            OpKind::Dim { axis } => {
                let t = self.tensor_of(operands.first().copied())?;
                let extent = t.1.extents.get(*axis).copied().ok_or_else(|| {
                    HostError::internal(format!("axis {axis} of `dim` out of range"))
                })?;
                let i32t = self.e.ctx.i32_type();
                let v = self.e.b.build_int_truncate(extent, i32t, "dim")?;
                self.define_result(id, HostValue::Scalar(v.into()))
            }
            OpKind::PartitionView { shape } => {
                let (tensor, t) = self.tensor_of(operands.first().copied())?;
                let dtype = self.func.ty(self.result(id)?).dtype();
                let window = match operands.get(1..) {
                    Some(w) if !w.is_empty() => Some(self.window(id, &t, dtype, w)?),
                    _ => None,
                };
                self.define_result(
                    id,
                    HostValue::PartitionView {
                        tensor,
                        window,
                        tile: shape.dims().to_vec(),
                        dtype,
                    },
                )
            }
            OpKind::Load | OpKind::LoadMasked { .. } => {
                let (view, indices) = operands
                    .split_first()
                    .ok_or_else(|| HostError::internal("a load without a view"))?;
                let masked = matches!(op.kind, OpKind::LoadMasked { .. });
                let (tile_shape, dtype, part) = self.partition(id, *view, indices, masked)?;
                let pad = match &op.kind {
                    OpKind::LoadMasked { padding } => {
                        Some(padding.value(dtype).ok_or_else(|| {
                            HostError::internal(format!("padding {padding:?} of {dtype}"))
                        })?)
                    }
                    _ => None,
                };
                let load = DeferredLoad {
                    base: self.tensor_base(&part, dtype)?,
                    part,
                    place: self.place(&tile_shape, dtype),
                    pad,
                };
                if self.plan.prefetches.contains(&id) {
                    self.prefetch_next_tile(&load.part, load.base, &tile_shape, dtype)?;
                }
                if self.plan.lazy.contains(&id) {
                    return self.define_result(id, HostValue::Lazy(Expr::Load(load)));
                }
                self.materialize(&load)?;
                self.define_result(id, HostValue::Tile(load.place))
            }
            OpKind::Store | OpKind::StoreMasked => {
                let (value, rest) = operands
                    .split_first()
                    .ok_or_else(|| HostError::internal("a store without a value"))?;
                let (view, indices) = rest
                    .split_first()
                    .ok_or_else(|| HostError::internal("a store without a view"))?;
                let masked = matches!(op.kind, OpKind::StoreMasked);
                let tile = self.tile(*value)?;
                let (tile_shape, _, part) = self.partition(id, *view, indices, masked)?;
                let whole = self.static_bounds(&tile_shape);
                let base = self.tensor_base(&part, tile.dtype)?;
                let stream = self.stream_condition(id, &part.tensor, &tile)?;
                if masked {
                    self.either(
                        part.whole,
                        &mut |l| l.store_part(&part, base, &tile, &whole, stream),
                        &mut |l| l.store_part(&part, base, &tile, &part.inside, stream),
                    )
                } else {
                    self.store_part(&part, base, &tile, &whole, stream)
                }
            }
            OpKind::Atomic { op, order, .. } => self.atomic(id, *op, *order),
            OpKind::Gather => self.gather(id),
            OpKind::Scatter => self.scatter(id),
            other => Err(HostError::internal(format!(
                "`{}` is not a memory op",
                other.name()
            ))),
        }
    }

    /// Copies the partition of `load` into its place in the frame: a masked
    /// load's tile is filled with the padding first unless the partition is
    /// whole; whole partitions are copied with static trip counts.
    pub(super) fn materialize(&mut self, load: &DeferredLoad<'ctx>) -> Result<(), HostError> {
        let (part, base, out) = (&load.part, load.base, &load.place);
        let whole = self.static_bounds(&out.shape);
        match load.pad {
            Some(pad) => self.either(
                part.whole,
                &mut |l| l.load_box(part, base, out, &whole),
                &mut |l| {
                    l.fill(out, pad)?;
                    l.load_box(part, base, out, &part.inside)
                },
            ),
            None => self.load_box(part, base, out, &whole),
        }
    }

    /// Element `j` of the tile of `load`, read from the tensor: the
    /// partition must be whole.
    pub(super) fn read_deferred(
        &self,
        load: &DeferredLoad<'ctx>,
        j: &[IntValue<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let at = self.tensor_offset(&load.part, j)?;
        self.read_global(load.base, load.place.dtype, at)
    }

    /// The tensor parameter `v` names: its position and its arguments.
    fn tensor_of(&self, v: Option<Value>) -> Result<(usize, TensorArg<'ctx>), HostError> {
        let v = v.ok_or_else(|| HostError::internal("a missing tensor operand"))?;
        match self.value(v)? {
            HostValue::Tensor(index) => {
                let t = self
                    .tensors
                    .get(&index)
                    .cloned()
                    .ok_or_else(|| HostError::internal("an unknown tensor parameter"))?;
                Ok((index, t))
            }
            _ => Err(HostError::internal(
                "a tensor operand that is not a parameter",
            )),
        }
    }

    /// The window of tensor `t` (of `dtype`) at the offsets, then the
    /// extents, of `partition_view` op `id` (`operands`) as a tensor of its
    /// own: its first element, its extents `min(max(e − o, 0), n)` and
    /// `t`'s strides; checked that no offset or extent is negative.
    fn window(
        &mut self,
        id: OpId,
        t: &TensorArg<'ctx>,
        dtype: DType,
        operands: &[Value],
    ) -> Result<TensorArg<'ctx>, HostError> {
        let rank = t.extents.len();
        if operands.len() != rank && operands.len() != 2 * rank {
            return Err(HostError::internal("window operands of the wrong count"));
        }
        let values = operands
            .iter()
            .map(|&v| self.index_i64(v))
            .collect::<Result<Vec<_>, _>>()?;
        let b = &self.e.b;
        let zero = self.i64(0);
        let mut ok = self.e.ctx.bool_type().const_all_ones();
        for &v in &values {
            let nonnegative = b.build_int_compare(IntPredicate::SGE, v, zero, "nonneg")?;
            ok = b.build_and(ok, nonnegative, "ok")?;
        }
        self.check(ok, id, Code::ViewWindow, &values)?;
        let b = &self.e.b;
        let (offsets, limits) = values.split_at(rank);
        let mut extents = Vec::new();
        for (k, (&o, &e)) in offsets.iter().zip(&t.extents).enumerate() {
            let room = b.build_int_sub(e, o, "room")?;
            let past = b.build_int_compare(IntPredicate::SLT, room, zero, "past")?;
            let room = b.build_select(past, zero, room, "room")?.into_int_value();
            extents.push(match limits.get(k) {
                Some(&n) => {
                    let less = b.build_int_compare(IntPredicate::SLT, n, room, "less")?;
                    b.build_select(less, n, room, "extent")?.into_int_value()
                }
                None => room,
            });
        }
        let at = self.strided(offsets, &t.strides)?;
        Ok(TensorArg {
            base: self.gep(self.e.mem_type(dtype), t.base, at)?,
            extents,
            strides: t.strides.clone(),
        })
    }

    /// An integer scalar as an `i64`, by its dtype's signedness.
    fn index_i64(&self, v: Value) -> Result<IntValue<'ctx>, HostError> {
        let i64t = self.e.ctx.i64_type();
        let d = self.func.ty(v).dtype();
        let x = self.scalar(v)?.into_int_value();
        Ok(if d.bits() == 64 {
            x
        } else if d.is_signed_int() {
            self.e.b.build_int_s_extend(x, i64t, "index")?
        } else {
            self.e.b.build_int_z_extend(x, i64t, "index")?
        })
    }

    /// `i64` constants of `shape`.
    fn static_bounds(&self, shape: &[usize]) -> Vec<IntValue<'ctx>> {
        shape.iter().map(|&e| self.i64(e as i64)).collect()
    }

    /// Checks the partition of `view` at `indices` for op `id` (and, unless
    /// `masked`, that it lies wholly inside the tensor); returns the tile
    /// shape, the dtype and the partition.
    fn partition(
        &mut self,
        id: OpId,
        view: Value,
        indices: &[Value],
        masked: bool,
    ) -> Result<(Vec<usize>, DType, Partition<'ctx>), HostError> {
        let HostValue::PartitionView {
            tensor,
            window,
            tile,
            dtype,
        } = self.value(view)?
        else {
            return Err(HostError::internal("an access through a non-view"));
        };
        let t = match window {
            Some(w) => w,
            None => self
                .tensors
                .get(&tensor)
                .cloned()
                .ok_or_else(|| HostError::internal("an unknown tensor parameter"))?,
        };
        if indices.len() != tile.len() || t.extents.len() != tile.len() {
            return Err(HostError::internal("a partition index of the wrong rank"));
        }
        let index = indices
            .iter()
            .map(|&v| self.index_i64(v))
            .collect::<Result<Vec<_>, _>>()?;
        let b = &self.e.b;
        let mut ok = self.e.ctx.bool_type().const_all_ones();
        let mut whole = ok;
        let (mut origin, mut inside) = (Vec::new(), Vec::new());
        for ((&i, &s), &e) in index.iter().zip(&tile).zip(&t.extents) {
            let s = self.i64(s as i64);
            // i · S < e  ⟺  i < ⌈e / S⌉, without overflow.
            let round = b.build_int_add(e, b.build_int_sub(s, self.i64(1), "s1")?, "round")?;
            let count = b.build_int_unsigned_div(round, s, "count")?;
            let nonneg = b.build_int_compare(IntPredicate::SGE, i, self.i64(0), "nonneg")?;
            let below = b.build_int_compare(IntPredicate::SLT, i, count, "below")?;
            ok = b.build_and(ok, b.build_and(nonneg, below, "in")?, "ok")?;
            let o = b.build_int_mul(i, s, "origin")?;
            let room = b.build_int_sub(e, o, "room")?;
            let fits = b.build_int_compare(IntPredicate::SLE, s, room, "fits")?;
            whole = b.build_and(whole, fits, "whole")?;
            let n = b.build_select(fits, s, room, "inside")?.into_int_value();
            origin.push(o);
            inside.push(n);
        }
        self.check(ok, id, Code::IndexSpace, &index)?;
        if !masked {
            self.check(whole, id, Code::PartialPartition, &index)?;
        }
        Ok((
            tile,
            dtype,
            Partition {
                tensor: t,
                origin,
                inside,
                whole,
            },
        ))
    }

    /// Copies the box `bounds` of the partition into the same elements of
    /// `out`.
    fn load_box(
        &mut self,
        part: &Partition<'ctx>,
        base: PointerValue<'ctx>,
        out: &TileRef,
        bounds: &[IntValue<'ctx>],
    ) -> Result<(), HostError> {
        let strides = out.strides();
        self.by_last_stride(part, bounds, &mut |l, part| {
            l.nest(bounds, &mut |l, j| {
                let at = l.tensor_offset(part, j)?;
                let v = l.read_global(base, out.dtype, at)?;
                let to = l.linear(j, &strides, 0)?;
                l.set(out, to, v)
            })
        })
    }

    /// Runs `body` with `part`; where the box's last extent in `bounds` is
    /// static, twice: with a copy of `part` whose last stride is the
    /// constant 1 where the tensor's is 1 at run time, and with `part`
    /// elsewhere. A fully unrolled row of a contiguous tensor is then
    /// consecutive elements to LLVM, which it moves with vector loads and
    /// stores; with a run-time stride each element is a scalar access.
    fn by_last_stride(
        &mut self,
        part: &Partition<'ctx>,
        bounds: &[IntValue<'ctx>],
        body: &mut dyn FnMut(&mut Self, &Partition<'ctx>) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        let last_static = bounds.last().is_some_and(|b| b.is_const());
        match self.contiguous(part)? {
            Some((unit, contiguous)) if last_static => self.branches(unit, &mut |l, unit| {
                body(l, if unit { &contiguous } else { part })
            }),
            _ => body(self, part),
        }
    }

    /// Whether the last axis of `part`'s tensor has stride 1 (an `i1`), and
    /// `part` with that stride as the constant 1; `None` for rank 0 or a
    /// stride known already.
    fn contiguous(
        &self,
        part: &Partition<'ctx>,
    ) -> Result<Option<(IntValue<'ctx>, Partition<'ctx>)>, HostError> {
        let Some(&last) = part.tensor.strides.last() else {
            return Ok(None);
        };
        if last.is_const() {
            return Ok(None);
        }
        let one = self.i64(1);
        let unit = self
            .e
            .b
            .build_int_compare(IntPredicate::EQ, last, one, "unit")?;
        let mut contiguous = part.clone();
        if let Some(stride) = contiguous.tensor.strides.last_mut() {
            *stride = one;
        }
        Ok(Some((unit, contiguous)))
    }

    /// Whether the last axis of `load`'s tensor has stride 1 (an `i1`), and
    /// `load` reading with that stride as the constant 1: see
    /// [`Self::by_last_stride`].
    pub(super) fn contiguous_load(
        &self,
        load: &DeferredLoad<'ctx>,
    ) -> Result<Option<(IntValue<'ctx>, DeferredLoad<'ctx>)>, HostError> {
        Ok(self.contiguous(&load.part)?.map(|(unit, part)| {
            (
                unit,
                DeferredLoad {
                    part,
                    ..load.clone()
                },
            )
        }))
    }

    /// Copies the box `bounds` of `tile` into the same elements of the
    /// partition: with streaming stores where `stream` (an `i1`) holds.
    fn store_part(
        &mut self,
        part: &Partition<'ctx>,
        base: PointerValue<'ctx>,
        tile: &TileRef,
        bounds: &[IntValue<'ctx>],
        stream: Option<IntValue<'ctx>>,
    ) -> Result<(), HostError> {
        match stream {
            Some(stream) => self.either(
                self.rows_stream(stream, tile, bounds)?,
                &mut |l| l.stream_box(&part.tensor, base, tile, bounds),
                &mut |l| l.store_box(part, base, tile, bounds),
            ),
            None => self.store_box(part, base, tile, bounds),
        }
    }

    /// Copies the box `bounds` of `tile` into the same elements of the
    /// partition.
    fn store_box(
        &mut self,
        part: &Partition<'ctx>,
        base: PointerValue<'ctx>,
        tile: &TileRef,
        bounds: &[IntValue<'ctx>],
    ) -> Result<(), HostError> {
        let strides = tile.strides();
        self.by_last_stride(part, bounds, &mut |l, part| {
            l.nest(bounds, &mut |l, j| {
                let from = l.linear(j, &strides, 0)?;
                let v = l.get(tile, from)?;
                let at = l.tensor_offset(part, j)?;
                l.write_global(base, tile.dtype, at, v)
            })
        })
    }

    /// The address of the partition's origin, element
    /// `Σ origin_k · stride_k` of the tensor of `dtype`. It is formed once,
    /// before the loops over the tile, which then index from it: an
    /// origin folded into each element's offset can become an `or` with
    /// the loop counter (a tile's origin is a multiple of its power-of-two
    /// extent), which LLVM's vectorizer does not see as consecutive.
    fn tensor_base(
        &self,
        part: &Partition<'ctx>,
        dtype: DType,
    ) -> Result<PointerValue<'ctx>, HostError> {
        let at = self.strided(&part.origin, &part.tensor.strides)?;
        self.gep(self.e.mem_type(dtype), part.tensor.base, at)
    }

    /// The element offset of tile element `j` of the partition from its
    /// origin.
    pub(super) fn tensor_offset(
        &self,
        part: &Partition<'ctx>,
        j: &[IntValue<'ctx>],
    ) -> Result<IntValue<'ctx>, HostError> {
        self.strided(j, &part.tensor.strides)
    }

    /// `Σ index_k · strides_k`: the element offset of `index` in a tensor
    /// of `strides`.
    pub(super) fn strided(
        &self,
        index: &[IntValue<'ctx>],
        strides: &[IntValue<'ctx>],
    ) -> Result<IntValue<'ctx>, HostError> {
        let mut at = self.i64(0);
        for (&j, &s) in index.iter().zip(strides) {
            let term = self.e.b.build_int_mul(j, s, "term")?;
            at = self.e.b.build_int_add(at, term, "at")?;
        }
        Ok(at)
    }

    /// Element `at` of a tensor from `base`, in its register type.
    pub(super) fn read_global(
        &self,
        base: PointerValue<'ctx>,
        dtype: DType,
        at: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let ty = self.e.mem_type(dtype);
        let ptr = self.gep(ty, base, at)?;
        let v = self.e.b.build_load(ty, ptr, "g")?;
        unaligned(v.as_instruction_value())?;
        self.mark(v.as_instruction_value(), Memory::Tensor)?;
        Ok(self.e.register_value(v, dtype)?)
    }

    /// Writes `v` to element `at` of a tensor from `base`.
    pub(super) fn write_global(
        &self,
        base: PointerValue<'ctx>,
        dtype: DType,
        at: IntValue<'ctx>,
        v: BasicValueEnum<'ctx>,
    ) -> Result<(), HostError> {
        let ty = self.e.mem_type(dtype);
        let ptr = self.gep(ty, base, at)?;
        let v = self.e.memory_value(v, dtype)?;
        let store = self.e.b.build_store(ptr, v)?;
        unaligned(Some(store))?;
        self.mark(Some(store), Memory::Tensor)
    }
}

/// Marks a tensor access as unaligned.
fn unaligned(inst: Option<InstructionValue<'_>>) -> Result<(), HostError> {
    inst.ok_or_else(|| HostError::internal("a memory access that is not an instruction"))?
        .set_alignment(1)
        .map_err(|e| HostError::internal(format!("setting an alignment: {e}")))
}
