//! Layout assignment: a distributed layout for every tile value.
//!
//! Every tile value of shape `S` gets the default
//! blocked layout of `S` ([`DistLayout::blocked`]) for the specialization's
//! warp count (with its warps across the kept axes where its group is
//! reduced along an outer axis, `reduced.rs`), with consecutive elements per thread along the innermost
//! axis so that a load or store can move them in one 16-byte vector access
//! (`vectors.rs`: 8 for the values of bf16 and f16 accesses, 4 for f32). Whether it may is a runtime question (the tensor's strides
//! and base address are runtime values): the lowering emits both forms behind
//! a uniform contiguity and alignment test. Because two values of one shape
//! mostly share a layout, elementwise ops rarely need a conversion; every op
//! whose result element depends on other coordinates of its operand
//! (movement, reduction, scan, dot) goes through shared memory.
//!
//! A `dot` that runs on tensor cores ([`mma_dot`]) gets the instruction's
//! accumulator layout for its result, and so does the value its `c` comes
//! from when that is a `full` or the carried value of a `for` started by
//! one: the accumulator of a K loop stays in the instruction's registers.
//!
//! An order-free reduction without `keepdim` (see [`order_free`]), an exact
//! float sum whose rows each lie in one warp's lanes (folded there as a
//! chain, `lower/scan_chain.rs`), or an arg reduction, gets its operand's
//! layout with the axis dropped ([`DistLayout::drop_axis`]), and a
//! reduction with `keepdim` the **slice** of its operand's layout
//! ([`DistLayout::slice`]), so that the usual `reduce → broadcast →
//! elementwise with the operand` (softmax, layernorm) broadcasts in
//! registers; for an accumulator's layout too, whose rows then reduce by
//! quad shuffles (`lower/reduce_tree.rs`).
//!
//! Then layouts follow their users (`propagate.rs`): an elementwise op
//! computes in the layout of its weightiest operand (a `dot`'s result, a
//! load, a reduction before a broadcast, before a loop-carried value started
//! by a `full`, before what is computed from `full`s and `iota`s alone), and
//! the lighter operands take that layout instead of being converted to it:
//! a mask `iota + j * BN < seq` is computed in it, a broadcast broadcasts
//! into it; a loop-carried value started by a `full` (attention's running
//! maximum and sum, an accumulator rescaled before its `dot`) takes the
//! layout of what the loop yields for it; a loaded tile repeated by a
//! broadcast (a block-scaled product's scales) is loaded in the layout of
//! its repetition where each thread reuses what it loads (`split.rs` splits
//! an axis that a reshape merges); a `gather` or an `atomic` places its
//! index, mask and value tiles in its own layout alike. Both steps run
//! twice, since each feeds the other (the scores' `select` takes the accumulator's layout
//! before their maximum can take its slice). Where two layouts still meet in
//! one op (an elementwise op, a carried or yielded value, a `dot`
//! accumulator) the lowering converts the later operand to the first's
//! layout through shared memory.

mod blocked;
mod chain;
mod groups;
mod mma;
mod pairs;
mod propagate;
mod reduced;
mod repeated;
mod scales;
mod split;
mod tcgen05;
mod transposed_b;
mod unit_axes;
mod vectors;
mod wgmma;

pub(crate) use blocked::{copy_digits, row_major};
pub use blocked::{DistLayout, LayoutBuildError, LayoutKind};
pub use mma::{mma_dot, MmaDot};
pub(crate) use propagate::unit_axes_inserted;
pub use scales::{scale_layouts, tensor_memory_scale_layouts};
pub use tcgen05::{tcgen05_dot, Tcgen05Dot};
pub use wgmma::{wgmma_dot, WgmmaDot, WGMMA_N};

/// How a `dot` runs on tensor cores.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorDot {
    /// On a warp-level instruction (`mma.sync`, WMMA, MFMA).
    Mma(MmaDot),
    /// On Hopper's warpgroup `wgmma`.
    Wgmma(WgmmaDot),
    /// On Blackwell's `tcgen05.mma`, accumulating in tensor memory.
    Tcgen05(Tcgen05Dot),
}

