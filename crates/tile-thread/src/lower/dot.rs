//! `dot` on CUDA cores, exact: one fused multiply-add per `k`, ascending.
//!
//! Both operands are staged in shared memory (one barrier for the two); each
//! register `(m, n)` of the accumulator, in the accumulator's layout, then
//! computes (with `k` outermost, so that the registers of a thread on one row
//! share each `a[m, k]` load and those on one column each `b[k, n]` load) `acc = fma(a[m, k], b[k, n], acc)` for `k = 0, 1, …, K-1` from its
//! own `c` register, the operands widened exactly to the accumulator dtype
//! first — the interpreter's order and rounding, so the result is
//! bit-identical. For `i8` operands the step is `acc + a * b` in `i32`; for
//! precision `tf32` each operand element is first rounded to TF32.

use super::block_scales::ProductScales;
use super::held_operands::OperandKey;
use super::operand_swizzle::OperandLayout;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::{tensor_dot, DistLayout, TensorDot, WGMMA_N};
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_hw::mma::MmaFamily;
use tile_ir::{BinaryOp, CmpPred, DType, DotPrecision, OpId, OpKind, UnaryOp, Value};

/// Where a tensor-core `dot`'s operands sit.
#[derive(Clone, Debug)]
pub(super) struct StagedOperands {
    /// Where `a` is.
    pub(super) a: OperandA,
    /// The allocation of `b`.
    pub(super) b: SharedId,
    /// Whether `b: [K, N]` is staged transposed, as the `[N, K]` tile its
    /// copies moved (`copies::operand_chain`): K-major, read as `a` is.
    pub(super) b_transposed: bool,
    /// How each operand is laid out in shared memory.
    pub(super) layouts: [OperandLayout; 2],
    /// Each operand's offset in its allocation (the stage of a pipelined
    /// loop), added after the layout's placement.
    pub(super) offsets: [Option<Reg>; 2],
    /// A block-scaled product's scales (`block_scales.rs`), none of them
    /// still to stage.
    pub(super) scales: Option<ProductScales>,
}

/// Where a tensor-core `dot` finds its `a` operand.
#[derive(Clone, Debug)]
pub(super) enum OperandA {
    /// Staged in this allocation.
    Shared(SharedId),
    /// In registers, already in the fragments of a warp-level instruction
    /// or of `wgmma`: the fragment of `k`-step `s` and block row `r` is
    /// `[s][r]` ([`Lowerer::chained_a_fragments`],
    /// [`Lowerer::chained_wgmma_fragments`], `invariant_operands.rs`).
    Registers(Vec<Vec<Vec<Reg>>>),
    /// Bound for tensor memory (`tcgen05.mma`): the thread's 16-bit
    /// elements in the order `tensor_a.rs` stores them, two a column.
    Tensor(Vec<Reg>),
}

impl StagedOperands {
    /// Both allocations, where both operands are staged.
    pub(super) fn both(&self) -> Option<[SharedId; 2]> {
        match self.a {
            OperandA::Shared(a) => Some([a, self.b]),
            OperandA::Registers(_) | OperandA::Tensor(_) => None,
        }
    }
}

