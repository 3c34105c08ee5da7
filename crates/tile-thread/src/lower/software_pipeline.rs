//! Software pipelining of tensor-core operand copies: a `for` whose body
//! loads a `dot`'s operands by its induction variable copies them
//! `stages − 1` iterations ahead, with `cp.async` (or the TMA), into a ring
//! of shared buffers per operand, so that the copies of later iterations are
//! in flight while this one's `mma`s run. `stages` is the loop's own
//! (`for … stages(n)`) or the kernel's ([`super::LowerOptions::num_stages`]);
//! only targets with `cp.async` defer loads at all.
//!
//! A deferred load (`copies.rs`) in the loop's body is **prefetched** when
//! its view and every partition index are defined outside the loop, or the
//! index is the induction variable itself, or the induction variable plus a
//! value defined outside (`first_key + j`: a block of keys of one head); the
//! copies of iteration `j` then read the partition at `j` (at `c + j`, the
//! addition in the counter's dtype, as the body's). A load that several
//! dots read (attention backward's `q`, read transposed by one product
//! and as it is by another) is copied once, and they all read its stage:
//! they must lay it out alike, or the loop is not pipelined.
//!
//! With `S` stages, iteration `i + S − 1`'s copies are issued during
//! iteration `i`. Every reader is done with its stage by the end of the
//! body (`mma.sync` and the CUDA-core chain load their fragments into
//! registers; each `wgmma` product waits for its own group, and every
//! thread for a `tcgen05.mma`'s commit, inside the body), so with `S ≥ 3`
//! they are issued at the end of iteration `i`, into the buffer `i` has
//! just finished reading, and the ring holds `R = S − 1` buffers, as
//! Triton's pipeliner does for `mma.sync` (for `wgmma` it keeps a group in
//! flight across iterations and `S` buffers); where the TMA copies them
//! (their mbarriers' phases count `S` stages), and with 2 stages, they are
//! issued at the start of iteration `i`, into the buffer iteration `i − 1`
//! read, and the ring holds `R = S` buffers:
//!
//! ```text
//! barrier                                            // inside another loop, or on reused buffers
//! for s in 0..S-1:  if lo + s·step < hi { copy iteration lo + s·step into stage s };  commit
//! for iv = lo to hi step step, carrying (…, stage = 0):
//!     wait_group(S − 2); barrier                     // iteration iv's copies have landed, for every thread
//!     next = iv + (S−1)·step
//!     R = S:      if next < hi { copy iteration next into stage (stage + S − 1) % S };  commit
//!     … the body; its dots read their prefetched operands from `stage` …
//!     R = S − 1:  barrier;  if next < hi { copy iteration next into stage };  commit
//!     yield …, (stage + 1) % R
//! ```
//!
//! `wait_group(S − 2)` leaves the `S − 2` most recent groups in flight: one
//! group is committed per prologue stage and per iteration (empty ones
//! too), so at the top of iteration `i` the group of iteration `i` is the
//! `(S − 1)`-th most recent and lands. With `R = S` the stage written in
//! iteration `i` is the one read in iteration `i − 1`, which every thread
//! has finished once it passed the top barrier; with `R = S − 1` it is
//! iteration `i`'s own (`i + S − 1 ≡ i mod R`), which every thread has
//! finished once it passed the barrier after the body. The prologue's
//! stages were last read by the previous run of the loop when an enclosing
//! loop runs it again (or by the op whose buffers the stages reuse): the
//! barrier before it orders those reads first. A copy's partition index
//! `next` lies in `[lo, hi)` like `iv`, so the bounds proofs of the load
//! hold for it too. Stage offsets are whole multiples of the operand
//! swizzle's period, so a stage's elements are swizzled as the first
//! stage's, shifted.

use super::copies::{is_transposed, operand_axes, operand_chain, product_operands};
use super::operand_swizzle::OperandLayout;
use super::tma::{TmaCopy, TmaStages};
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::{DistLayout, TensorDot};
use crate::program::{MmaKind, Reg, Region, SharedId, ThreadOpKind};
use std::collections::{HashMap, HashSet};
use tile_ir::layout::Swizzle;
use tile_ir::{BinaryOp, CmpPred, DType, Function, OpId, Scalar, Value};