impl TensorDot {
    /// The layout of the accumulator (of `c` and the result).
    pub fn layout(&self) -> &DistLayout {
        match self {
            TensorDot::Mma(plan) => &plan.layout,
            TensorDot::Wgmma(plan) => &plan.layout,
            TensorDot::Tcgen05(plan) => &plan.layout,
        }
    }

    /// Whether the instruction can read its B staged transposed, K-major:
    /// `mma.sync` (by `ldmatrix` without `.trans`, as A: a lane's register
    /// is consecutive `k` of its column, 2 16-bit ones, 4 FP8 ones or 1
    /// TF32 one), `wgmma` and `tcgen05.mma` (`imm-trans-b = 0` for 16-bit
    /// operands; B's rows as A's, 128 bytes of `k` or all of a `K` of 32
    /// or 64 bytes, under the swizzle of rows that wide). Not WMMA or
    /// MFMA, nor an `mma.sync` product computed transposed.
    pub fn reads_k_major_b(&self) -> bool {
        match self {
            TensorDot::Wgmma(_) | TensorDot::Tcgen05(_) => true,
            TensorDot::Mma(p) => {
                p.kind.family() == tile_hw::mma::MmaFamily::MmaSync && !p.transposed
            }
        }
    }

    /// Whether the instruction reads its operands from shared memory
    /// through matrix descriptors, staged in the canonical swizzled blocks
    /// (`wgmma`, `tcgen05.mma`), by the asynchronous proxy.
    pub fn reads_descriptors(&self) -> bool {
        self.descriptor_a_columns().is_some()
    }

    /// The operands' dtype.
    pub fn operand_dtype(&self) -> DType {
        match self {
            TensorDot::Mma(p) => p.kind.operand_dtype(),
            TensorDot::Wgmma(p) => p.kind.dtype,
            TensorDot::Tcgen05(p) => p.kind.dtype,
        }
    }

    /// The columns of a row of a K-major B's staged blocks (its `k`) of an
    /// instruction that [reads descriptors](Self::reads_descriptors).
    pub fn descriptor_b_k_columns(&self) -> Option<usize> {
        match self {
            TensorDot::Mma(_) => None,
            TensorDot::Wgmma(p) => Some(p.b_k_columns()),
            TensorDot::Tcgen05(p) => Some(p.b_k_columns()),
        }
    }

    /// The `n` of an MN-major B's staged blocks: one 128-byte swizzle atom
    /// of its elements (64 16-bit, 32 `f32`).
    pub fn descriptor_b_n_columns(&self) -> usize {
        128 / self.operand_dtype().size_bytes()
    }

    /// The `k` of a row of A's staged blocks (64, 32 or 16) of an
    /// instruction that [reads descriptors](Self::reads_descriptors).
    pub fn descriptor_a_columns(&self) -> Option<usize> {
        match self {
            TensorDot::Mma(_) => None,
            TensorDot::Wgmma(p) => Some(p.a_columns()),
            TensorDot::Tcgen05(p) => Some(p.a_columns()),
        }
    }
}

/// How the `dot` `id` of `func` runs on `tensor_cores` with `num_warps`
/// warps: `wgmma` where the target has it and the dot fits it, else a
/// warp-level instruction ([`mma_dot`]), else `None` (a chain of FMAs).
pub fn tensor_dot(
    func: &Function,
    id: OpId,
    num_warps: u32,
    tensor_cores: TensorCores,
) -> Option<TensorDot> {
    tcgen05_dot(func, id, num_warps, tensor_cores)
        .map(TensorDot::Tcgen05)
        .or_else(|| wgmma_dot(func, id, num_warps, tensor_cores).map(TensorDot::Wgmma))
        .or_else(|| mma_dot(func, id, num_warps, tensor_cores).map(TensorDot::Mma))
}

use crate::lower::{reduces_as_chain, TensorCores};
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{DType, Function, OpId, OpKind, ReduceKind, Type, Value};

/// The layouts of one function's tile values.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutPlan {
    /// The warps of a block.
    pub num_warps: u32,
    /// The layout of each tile value, by value.
    pub values: BTreeMap<Value, DistLayout>,
}