impl Lowerer<'_> {
    /// Lowers `dot`.
    pub(super) fn dot(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        // A `dot_scaled` reaches the lowering only where a block-scaled
        // instruction runs it (`layout_assign::mma_dot`).
        let (a, b, c, scale_values) = match (&op.kind, op.operands.as_slice()) {
            (OpKind::DotScaled, [a, a_scale, b, b_scale, c]) => {
                (a, b, c, Some([*a_scale, *b_scale]))
            }
            (_, [a, b, c]) => (a, b, c, None),
            _ => return Err(self.invalid(id, "dot takes a, b and c")),
        };
        let Some(&result) = op.results.first() else {
            return Err(self.invalid(id, "dot has no result"));
        };
        // An accumulator a loop keeps in tensor memory (`tcgen05.rs`).
        let (lc, rc, resident) = match self.get(id, *c)? {
            Lowered::Resident(layout) => (layout, Vec::new(), true),
            _ => {
                let (lc, rc) = self.tile(id, *c)?;
                (lc, rc, false)
            }
        };
        let dims = |v: Value| func.ty(v).tile_shape().map_or(&[][..], |s| s.dims());
        let (m, k, n) = match (dims(*a), dims(*b), lc.shape.as_slice()) {
            (&[m, k], &[k2, n], &[m2, n2]) if k == k2 && m == m2 && n == n2 => (m, k, n),
            _ => return Err(self.invalid(id, "shapes are not [M, K], [K, N], [M, N]")),
        };
        let (da, db, acc_dtype) = (
            func.ty(*a).dtype(),
            func.ty(*b).dtype(),
            func.ty(result).dtype(),
        );
        let layout = self.layout_of(id, result)?;
        // The accumulator in the result's layout (a conversion only if `c`
        // comes in another one).
        let rc = match resident {
            true => rc,
            false => self.convert(acc_dtype, &lc, &rc, &layout),
        };
        let plan = tensor_dot(func, id, self.program.num_warps, self.tensor_cores)
            .filter(|plan| plan.layout() == &*layout);
        let mut scales = match (scale_values, &plan) {
            (Some(values), Some(TensorDot::Mma(p))) => {
                Some(self.product_scales(id, p, (values, [m, n, k]))?)
            }
            (Some(values), Some(TensorDot::Tcgen05(p))) if p.block_scaled => {
                Some(self.tensor_memory_scales(id, p, (values, [m, n, k]))?)
            }
            (Some(_), _) => {
                return Err(self.invalid(id, "a dot_scaled off a block-scaled instruction"))
            }
            (None, _) => None,
        };
        let operands = [(*a, da, [m, k]), (*b, db, [k, n])];
        // An operand a pipelined loop copied ahead is in its stage buffer
        // already (`software_pipeline.rs`): the loop's barrier made it visible.
        let lowered = [self.get(id, *a)?, self.get(id, *b)?];
        let mut allocs = Vec::new();
        let mut offsets = [None, None];
        // A `b` that is the transpose of a load the dot copies (or its loop
        // copied ahead) is staged as the load's `[N, K]` tile; so is, from
        // its registers, the `b` of a `wgmma` narrower than 64 columns or
        // of 8-bit elements, which it reads K-major only
        // (`layout_assign/wgmma.rs`), and the transpose of a tile computed
        // in registers where the instruction reads B K-major too (weights
        // stored `[N, K]` and dequantized: their threads hold runs of `k`,
        // which go to shared memory as they are, in vectors).
        let k_major_b_only = match &plan {
            Some(TensorDot::Wgmma(p)) => p.k_major_b(),
            Some(TensorDot::Tcgen05(p)) => p.k_major_b(),
            _ => false,
        };
        // A `b` staged before its loop (`invariant_operands.rs`).
        let preset_b = self.preloaded_b.get(&id).copied();
        let b_transposed = preset_b.map_or_else(
            || {
                k_major_b_only
                    || super::copies::is_transposed(func, *b)
                        && match lowered[1] {
                            Lowered::Deferred { .. } | Lowered::Staged { .. } => true,
                            Lowered::Tile { ref layout, .. } => {
                                self.reads_transposed_b(id) && layout.permuted(&[1, 0]).is_some()
                            }
                            _ => false,
                        }
            },
            |p| p.transposed,
        );
        let layouts = [0, 1].map(|i| {
            let [rows, cols] = operands[i].2;
            match (i, preset_b, &lowered[i]) {
                (1, Some(p), _) => p.place,
                // As its loop's pipeline laid it out.
                (_, _, &Lowered::Staged { place, .. }) => place,
                (1, None, _) if b_transposed => {
                    self.operand_layout(plan.as_ref(), [cols, rows], i, true)
                }
                _ => self.operand_layout(plan.as_ref(), [rows, cols], i, false),
            }
        });
        let wgmma = plan.as_ref().is_some_and(TensorDot::reads_descriptors);
        // TF32 operands of an instruction that truncates them, rounded where
        // they are staged (`round_staged.rs`).
        let round_tf32 = wgmma && plan.as_ref().map(TensorDot::operand_dtype) == Some(DType::F32);
        let mut to_round = Vec::new();
        // `a` as staged or read before the loop (`invariant_operands.rs`),
        // or a chained product's straight from the registers the previous
        // product's accumulator left (`layout_assign/chain.rs`).
        let preset_a = match (&plan, &lowered[0]) {
            _ if self.preloaded_a.contains_key(&id) => self.preloaded_a.get(&id).cloned(),
            (Some(TensorDot::Mma(plan)), Lowered::Tile { layout, regs }) => self
                .chained_a_fragments(plan, layout, regs, k)
                .map(OperandA::Registers),
            (Some(TensorDot::Wgmma(plan)), Lowered::Tile { layout, regs }) => self
                .chained_wgmma_fragments(plan, layout, regs, k)
                .map(OperandA::Registers),
            (Some(TensorDot::Tcgen05(plan)), Lowered::Tile { layout, regs }) => {
                self.tensor_a(id, plan, (layout, regs))
            }
            _ => None,
        };
        let mut taken = Vec::new();
        for (i, ((_, dtype, shape), lowered)) in operands.iter().zip(&lowered).enumerate() {
            if i == 0 && preset_a.is_some() {
                allocs.push(None);
                continue;
            }
            if let (1, Some(p)) = (i, preset_b) {
                allocs.push(Some(p.alloc));
                continue;
            }
            // Staged alike by an earlier product of the region, and kept.
            let key = OperandKey {
                value: operands[i].0,
                transposed: i == 1 && b_transposed,
                place: layouts[i],
            };
            let held = matches!(lowered, Lowered::Tile { .. } | Lowered::Deferred { .. })
                && plan.is_some();
            if let Some(alloc) = self.held_operand(key).filter(|_| held) {
                allocs.push(Some(alloc));
                continue;
            }
            match lowered {
                Lowered::Staged { alloc, offset, .. } => {
                    allocs.push(Some(*alloc));
                    offsets[i] = Some(*offset);
                    to_round.push((*alloc, Some(*offset), shape[0] * shape[1]));
                }
                _ => {
                    let (alloc, reused) =
                        self.take_operand_buffer(*dtype, shape[0] * shape[1], wgmma);
                    allocs.push(Some(alloc));
                    taken.push((i, alloc, reused));
                    if matches!(lowered, Lowered::Deferred { .. }) {
                        to_round.push((alloc, None, shape[0] * shape[1]));
                    }
                }
            }
        }
        let (a, Some(b)) = (allocs[0], allocs[1]) else {
            return Err(self.invalid(id, "b is not staged"));
        };
        let a = match (preset_a, a) {
            (Some(preset), _) => preset,
            (None, Some(a)) => OperandA::Shared(a),
            (None, None) => return Err(self.invalid(id, "a is neither staged nor in registers")),
        };
        let (scale_allocs, scales_reused) = match &scales {
            Some(scales) => self.take_scale_buffers(scales),
            None => ([None, None], false),
        };
        let mut staged = StagedOperands {
            a,
            b,
            b_transposed,
            layouts,
            offsets,
            scales: None,
        };
        if !taken.is_empty() || scale_allocs.iter().any(Option::is_some) {
            // Fresh allocations; earlier readers of reused memory (or of the
            // last iteration's) must be done first.
            if self.loop_depth > 0 || scales_reused || taken.iter().any(|&(_, _, reused)| reused) {
                self.barrier();
            }
            if let Some(scales) = &mut scales {
                self.store_scales(scales, scale_allocs);
            }
            let mut copied = false;
            for &(i, alloc, _) in &taken {
                let place = staged.layouts[i];
                match &lowered[i] {
                    Lowered::Deferred { load } => {
                        self.stage_deferred(*load, alloc, place)?;
                        copied = true;
                        if plan.is_some() {
                            let transposed = i == 1 && b_transposed;
                            let value = operands[i].0;
                            self.hold_operand(
                                id,
                                OperandKey {
                                    value,
                                    transposed,
                                    place,
                                },
                                alloc,
                            );
                        }
                    }
                    Lowered::Tile { layout, regs } => {
                        let regs = match round_tf32 {
                            true => self.rounded_tf32(regs),
                            false => regs.clone(),
                        };
                        let transposed = i == 1 && b_transposed;
                        self.store_b(alloc, layout, &regs, place, transposed);
                        if plan.is_some() {
                            let key = OperandKey {
                                value: operands[i].0,
                                transposed,
                                place,
                            };
                            self.hold_operand(id, key, alloc);
                        }
                    }
                    _ => return Err(self.invalid(id, "an operand is not a tile")),
                }
            }
            if copied {
                self.emit_op(ThreadOpKind::CommitAsync, vec![], &[]);
                self.emit_op(ThreadOpKind::WaitAsync { pending: 0 }, vec![], &[]);
            }
            // `wgmma` reads through the asynchronous proxy.
            if wgmma {
                self.emit_op(ThreadOpKind::FenceProxyAsync, vec![], &[]);
            }
            self.barrier();
        }
        staged.scales = scales.clone();
        if round_tf32 && !to_round.is_empty() {
            self.round_staged_tf32(&to_round);
        }
        let regs = match plan {
            Some(TensorDot::Mma(plan)) => self.mma_steps(&plan, &staged, (k, n), &rc)?,
            Some(TensorDot::Wgmma(plan)) => self.wgmma_steps(&plan, &staged, (k, n), &rc)?,
            Some(TensorDot::Tcgen05(plan)) if resident => {
                let tensor_a = self.store_tensor_a(id, &plan, &staged, k)?;
                let scales = self.store_scale_images(id, &plan, &staged, (k, n))?;
                if tensor_a || scales {
                    self.barrier();
                }
                self.tcgen05_products(id, &plan, &staged, (k, n), false)?;
                Vec::new()
            }
            Some(TensorDot::Tcgen05(plan)) => {
                self.tcgen05_steps(id, &plan, &staged, (k, n), &rc)?
            }
            None if staged.offsets.iter().all(Option::is_none) => {
                let Some(allocs) = staged.both() else {
                    return Err(self.invalid(id, "a is not staged"));
                };
                let tf32 = matches!(
                    op.kind,
                    OpKind::Dot {
                        precision: DotPrecision::Tf32
                    }
                );
                let dtypes = ([da, db, acc_dtype], tf32);
                self.fma_chain(&layout, allocs, dtypes, (k, n), &rc)
            }
            None => return Err(self.invalid(id, "a prefetched operand of a dot off tensor cores")),
        };
        for &(_, alloc, _) in &taken {
            if !self.is_held(alloc) {
                self.release_shared(alloc);
            }
        }
        for alloc in scales.iter().flat_map(Self::staged_scales) {
            self.release_shared(alloc);
        }
        self.release_held_after(id);
        match resident {
            true if regs.is_empty() => self.bind(id, Lowered::Resident(layout)),
            true => Err(self.invalid(id, "an accumulator in tensor memory off tcgen05.mma")),
            false => self.bind(id, Lowered::Tile { layout, regs }),
        }
    }

    /// How operand `which` (0 for A, 1 for B) is staged for `plan`, `shape`
    /// being the staged tile's: the operand's, or with `transposed` its
    /// transpose's (a K-major B, `[N, K]`, laid out as an A of `N` rows;
    /// see [`Lowerer::reads_transposed_b`]). `wgmma`'s and `tcgen05.mma`'s
    /// swizzled blocks (of
    /// A's `K` columns where that is 16 or 32, else of 64), `mma.sync`'s
    /// swizzled rows (`operand_swizzle.rs`, unless stagings are not
    /// swizzled: `LowerOptions::swizzle_shared`), else plain rows.
    pub(super) fn operand_layout(
        &self,
        plan: Option<&TensorDot>,
        shape: [usize; 2],
        which: usize,
        transposed: bool,
    ) -> OperandLayout {
        let read_as = if transposed { 0 } else { which };
        match plan {
            Some(p) if p.reads_descriptors() => OperandLayout::Blocks {
                rows: shape[0],
                width: match (which, transposed) {
                    (0, _) => p.descriptor_a_columns().unwrap_or(WGMMA_N),
                    (_, true) => p.descriptor_b_k_columns().unwrap_or(WGMMA_N),
                    _ => p.descriptor_b_n_columns(),
                },
                bytes: p.operand_dtype().size_bytes(),
            },
            Some(TensorDot::Mma(p)) if p.kind.family() == MmaFamily::MmaSync => {
                OperandLayout::RowMajor(self.operand_swizzle(&shape, p.kind, read_as))
            }
            _ => OperandLayout::RowMajor(None),
        }
    }

    /// Whether `dot` can read its `b` staged transposed, K-major
    /// ([`TensorDot::reads_k_major_b`]).
    pub(super) fn reads_transposed_b(&self, dot: OpId) -> bool {
        self.tensor_plan(dot)
            .is_some_and(|plan| plan.reads_k_major_b())
    }

    /// A fresh or reused allocation of `len` elements for an operand;
    /// one of swizzled `blocks` (`OperandLayout::Blocks`: `wgmma`'s,
    /// `tcgen05.mma`'s, the TMA's) starts on a 1024-byte boundary (their
    /// swizzle reads address bits 7–9).
    pub(super) fn take_operand_buffer(
        &mut self,
        dtype: DType,
        len: usize,
        blocks: bool,
    ) -> (SharedId, bool) {
        let (alloc, reused) = self.take_shared(dtype, len);
        if blocks {
            let entry = &mut self.program.shared[alloc];
            entry.align = entry.align.max(1024);
        }
        (alloc, reused)
    }

    /// The exact chain on CUDA cores (the module docs) from the staged
    /// operands, into the accumulator registers `rc` in `layout`; with
    /// `tf32`, each operand rounded to TF32 first (precision `tf32`).
    fn fma_chain(
        &mut self,
        layout: &DistLayout,
        [alloc_a, alloc_b]: [SharedId; 2],
        ([da, db, acc_dtype], tf32): ([DType; 3], bool),
        (k, n): (usize, usize),
        rc: &[Reg],
    ) -> Vec<Reg> {
        let coords = self.coords(layout);
        // Registers on one row share their `a` loads, on one column their `b`
        // loads: the row (column) of register v is the first register with the
        // same value-layout digit along axis 0 (1).
        let ps = layout.padded_strides();
        let digit =
            |v: usize, d: usize| layout.value.call(v as i64) as usize / ps[d] % layout.padded[d];
        let count = rc.len();
        let first_with = |d: usize| -> Vec<usize> {
            (0..count)
                .map(|v| (0..=v).find(|&u| digit(u, d) == digit(v, d)).unwrap_or(v))
                .collect()
        };
        let (row_of, col_of) = (first_with(0), first_with(1));
        // Each distinct row's start `m·K` and column `n`, clamped to 0 outside
        // the tile (dead registers read a valid element).
        let zero = self.i32c(0);
        let clamp = |s: &mut Self, c: Reg, extent: usize, padded: usize| {
            if padded > extent {
                let e = s.i32c(extent as i64);
                let inside = s.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![c, e], DType::Bool);
                s.select(inside, c, zero)
            } else {
                c
            }
        };
        let mut row_start = vec![None; count];
        let mut col = vec![None; count];
        for v in 0..count {
            if row_of[v] == v {
                let r = clamp(self, coords.axes[v][0], layout.shape[0], layout.padded[0]);
                row_start[v] = Some(self.linear(&[(r, k)]));
            }
            if col_of[v] == v {
                col[v] = Some(clamp(
                    self,
                    coords.axes[v][1],
                    layout.shape[1],
                    layout.padded[1],
                ));
            }
        }
        let mut acc = rc.to_vec();
        for kk in 0..k {
            let mut a_vals = vec![None; count];
            let mut b_vals = vec![None; count];
            for v in 0..count {
                if let Some(start) = row_start[v] {
                    let index = if kk == 0 {
                        start
                    } else {
                        let kc = self.i32c(kk as i64);
                        self.binary(BinaryOp::Add, start, kc)
                    };
                    let x = self.emit(
                        ThreadOpKind::LoadShared {
                            alloc: alloc_a,
                            width: 1,
                        },
                        vec![index],
                        da,
                    );
                    a_vals[v] = Some(self.operand(x, acc_dtype, tf32));
                }
                if let Some(c) = col[v] {
                    let index = if kk == 0 {
                        c
                    } else {
                        let shift = self.i32c((kk * n) as i64);
                        self.binary(BinaryOp::Add, c, shift)
                    };
                    let y = self.emit(
                        ThreadOpKind::LoadShared {
                            alloc: alloc_b,
                            width: 1,
                        },
                        vec![index],
                        db,
                    );
                    b_vals[v] = Some(self.operand(y, acc_dtype, tf32));
                }
            }
            for v in 0..count {
                let (Some(x), Some(y)) = (a_vals[row_of[v]], b_vals[col_of[v]]) else {
                    continue;
                };
                acc[v] = if acc_dtype == DType::I32 {
                    let p = self.binary(BinaryOp::Mul, x, y);
                    self.binary(BinaryOp::Add, acc[v], p)
                } else {
                    self.emit(ThreadOpKind::Fma, vec![x, y, acc[v]], acc_dtype)
                };
            }
        }
        acc
    }

    /// An operand element `x` of the chain: widened to the accumulator's
    /// dtype, and rounded to TF32 for precision `tf32`.
    fn operand(&mut self, x: Reg, acc_dtype: DType, tf32: bool) -> Reg {
        let wide = self.cast(x, acc_dtype);
        if tf32 {
            self.emit(
                ThreadOpKind::Unary(UnaryOp::RoundTf32),
                vec![wide],
                acc_dtype,
            )
        } else {
            wide
        }
    }
}
