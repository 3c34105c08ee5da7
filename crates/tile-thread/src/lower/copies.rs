//! `cp.async` for the operands of tensor-core `dot`s: a load read only as
//! such dots' operands (as it is, squeezed, or transposed: [`operand_chain`])
//! is not lowered where it stands (it is *deferred*); each dot copies its
//! partition straight from global to shared memory, 16 bytes per copy, with
//! no registers in between, or a pipelined loop copies it once for all of
//! them (`software_pipeline.rs`).
//!
//! The copies need the tensor's rows contiguous and 16-byte aligned, which
//! is a runtime property: the dot emits `if contiguous { cp.async … } else {
//! ld.global, st.shared element by element }` behind the same uniform test
//! as vector loads (the fallback stores each element as soon as it is
//! loaded, so that it needs few registers). Each thread copies the chunks of 8 (16-bit) elements its
//! registers would hold in the blocked layout with 8 elements per thread;
//! a masked load's chunk reads only its elements inside the tensor (a
//! prefix of the row) and writes zeros for the rest, the `zero` padding.

use super::operand_swizzle::OperandLayout;
use super::placement::{linear_index, placements, Placement};
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::{tensor_dot, DistLayout, TensorDot};
use crate::program::{Reg, Region, SharedId, ThreadOpKind};
use std::collections::{HashMap, HashSet};
use tile_ir::{BinaryOp, CmpPred, DType, Function, OpId, OpKind, Padding, Scalar, Value};

/// The source of `operand` when it is a `reshape` that only drops axes of
/// extent 1 into a matrix: a batched or per-head view's tile
/// (`load(b, j, h, 0)` of `[1, BN, 1, D]`) taken as a `[BN, D]` operand.
/// The copies of such a load move its elements as the operand's.
pub(super) fn squeezed_source(func: &Function, operand: Value) -> Option<Value> {
    let op = func.op(func.defining_op(operand)?);
    let (OpKind::Reshape { .. }, [source]) = (&op.kind, op.operands.as_slice()) else {
        return None;
    };
    let (Some(from), Some(to)) = (func.ty(*source).tile_shape(), func.ty(operand).tile_shape())
    else {
        return None;
    };
    let kept = |dims: &[usize]| -> Vec<usize> { dims.iter().copied().filter(|&d| d > 1).collect() };
    (to.rank() == 2 && from.rank() > 2 && kept(from.dims()) == to.dims()).then_some(*source)
}

/// The source of `operand` when it is the transpose (`permute [1, 0]`) of
/// a matrix.
fn transposed_source(func: &Function, operand: Value) -> Option<Value> {
    let op = func.op(func.defining_op(operand)?);
    match (&op.kind, op.operands.as_slice()) {
        (OpKind::Permute { perm }, [source]) if perm.as_slice() == [1, 0] => Some(*source),
        _ => None,
    }
}

/// The values between a tensor-core operand and the tile its copies move:
/// the operand, then (when it is a transpose) the transposed matrix, then
/// (when that is a [`squeezed_source`]) the squeezed tile; the last is the
/// tile copied.
pub(super) fn operand_chain(func: &Function, operand: Value) -> Vec<Value> {
    let mut chain = vec![operand];
    if let Some(source) = transposed_source(func, operand) {
        chain.push(source);
    }
    let last = chain[chain.len() - 1];
    chain.extend(squeezed_source(func, last));
    chain
}

/// Whether the operand is the transpose of the tile its copies move
/// ([`operand_chain`]): that tile is then staged as it is, and the dot
/// reads it transposed (a K-major B).
pub(crate) fn is_transposed(func: &Function, operand: Value) -> bool {
    transposed_source(func, operand).is_some()
}

/// The two axes of a tile of `shape` that hold a tensor-core operand's
/// rows and columns: its axes of extents above 1 when there are two (the
/// tile of a [`squeezed_source`]), else its last two.
pub(super) fn operand_axes(shape: &[usize]) -> (usize, usize) {
    let kept: Vec<usize> = (0..shape.len()).filter(|&a| shape[a] > 1).collect();
    match kept.as_slice() {
        &[r, c] => (r, c),
        _ => (shape.len().saturating_sub(2), shape.len().saturating_sub(1)),
    }
}