/// The order in which a float `reduce sum` may combine its elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SumOrder {
    /// The interpreter's: left to right, bit for bit.
    #[default]
    InOrder,
    /// Any order and grouping (`fast_math`), within docs/semantics.md §6's
    /// bound: a tree, as for `max`.
    Any,
}

/// Assigns a layout to every tile value of `func` (results and region
/// arguments) for blocks of `num_warps` warps on a target with
/// `tensor_cores`, float sums combined in `sums` order.
pub fn assign(
    func: &Function,
    num_warps: u32,
    tensor_cores: TensorCores,
    sums: SumOrder,
) -> Result<LayoutPlan, LayoutBuildError> {
    let mut values = BTreeMap::new();
    let across = reduced::reduced_axes(func, sums);
    for (value, width) in vectors::vector_widths(func) {
        if let Type::Tile(t) = func.ty(value) {
            let layout = match across.get(&value) {
                Some(&axis) => DistLayout::blocked_across(t.shape.dims(), num_warps, width, axis)?,
                None => DistLayout::blocked(t.shape.dims(), num_warps, width)?,
            };
            values.insert(value, layout);
        }
    }
    let mut mma_dots = Vec::new();
    let mut k_major_b = BTreeSet::new();
    func.walk(&mut |id| {
        if let Some(plan) = tensor_dot(func, id, num_warps, tensor_cores) {
            if plan.reads_k_major_b() {
                k_major_b.insert(id);
            }
            mma_dots.push((id, plan.layout().clone()));
        }
    });
    // The accumulators first: the loop results they decide anchor the
    // reductions and the elementwise epilogue (`select(acc > 0, acc, ..)`)
    // that follow.
    for (id, layout) in &mma_dots {
        values.insert(func.op(*id).results[0], layout.clone());
        accumulate_in_place(func, *id, layout, &mut values);
        load_scales_in_place(func, *id, (num_warps, tensor_cores), &mut values);
    }
    // Twice: the second pass places the reductions, broadcasts and loop-carried
    // values of the first's decisions (a softmax's scores take the accumulator's
    // layout only once their `select` has, and the running maximum its slice
    // only once the loop carries it).
    for _ in 0..2 {
        place_reductions(
            func,
            (sums, tensor_cores.shuffle_span(num_warps)),
            &mut values,
        );
        drop_unit_axes(func, &mut values);
        fit_broadcast_sources(func, &mut values);
        pairs::place_fp4_pairs(func, num_warps, &mut values);
        propagate::propagate(func, (tensor_cores, num_warps), &mut values);
        propagate::carry_through_loops(func, &mut values);
    }
    transposed_b::keep_transposed_registers(func, &k_major_b, &mut values);
    Ok(LayoutPlan { num_warps, values })
}

/// The loaded scale tiles of the block-scaled product `id` take the
/// layouts in which each thread holds the scales it supplies
/// ([`scale_layouts`]): the loads read them into the instruction's
/// registers, with no staging. On MFMA only, where each lane holds one
/// scale per block and step: on `mma.sync`, where a lane holds one per
/// block row or column, step and warp repetition, the registers and the
/// masked byte loads held through the loop cost more than staging them
/// (the MXFP8 example's 128×64×64 tile on sm_120a: 154 registers held,
/// 98 staged; on gfx950 82 VGPRs held, 89 staged). On sm_100a's
/// `tcgen05.mma`, each thread holds the scales it stores into tensor
/// memory ([`tensor_memory_scale_layouts`]), which saves their staging.
fn load_scales_in_place(
    func: &Function,
    id: OpId,
    (num_warps, tensor_cores): (u32, TensorCores),
    values: &mut BTreeMap<Value, DistLayout>,
) {
    let op = func.op(id);
    let (OpKind::DotScaled, &[a, a_scale, _, b_scale, c]) = (&op.kind, op.operands.as_slice())
    else {
        return;
    };
    let dims = |v: Value| func.ty(v).tile_shape().map(|s| s.dims().to_vec());
    let (Some(a), Some(c)) = (dims(a), dims(c)) else {
        return;
    };
    let (&[m, k], &[_, n]) = (a.as_slice(), c.as_slice()) else {
        return;
    };
    let layouts = match tensor_dot(func, id, num_warps, tensor_cores) {
        Some(TensorDot::Mma(plan)) if plan.kind.family() == tile_hw::mma::MmaFamily::Mfma => {
            scale_layouts(&plan, [m, n, k])
        }
        Some(TensorDot::Tcgen05(plan)) => tensor_memory_scale_layouts(&plan, [m, n, k]),
        _ => None,
    };
    let Some(layouts) = layouts else {
        return;
    };
    for (scale, layout) in [a_scale, b_scale].into_iter().zip(layouts) {
        let loaded = func
            .defining_op(scale)
            .is_some_and(|d| matches!(func.op(d).kind, OpKind::Load | OpKind::LoadMasked { .. }));
        if loaded {
            values.insert(scale, layout);
        }
    }
}