/// The loads a `for` prefetches: its induction variable and the deferred
/// loads of its body (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct Prefetched {
    iv: Value,
    /// Each load, with the dots that read it and which operand of each
    /// (0: `a`).
    loads: Vec<(OpId, Vec<(OpId, usize)>)>,
    /// The partition indices `iv + c` of the loads, with their `c`.
    offsets: HashMap<Value, Value>,
}

/// The loads each `for` prefetches, by the `for`'s op; loops with none are
/// absent.
pub(super) fn prefetched_loads(
    func: &Function,
    deferred: &HashSet<OpId>,
) -> HashMap<OpId, Prefetched> {
    let mut loops = HashMap::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        if !matches!(op.kind, tile_ir::OpKind::For { .. }) {
            return;
        }
        let Some(body) = op.regions.first() else {
            return;
        };
        let Some(&iv) = body.args.first() else {
            return;
        };
        let mut inside: HashSet<Value> = body.args.iter().copied().collect();
        func.walk_region(body, &mut |o| {
            inside.extend(func.op(o).results.iter().copied())
        });
        // A deferred load's uses are dot operands in the same region, or
        // reshapes squeezing it into one, or transposes of either.
        let readers = |load: OpId| {
            let value = func.op(load).results[0];
            let mut readers = Vec::new();
            for &dot in &body.ops {
                let Some(operands) = product_operands(func.op(dot)) else {
                    continue;
                };
                for (which, &v) in operands.iter().enumerate() {
                    if operand_chain(func, v).last() == Some(&value) {
                        readers.push((dot, which));
                    }
                }
            }
            (!readers.is_empty()).then_some(readers)
        };
        let loads: Vec<(OpId, Vec<(OpId, usize)>)> = body
            .ops
            .iter()
            .copied()
            .filter(|load| deferred.contains(load))
            .filter(|&load| {
                let operands = &func.op(load).operands;
                operands.first().is_some_and(|v| !inside.contains(v))
                    && operands[1..].iter().all(|&i| {
                        i == iv || !inside.contains(&i) || offset_of(func, i, iv, &inside).is_some()
                    })
            })
            .filter_map(|load| readers(load).map(|readers| (load, readers)))
            .collect();
        if !loads.is_empty() {
            let offsets = loads
                .iter()
                .flat_map(|&(load, ..)| func.op(load).operands[1..].iter().copied())
                .filter(|i| *i != iv && inside.contains(i))
                .filter_map(|i| offset_of(func, i, iv, &inside).map(|c| (i, c)))
                .collect();
            loops.insert(id, Prefetched { iv, loads, offsets });
        }
    });
    loops
}

/// The value `c` defined outside the loop (not in `inside`) when `index` is
/// `iv + c` or `c + iv`.
fn offset_of(func: &Function, index: Value, iv: Value, inside: &HashSet<Value>) -> Option<Value> {
    let op = func.op(func.defining_op(index)?);
    let (tile_ir::OpKind::Binary(BinaryOp::Add), [a, b]) = (&op.kind, op.operands.as_slice())
    else {
        return None;
    };
    let offset = match (*a == iv, *b == iv) {
        (true, false) => *b,
        (false, true) => *a,
        _ => return None,
    };
    (!inside.contains(&offset)).then_some(offset)
}

/// One prefetched load of a pipelined loop.
#[derive(Clone, Debug)]
struct Prefetch {
    load: OpId,
    /// The chunks each thread copies (`copies.rs`).
    chunks: DistLayout,
    /// The ring of stage buffers.
    alloc: SharedId,
    /// The elements of one stage.
    len: usize,
    /// How the dot that reads it lays its operand out.
    place: OperandLayout,
    /// How the TMA copies it, in a pipeline whose copies it makes.
    tma: Option<TmaCopy>,
}