/// The loads to defer: each read only as the tile of `a` or `b` operands
/// of `dot`s for which `on_tensor_cores` holds, one or more
/// ([`operand_chain`]: directly, through a reshape that only drops axes of
/// extent 1, or for `b`, where `reads_transposed_b` holds, through a
/// transpose), those dots in the load's region with the chains' ops
/// between, no write to memory (or nested region) between the load and
/// its last reader, and no other use of any value of a chain but the
/// load's. Each reader copies it where it is (`Lowerer::stage_deferred`);
/// a pipelined loop copies it once for all (`software_pipeline.rs`).
pub(super) fn deferred_loads(
    func: &Function,
    on_tensor_cores: impl Fn(OpId) -> bool,
    reads_transposed_b: impl Fn(OpId) -> bool,
) -> HashSet<OpId> {
    let mut uses: HashMap<Value, usize> = HashMap::new();
    func.walk(&mut |id| {
        for &v in &func.op(id).operands {
            *uses.entry(v).or_default() += 1;
        }
    });
    let once = |v: &Value| uses.get(v) == Some(&1);
    let mut deferred = HashSet::new();
    let mut regions = vec![&func.body];
    while let Some(region) = regions.pop() {
        // Each load of the region: its position, the operands that read
        // it, and the position of the last dot among them.
        let mut readers: HashMap<OpId, (usize, usize, usize)> = HashMap::new();
        for (at, &id) in region.ops.iter().enumerate() {
            let op = func.op(id);
            regions.extend(op.regions.iter());
            let Some(operands) = product_operands(op).filter(|_| on_tensor_cores(id)) else {
                continue;
            };
            for (which, &operand) in operands.iter().enumerate() {
                if is_transposed(func, operand) && (which != 1 || !reads_transposed_b(id)) {
                    continue;
                }
                let chain = operand_chain(func, operand);
                let (source, links) = chain.split_last().expect("a chain holds the operand");
                let Some(load) = func.defining_op(*source) else {
                    continue;
                };
                let Some(from) = region.ops[..at].iter().position(|&o| o == load) else {
                    continue;
                };
                // The transpose and the reshape, if any, sit between them.
                let between = &region.ops[from + 1..at];
                let in_between = links
                    .iter()
                    .all(|&v| func.defining_op(v).is_some_and(|o| between.contains(&o)));
                if in_between && links.iter().all(once) {
                    let entry = readers.entry(load).or_insert((from, 0, at));
                    entry.1 += 1;
                    entry.2 = at;
                }
            }
        }
        for (load, (from, count, last)) in readers {
            let eligible = matches!(
                func.op(load).kind,
                OpKind::Load
                    | OpKind::LoadMasked {
                        padding: Padding::Zero
                    }
            );
            let writes_between = region.ops[from + 1..last].iter().any(|&o| {
                let kind = &func.op(o).kind;
                kind.writes_memory() || kind.orders_memory() || !func.op(o).regions.is_empty()
            });
            let read_only_so = uses.get(&func.op(load).results[0]) == Some(&count);
            if eligible && !writes_between && read_only_so {
                deferred.insert(load);
            }
        }
    }
    deferred
}