/// A reshape that only removes an axis of extent 1 (a reduction's `[R, 1]`
/// row results stored as `[R]`) holds its result as its operand is held,
/// without the axis: the same registers.
fn drop_unit_axes(func: &Function, values: &mut BTreeMap<Value, DistLayout>) {
    func.walk(&mut |id| {
        let op = func.op(id);
        if let (OpKind::Reshape { .. }, [operand], [result]) =
            (&op.kind, op.operands.as_slice(), op.results.as_slice())
        {
            let dropped = unit_axes_inserted(func, *result, *operand)
                .and_then(|axes| values.get(operand)?.drop_axes(&axes));
            if let Some(dropped) = dropped {
                values.insert(*result, dropped);
            }
        }
    });
}

/// Reductions with keepdim produce the slice of their operand's layout, so
/// that broadcasting the result back costs nothing (the tree reductions walk
/// its lanes and warps); an order-free reduction without keepdim, or one
/// that runs as a chain through the lanes (an exact float sum of rows each
/// held by one warp), leaves each row's result where the row was: the
/// operand's layout with the axis dropped.
fn place_reductions(
    func: &Function,
    (sums, span): (SumOrder, u32),
    values: &mut BTreeMap<Value, DistLayout>,
) {
    func.walk(&mut |id| {
        let op = func.op(id);
        if let (
            OpKind::Reduce {
                axis,
                keepdim: true,
                ..
            }
            | OpKind::ArgReduce {
                axis,
                keepdim: true,
                ..
            },
            [operand],
            [result],
        ) = (&op.kind, op.operands.as_slice(), op.results.as_slice())
        {
            if let Some(parent) = values
                .get(operand)
                .filter(|p| p.kind == LayoutKind::Blocked || !p.has_copies())
            {
                let sliced = parent.slice(*axis);
                values.insert(*result, sliced);
            }
        }
        let (free, axis) = match op.kind {
            OpKind::Reduce {
                kind,
                axis,
                keepdim: false,
            } => {
                // An exact float sum or product whose operand's layout holds
                // each row in one warp's lanes, in runs, folds it in place
                // as a chain through the lanes (`lower/scan_chain.rs`).
                let chains = || {
                    values
                        .get(&op.operands[0])
                        .is_some_and(|p| reduces_as_chain(p, axis, span))
                };
                let dtype = func.ty(op.operands[0]).dtype();
                (order_free(kind, dtype, sums) || chains(), axis)
            }
            OpKind::ArgReduce {
                axis,
                keepdim: false,
                ..
            } => (true, axis),
            _ => return,
        };
        if let ([operand], [result]) = (op.operands.as_slice(), op.results.as_slice()) {
            let dropped = values
                .get(operand)
                .filter(|p| p.kind == LayoutKind::Blocked || !p.has_copies())
                .and_then(|p| p.drop_axis(axis));
            if let (true, Some(dropped)) = (free, dropped) {
                values.insert(*result, dropped);
            }
        }
    });
}