/// A `for` being pipelined.
pub(super) struct Pipeline {
    prefetches: Vec<Prefetch>,
    /// Whether a `wgmma` reads the stages: the copies then become visible
    /// to the asynchronous proxy with a `fence.proxy.async`.
    fence: bool,
    /// The loop's induction variable: the index the copies move ahead.
    iv: Value,
    /// [`Prefetched::offsets`].
    offsets: HashMap<Value, Value>,
    stages: usize,
    /// The buffers of each ring: `stages`, or `stages − 1` when the copies
    /// are issued after the body has read its stage (the module docs).
    ring: usize,
    /// The loop's bounds (`lo`, `hi`, `step`) widened to `i64`.
    bounds: [Reg; 3],
    /// The barriers of a pipeline whose copies the TMA makes
    /// (`lower/tma.rs`).
    tma: Option<TmaStages>,
}

impl Lowerer<'_> {
    /// The pipeline of the `for` `id`, with its ring buffers allocated, if
    /// it prefetches loads and there are at least two stages; `None` leaves
    /// the loop's copies where their dots are.
    pub(super) fn pipeline(
        &mut self,
        id: OpId,
        bounds: [Reg; 3],
    ) -> Result<Option<Pipeline>, LowerError> {
        // The loop's own stages (`for … stages(n)`), else the kernel's.
        let stages = match self.func.op(id).kind {
            tile_ir::OpKind::For {
                stages: Some(n), ..
            } => n,
            _ => self.num_stages,
        } as usize;
        let Some(Prefetched { iv, loads, offsets }) = self.prefetched.get(&id).cloned() else {
            return Ok(None);
        };
        if stages < 2 {
            return Ok(None);
        }
        let mut planned = Vec::new();
        let mut fence = false;
        for (load, readers) in loads {
            let Some(chunks) = self.copy_chunks(load)? else {
                return Ok(None);
            };
            let (row, col) = operand_axes(&chunks.shape);
            let shape = [chunks.shape[row], chunks.shape[col]];
            let len = shape[0] * shape[1];
            // Every reader lays the stage out alike, or the loop is not
            // pipelined (each dot then stages its operand itself).
            let mut places = Vec::new();
            let mut wgmma = false;
            for &(dot, which) in &readers {
                let plan = self.tensor_plan(dot);
                // A transposed operand is staged as the load's tile is.
                let operands = product_operands(self.func.op(dot));
                let flipped = operands.is_some_and(|o| is_transposed(self.func, o[which]));
                places.push(self.operand_layout(plan.as_ref(), shape, which, flipped));
                wgmma |= plan.as_ref().is_some_and(TensorDot::reads_descriptors);
            }
            let place = places[0];
            if places.iter().any(|&p| p != place) || !len.is_multiple_of(place.period()) {
                return Ok(None);
            }
            fence |= wgmma;
            // The load's tile as stored, whoever reads it transposed: a
            // K-major B's blocks are an A's, which the TMA's boxes write.
            // `mma.sync`'s swizzled rows are the boxes' only up to 128
            // bytes: it reads the boxes' blocks where the TMA copies.
            let boxed = self.tma_blocks(&readers, shape).unwrap_or(place);
            let tma = self.tma_copy(load, boxed)?;
            planned.push((load, chunks, len, place, tma.map(|copy| (boxed, copy))));
        }
        // The TMA copies all of a loop's operands, or none; and none in a
        // loop inside another: its mbarriers would be initialized again on
        // each run of the enclosing loop while valid, which the PTX ISA
        // leaves undefined (`cp.async` stages need no such state).
        let by_tma = self.loop_depth == 0 && planned.iter().all(|p| p.4.is_some());
        // Every reader frees its stage by the end of the body: a `wgmma`
        // product waits for its own group, and every thread waits for a
        // `tcgen05.mma`'s commit, there.
        let late = stages >= 3 && !by_tma;
        let ring = if late { stages - 1 } else { stages };
        let mut prefetches = Vec::new();
        let mut reused = false;
        for (load, chunks, len, place, tma) in planned {
            let dtype = self.func.ty(self.func.op(load).results[0]).dtype();
            let (place, tma) = match tma.filter(|_| by_tma) {
                Some((boxed, copy)) => (boxed, Some(copy)),
                None => (place, None),
            };
            // Swizzled blocks start on 1024-byte boundaries: the TMA's and
            // `wgmma`'s swizzles read address bits 7–9.
            let blocks = matches!(place, OperandLayout::Blocks { .. });
            let (alloc, was_reused) = self.take_operand_buffer(dtype, ring * len, blocks);
            reused |= was_reused;
            prefetches.push(Prefetch {
                load,
                chunks,
                alloc,
                len,
                place,
                tma,
            });
        }
        // The prologue overwrites the stages: every earlier reader of them
        // must be done, whether the buffers were another op's before or
        // this loop's own in an earlier iteration of an enclosing loop.
        if reused || self.loop_depth > 0 {
            self.barrier();
        }
        let bounds = bounds.map(|r| self.cast(r, DType::I64));
        let tma = by_tma.then(|| self.tma_barriers(stages));
        Ok(Some(Pipeline {
            prefetches,
            iv,
            offsets,
            fence,
            stages,
            ring,
            bounds,
            tma,
        }))
    }

    /// Before the loop: the copies of its first `stages − 1` iterations,
    /// one group each.
    pub(super) fn pipeline_prologue(&mut self, p: &Pipeline) -> Result<(), LowerError> {
        let [lo, hi, step] = p.bounds;
        for s in 0..p.stages - 1 {
            let k = self.constant(Scalar::I64(s as i64));
            let ahead = self.binary(BinaryOp::Mul, k, step);
            let j = self.binary(BinaryOp::Add, lo, ahead);
            let stage = self.i32c(s as i64);
            self.copy_iteration(p, j, hi, stage)?;
        }
        Ok(())
    }

    /// At the top of the body: wait for this iteration's copies, issue
    /// those `stages − 1` iterations ahead where the ring has `stages`
    /// buffers, and bind each prefetched load to its stage buffer. Returns
    /// the ops and the next stage register (for the body's `yield`).
    pub(super) fn pipeline_body_start(
        &mut self,
        p: &Pipeline,
        iv: Reg,
        stage: Reg,
    ) -> Result<(Vec<crate::program::OpId>, Reg), LowerError> {
        let saved = std::mem::take(&mut self.current);
        let [lo, hi, step] = p.bounds;
        let iv = self.cast(iv, DType::I64);
        if let Some(tma) = p.tma {
            self.tma_wait(tma, (iv, lo, step), (stage, p.stages));
        } else {
            let pending = (p.stages - 2) as u8;
            self.emit_op(ThreadOpKind::WaitAsync { pending }, vec![], &[]);
            if p.fence {
                self.emit_op(ThreadOpKind::FenceProxyAsync, vec![], &[]);
            }
            self.barrier();
        }
        if p.ring == p.stages {
            let next = self.iteration_ahead(p, iv);
            let write = self.ring_step(stage, p.ring, BinaryOp::Sub);
            self.copy_iteration(p, next, hi, write)?;
        }
        let following = self.ring_step(stage, p.ring, BinaryOp::Add);
        for f in &p.prefetches {
            let len = self.i32c(f.len as i64);
            let offset = self.binary(BinaryOp::Mul, stage, len);
            self.env.insert(
                self.func.op(f.load).results[0],
                Lowered::Staged {
                    alloc: f.alloc,
                    offset,
                    place: f.place,
                },
            );
        }
        let ops = std::mem::replace(&mut self.current, saved);
        Ok((ops, following))
    }

    /// At the end of the body of a pipeline whose ring has `stages − 1`
    /// buffers: once every thread has read this iteration's stage, copy the
    /// iteration `stages − 1` ahead into it. Returns the ops, which go
    /// before the body's `yield`.
    pub(super) fn pipeline_body_end(
        &mut self,
        p: &Pipeline,
        iv: Reg,
        stage: Reg,
    ) -> Result<Vec<crate::program::OpId>, LowerError> {
        if p.ring == p.stages {
            return Ok(Vec::new());
        }
        let saved = std::mem::take(&mut self.current);
        self.barrier();
        let iv = self.cast(iv, DType::I64);
        let next = self.iteration_ahead(p, iv);
        self.copy_iteration(p, next, p.bounds[1], stage)?;
        Ok(std::mem::replace(&mut self.current, saved))
    }

    /// `(stage ± 1) mod ring` without a division: `op` is `add` for the
    /// next buffer, `sub` for the previous one.
    fn ring_step(&mut self, stage: Reg, ring: usize, op: BinaryOp) -> Reg {
        let (zero, last) = (self.i32c(0), self.i32c(ring as i64 - 1));
        let (wraps_at, wraps_to) = match op {
            BinaryOp::Add => (last, zero),
            _ => (zero, last),
        };
        let wraps = self.emit(
            ThreadOpKind::Cmp(CmpPred::Eq),
            vec![stage, wraps_at],
            DType::Bool,
        );
        let one = self.i32c(1);
        let stepped = self.binary(op, stage, one);
        self.select(wraps, wraps_to, stepped)
    }

    /// `iv + (stages − 1)·step`: the iteration whose copies are issued
    /// during iteration `iv` (an `i64`).
    fn iteration_ahead(&mut self, p: &Pipeline, iv: Reg) -> Reg {
        let k = self.constant(Scalar::I64(p.stages as i64 - 1));
        let ahead = self.binary(BinaryOp::Mul, k, p.bounds[2]);
        self.binary(BinaryOp::Add, iv, ahead)
    }

    /// After the loop: the ring buffers may be reused.
    pub(super) fn pipeline_end(&mut self, p: &Pipeline) {
        for f in &p.prefetches {
            self.release_shared(f.alloc);
        }
    }

    /// `if j < hi { copy iteration j of every prefetched load into
    /// stage }`: with `cp.async`, then `commit` (a group even when empty, so
    /// that groups count iterations); or by the TMA.
    fn copy_iteration(
        &mut self,
        p: &Pipeline,
        j: Reg,
        hi: Reg,
        stage: Reg,
    ) -> Result<(), LowerError> {
        let within = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![j, hi], DType::Bool);
        let saved = std::mem::take(&mut self.current);
        let mut by_tma = Vec::new();
        for f in &p.prefetches {
            let mut indices = Vec::new();
            for &value in &self.func.op(f.load).operands[1..] {
                let offset = p.offsets.get(&value).copied();
                indices.push(if value == p.iv {
                    j
                } else if let Some(offset) = offset {
                    // `j < hi` here, so `j` fits the counter's dtype; the
                    // sum wraps and widens as the body's `add` and index do.
                    let counter = self.func.ty(p.iv).dtype();
                    let j = self.cast(j, counter);
                    let c = self.scalar(f.load, offset)?;
                    let sum = self.binary(BinaryOp::Add, j, c);
                    self.cast(sum, DType::I64)
                } else {
                    let i = self.scalar(f.load, value)?;
                    self.cast(i, DType::I64)
                });
            }
            let len = self.i32c(f.len as i64);
            let offset = self.binary(BinaryOp::Mul, stage, len);
            match &f.tma {
                Some(copy) => by_tma.push((copy, indices, f.alloc, offset)),
                None => self.copy_partition(
                    f.load,
                    &f.chunks,
                    &indices,
                    (f.alloc, Some(offset)),
                    f.place,
                )?,
            }
        }
        if let Some(tma) = p.tma {
            self.tma_issue(tma, stage, &by_tma);
        }
        self.emit_op(ThreadOpKind::Yield, vec![], &[]);
        let then_ops = std::mem::replace(&mut self.current, saved);
        let else_ops = vec![self
            .program
            .create_op(ThreadOpKind::Yield, vec![], &[], vec![])];
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
            .create_op(ThreadOpKind::If, vec![within], &[], regions);
        self.current.push(branch);
        if p.tma.is_none() {
            self.emit_op(ThreadOpKind::CommitAsync, vec![], &[]);
        }
        Ok(())
    }

    /// The swizzle of operand `which` (0 for A, 1 for B) of `kind` staged
    /// with `shape` (rows of its innermost extent), unless stagings are not
    /// swizzled.
    pub(super) fn operand_swizzle(
        &self,
        shape: &[usize],
        kind: MmaKind,
        which: usize,
    ) -> Option<Swizzle> {
        use super::operand_swizzle::{fp8_b_swizzle, operand_swizzle, tf32_b_swizzle};
        let &cols = shape.last()?;
        match (self.swizzle_shared, kind, which) {
            (false, ..) => None,
            (true, MmaKind::Tf32M16N8K8, 1) => tf32_b_swizzle(cols),
            (true, _, 1) if kind.is_fp8() => fp8_b_swizzle(cols),
            (true, ..) => operand_swizzle(cols, kind.operand_dtype().size_bytes()),
        }
    }
}