/// The `a` and `b` of the product `op`: a `dot`'s first two operands, a
/// `dot_scaled`'s first and third (its scales stay in registers); `None`
/// for other ops.
pub(super) fn product_operands(op: &tile_ir::Op) -> Option<[Value; 2]> {
    match (&op.kind, op.operands.as_slice()) {
        (OpKind::Dot { .. }, &[a, b, _]) => Some([a, b]),
        (OpKind::DotScaled, &[a, _, b, _, _]) => Some([a, b]),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// Whether `dot` runs on tensor cores with the layout its result was
    /// given.
    pub(super) fn on_tensor_cores(&self, dot: OpId) -> bool {
        self.tensor_plan(dot).is_some()
    }

    /// How `dot` runs on tensor cores, if it does with the layout its
    /// result was given.
    pub(super) fn tensor_plan(&self, dot: OpId) -> Option<TensorDot> {
        let result = self.func.op(dot).results.first()?;
        tensor_dot(self.func, dot, self.program.num_warps, self.tensor_cores)
            .filter(|plan| self.plan.values.get(result) == Some(plan.layout()))
    }

    /// The partition indices of the load or store `id` (`i64`, in order).
    pub(super) fn partition_indices(&mut self, id: OpId) -> Result<Vec<Reg>, LowerError> {
        let func = self.func;
        let mut indices = Vec::new();
        for &i in func.op(id).operands.iter().skip(1) {
            let i = self.scalar(id, i)?;
            indices.push(self.cast(i, DType::I64));
        }
        Ok(indices)
    }

    /// Stages the deferred `load` into `alloc` (see [`Self::copy_partition`]);
    /// the caller lands the copies.
    pub(super) fn stage_deferred(
        &mut self,
        load: OpId,
        alloc: SharedId,
        place: OperandLayout,
    ) -> Result<(), LowerError> {
        match self.copy_chunks(load)? {
            Some(chunks) => {
                let indices = self.partition_indices(load)?;
                self.copy_partition(load, &chunks, &indices, (alloc, None), place)
            }
            None => self.stage_loaded(load, alloc, place),
        }
    }

    /// The blocked layout of `load`'s tile whose registers, `16 / size`
    /// per thread along the innermost axis, are the chunks its copies move
    /// (16 bytes each), or `None` when the tile does not cut into whole
    /// chunks held once (then the load is lowered as usual and stored).
    pub(super) fn copy_chunks(&self, load: OpId) -> Result<Option<DistLayout>, LowerError> {
        let func = self.func;
        let result = func.op(load).results[0];
        let dtype = func.ty(result).dtype();
        let shape = func
            .ty(result)
            .tile_shape()
            .map(|s| s.dims().to_vec())
            .unwrap_or_default();
        let width = 16 / dtype.size_bytes().max(1);
        // Rows of a whole number of chunks (24 FP8 elements are one and a
        // half: a chunk would run into the next row).
        if shape.last().is_none_or(|&cols| !cols.is_multiple_of(width)) {
            return Ok(None);
        }
        let chunks = DistLayout::blocked(&shape, self.program.num_warps, width)?;
        let whole = chunks.size_per_thread.last() == Some(&width) && !chunks.has_copies();
        Ok(whole.then_some(chunks))
    }

    /// Copies the partition of the deferred `load` at `indices` (`i64`)
    /// into `alloc`, laid out as `place` and shifted by `offset` (a uniform
    /// `i32` register, or 0): each thread moves the chunks it holds in `chunks`,
    /// with `cp.async` when the tensor's rows are contiguous and aligned,
    /// else element by element. Everything is computed per chunk, not per
    /// element: its address, and how many of its elements lie inside the
    /// tensor (a prefix of the row; the copy zero-fills the rest).
    pub(super) fn copy_partition(
        &mut self,
        load: OpId,
        chunks: &DistLayout,
        indices: &[Reg],
        (alloc, offset): (SharedId, Option<Reg>),
        place: OperandLayout,
    ) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(load);
        let Lowered::PartitionView {
            param,
            tile,
            window,
        } = self.get(load, op.operands[0])?
        else {
            return Err(self.invalid(load, "the operand is not a partition view"));
        };
        let dtype = func.ty(op.results[0]).dtype();
        let width = *chunks.size_per_thread.last().unwrap_or(&1);
        let masked = matches!(op.kind, OpKind::LoadMasked { .. });
        let view = (param, &tile, window.as_ref());
        let access = self.chunk_access(load, view, chunks, indices, masked)?;
        let coords = self.coords(chunks);
        let count = chunks.registers() / width;
        let (row, col) = operand_axes(&chunks.shape);
        // A chunk placed a constant past an earlier one in every thread is
        // stored there: one swizzled index per class of chunks.
        let firsts: Vec<usize> = (0..count).map(|g| g * width).collect();
        let placed = placements(chunks, &firsts, |c| {
            place.placed(linear_index(chunks, c) as usize, (c[row], c[col])) as i64
        });
        let mut destinations: Vec<Reg> = Vec::new();
        for (g, placement) in placed.into_iter().enumerate() {
            let at = match placement {
                Placement::After { of, by } => {
                    let by = self.i32c(by);
                    self.binary(BinaryOp::Add, destinations[of], by)
                }
                Placement::Own => {
                    let first = g * width;
                    let position = (coords.axes[first][row], coords.axes[first][col]);
                    let at = self.operand_index(place, coords.linear[first], position);
                    match offset {
                        Some(o) => self.binary(BinaryOp::Add, at, o),
                        None => at,
                    }
                }
            };
            destinations.push(at);
        }
        let contiguous = self.view_contiguous((param, window.as_ref()), tile.rank(), width, dtype);
        let saved = std::mem::take(&mut self.current);
        let mut previous = None;
        for (g, &at) in destinations.iter().enumerate() {
            let address = self.chunk_address(&access.addresses, g, &mut previous, window.as_ref());
            let live = coords.live[g * width];
            let operands = vec![at, address, access.counts[g], live];
            let copy = self.emit_op(ThreadOpKind::CopyAsync { param, alloc }, operands, &[]);
            self.program.notes.insert(copy, access.note.clone());
        }
        self.emit_op(ThreadOpKind::Yield, vec![], &[]);
        let then_ops = std::mem::take(&mut self.current);
        // The same chunks element by element, in a loop per chunk (so that
        // no element's address is loop-invariant: LLVM would hoist them all
        // out of a main loop): element `e` lies `e` inner strides past the
        // chunk's first and is inside when `e < count`; the layouts keep
        // chunks whole, so it lands `e` past the chunk's first.
        let inner = self.tensor_meta(param, tile.rank() - 1, true);
        let mut previous = None;
        for (g, &at) in destinations.iter().enumerate() {
            let address = self.chunk_address(&access.addresses, g, &mut previous, window.as_ref());
            let live = coords.live[g * width];
            self.element_copy(
                (param, alloc, dtype),
                [at, address, access.counts[g], live],
                (inner, width),
                &access.note,
            );
        }
        self.emit_op(ThreadOpKind::Yield, vec![], &[]);
        let else_ops = std::mem::replace(&mut self.current, saved);
        let regions = vec![
            Region {
                args: vec![],
                ops: then_ops,
            },
            Region {
                args: vec![],
                ops: else_ops,
            },
        ];
        let branch = self
            .program
            .create_op(ThreadOpKind::If, vec![contiguous], &[], regions);
        self.current.push(branch);
        Ok(())
    }

    /// `for e in 0..width`: element `e` of the chunk at tensor element
    /// `address` (`e` strides of `inner` further), loaded if `e < count`
    /// (zero otherwise), stored at `at + e` of `alloc` if `live`; the
    /// registers in `cp.async`'s operand order.
    fn element_copy(
        &mut self,
        (param, alloc, dtype): (usize, SharedId, DType),
        [at, address, count, live]: [Reg; 4],
        (inner, width): (Reg, usize),
        note: &str,
    ) {
        let (lo, hi, step) = (self.i32c(0), self.i32c(width as i64), self.i32c(1));
        let padding = self.constant(Scalar::zero(dtype));
        let e = self.program.new_reg(DType::I32);
        let saved = std::mem::take(&mut self.current);
        let wide = self.cast(e, DType::I64);
        let offset = self.binary(BinaryOp::Mul, wide, inner);
        let element = self.binary(BinaryOp::Add, address, offset);
        let inside = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![e, count], DType::Bool);
        let kind = ThreadOpKind::LoadGlobal { param, width: 1 };
        let loaded = self.emit_op(kind, vec![element, inside, padding], &[dtype]);
        self.program.notes.insert(loaded, note.to_string());
        let value = self.program.ops[loaded].results[0];
        let index = self.binary(BinaryOp::Add, at, e);
        self.emit_op(
            ThreadOpKind::StoreShared { alloc, width: 1 },
            vec![index, value, live],
            &[],
        );
        self.emit_op(ThreadOpKind::Yield, vec![], &[]);
        let ops = std::mem::replace(&mut self.current, saved);
        let body = Region { args: vec![e], ops };
        let op = self
            .program
            .create_op(ThreadOpKind::For, vec![lo, hi, step], &[], vec![body]);
        self.current.push(op);
    }

    /// Lowers the deferred `load` where it is needed and stores its
    /// registers into `alloc`.
    fn stage_loaded(
        &mut self,
        load: OpId,
        alloc: SharedId,
        place: OperandLayout,
    ) -> Result<(), LowerError> {
        let was_deferred = self.deferred.remove(&load);
        self.memory(load)?;
        if was_deferred {
            self.deferred.insert(load);
        }
        let result = self.func.op(load).results[0];
        let (layout, regs) = self.tile(load, result)?;
        self.store_tile(alloc, &layout, &regs, place);
        Ok(())
    }
}