/// Gives the source of the `c` operand of `dot` `id` the accumulator's
/// `layout`: a `full` or a broadcast directly; a `for`'s carried value, its initial value
/// (if a `full`) and the loop's result when the body yields this dot's result
/// for it.
fn accumulate_in_place(
    func: &Function,
    id: OpId,
    layout: &DistLayout,
    values: &mut BTreeMap<Value, DistLayout>,
) {
    let op = func.op(id);
    // `c` is the last operand of a `dot` and of a `dot_scaled`.
    let (Some(&c), Some(&result)) = (op.operands.last(), op.results.first()) else {
        return;
    };
    if flexible(func, c) || broadcast_tile(func, c) {
        values.insert(c, layout.clone());
        return;
    }
    func.walk(&mut |for_id| {
        let for_op = func.op(for_id);
        let (OpKind::For { .. }, Some(body)) = (&for_op.kind, for_op.regions.first()) else {
            return;
        };
        // Region arguments: the induction variable, then the carried values.
        let Some(slot) = body.args.iter().skip(1).position(|&a| a == c) else {
            return;
        };
        let yielded = body
            .ops
            .last()
            .map(|&y| func.op(y))
            .filter(|y| y.kind == OpKind::Yield)
            .and_then(|y| y.operands.get(slot).copied());
        let init = for_op.operands.get(3 + slot).copied();
        if let (Some(init), Some(true)) = (init, yielded.map(|y| y == result)) {
            if flexible(func, init) {
                values.insert(init, layout.clone());
                values.insert(c, layout.clone());
                if let Some(&r) = for_op.results.get(slot) {
                    values.insert(r, layout.clone());
                }
            }
        }
    });
}

/// Whether a reduction of `kind` on `dtype` may combine in any order:
/// integers (wrapping), and float `max`/`min`, which the interpreter
/// defines NaN-propagating with a canonical NaN and with `-0` below `+0`,
/// so they are commutative and associative bit for bit; and float sums
/// when `sums` is [`SumOrder::Any`]. Such reductions run as trees (in
/// thread, shuffles, across warps).
pub fn order_free(kind: ReduceKind, dtype: DType, sums: SumOrder) -> bool {
    dtype.is_int()
        || (dtype.is_float() && matches!(kind, ReduceKind::Max | ReduceKind::Min))
        || (dtype.is_float() && kind == ReduceKind::Sum && sums == SumOrder::Any)
}

/// Gives each load, `full` or `iota` that is broadcast (at its first
/// broadcast) the layout that broadcasts to the result in registers
/// ([`DistLayout::fit`]): layernorm's `[C]` weights and column indices are
/// loaded and computed right where the `[R, C]` tile needs them.
fn fit_broadcast_sources(func: &Function, values: &mut BTreeMap<Value, DistLayout>) {
    let mut decided = BTreeSet::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        let (OpKind::Broadcast { .. } | OpKind::Expand { .. }, [x], [result]) =
            (&op.kind, op.operands.as_slice(), op.results.as_slice())
        else {
            return;
        };
        let source = func.defining_op(*x).map(|d| &func.op(d).kind);
        let any_layout = matches!(
            source,
            Some(
                OpKind::Load
                    | OpKind::LoadMasked { .. }
                    | OpKind::Full { .. }
                    | OpKind::Iota { .. }
            )
        );
        let (Some(Type::Tile(t)), Some(target)) =
            (func.values.get(*x).map(|i| &i.ty), values.get(result))
        else {
            return;
        };
        if any_layout && decided.insert(*x) {
            if let Some(fitted) = target.fit(t.shape.dims()) {
                values.insert(*x, fitted);
            }
        }
    });
}

/// Whether `v` is a broadcast of a tile (a bias row, a row statistic
/// broadcast over the columns): it takes its user's layout, into which its
/// source broadcasts in registers where it can.
fn broadcast_tile(func: &Function, v: Value) -> bool {
    func.defining_op(v).is_some_and(|id| {
        let op = func.op(id);
        matches!(op.kind, OpKind::Broadcast { .. } | OpKind::Expand { .. })
            && op
                .operands
                .first()
                .is_some_and(|&x| matches!(func.ty(x), Type::Tile(_)))
    })
}

/// Whether `v` is computed the same way in any layout (a `full`, an `iota`
/// or a broadcast scalar), so that it should take its user's layout.
fn flexible(func: &Function, v: Value) -> bool {
    let Some(id) = func.defining_op(v) else {
        return false;
    };
    let op = func.op(id);
    match op.kind {
        OpKind::Full { .. } | OpKind::Iota { .. } => true,
        OpKind::Broadcast { .. } => op
            .operands
            .first()
            .is_some_and(|&x| matches!(func.ty(x), Type::Scalar(_))),
        _ => false,
    }
}
