//! `dot` on Blackwell's `tcgen05.mma`, accumulating in tensor memory
//! (`layout_assign/tcgen05.rs` for which dots, and the accumulator's
//! layout; [`tile_hw::tcgen05`] for the instructions).
//!
//! A kernel with such a dot allocates tensor memory once, at its start:
//! warp 0's `tmem.alloc` of the columns its widest accumulator takes (a
//! power of two, at least 32), and thread 0's `mbarrier.init` of the
//! barrier the products complete on, both visible after a barrier, when
//! every thread reads the address; at its end, after a barrier, warp 0
//! frees the columns.
//!
//! Each dot then moves its accumulator through tensor memory: every
//! thread stores its registers (`tmem.store`, its rows and its
//! warpgroup's columns), a barrier orders them before thread 0 issues
//! every instruction of the product (per `k`-step of 32 bytes, 16 f16 or
//! 32 FP8, per row block of 128, per `n` columns of B; the operands as
//! `wgmma` has them staged, the instruction accumulating), `tcgen05.commit_wait` has every thread wait
//! for them, and every thread loads its registers back. The accumulator of
//! a K loop (the one `tcgen05.mma` dot in a `for`, its `c` the loop's
//! carried value and its result what the loop yields for it, nothing else
//! reading either) stays in tensor memory instead: stored before the loop
//! (`Lowered::Resident` then stands for it, carried as no register), each
//! iteration only issuing its products and waiting for them, and loaded
//! once after the loop.

use super::dot::{OperandA, StagedOperands};
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::{Tcgen05Dot, TensorDot};
use crate::program::{Reg, SharedId, ThreadOpKind};
use std::rc::Rc;
use tile_hw::tcgen05::{allocation_columns, scale_columns, GROUPS_PER_COLUMN, GROUP_K, M};
use tile_hw::wgmma::Major;
use tile_ir::{BinaryOp, CmpPred, DType, OpId, OpKind, Scalar, Value};

/// The most columns one `tmem.load` or `tmem.store` moves.
const MOST_COLUMNS: usize = 128;

/// The accumulator a `for` keeps in tensor memory across its iterations.
pub(super) struct Resident {
    /// Its place among the loop's carried values.
    pub(super) index: usize,
    /// The dot that accumulates into it.
    pub(super) plan: Tcgen05Dot,
}

/// Where thread 0's products read A.
#[derive(Clone, Copy)]
enum SourceA {
    /// Shared memory: the staging.
    Shared(SharedId),
    /// Tensor memory: the address of row block 0 (`tensor_a.rs`).
    Tensor(Reg),
}

/// The kernel's tensor memory, once allocated.
#[derive(Clone, Copy, Debug)]
pub(super) struct TensorMemory {
    /// The allocation's address (`i32`).
    base: Reg,
    /// The columns allocated.
    columns: u16,
    /// The mbarrier (one, in its own allocation) the products complete on.
    bar: SharedId,
    /// Whether the thread is thread 0, which issues the products.
    elected: Reg,
}

impl Lowerer<'_> {
    /// The tensor-memory columns the kernel's `tcgen05.mma` dots need at
    /// most, if it has any.
    pub(super) fn tensor_memory_columns(&self) -> Option<usize> {
        let mut most = None;
        self.func.walk(&mut |id: OpId| {
            let op = self.func.op(id);
            let product = matches!(op.kind, OpKind::Dot { .. } | OpKind::DotScaled);
            if let (true, Some(TensorDot::Tcgen05(plan))) = (product, self.tensor_plan(id)) {
                // An A read from tensor memory, or the scale images, sit
                // after the accumulator.
                let a = self.tensor_a_columns(id, &plan).unwrap_or(0);
                let k = op.operands.first().and_then(|&a| {
                    let shape = self.func.ty(a).tile_shape()?;
                    shape.dims().get(1).copied()
                });
                let [sa, sb] = plan.scale_image_columns(k.unwrap_or(0));
                most = Some(most.unwrap_or(0).max(plan.columns() + a + sa + sb));
            }
        });
        most
    }

    /// At the kernel's start: allocates `columns` of tensor memory and the
    /// products' mbarrier (the module docs).
    pub(super) fn allocate_tensor_memory(&mut self, columns: usize) -> Result<(), LowerError> {
        let columns = allocation_columns(columns)
            .and_then(|c| u16::try_from(c).ok())
            .ok_or_else(|| LowerError::Invalid {
                op: "kernel".into(),
                reason: format!("{columns} columns of tensor memory, past its 512"),
            })?;
        let slot = self.program.alloc_shared(DType::I32, 1);
        let bar = self.program.alloc_shared(DType::U64, 1);
        let tid = self.thread_id();
        let zero = self.i32c(0);
        let elected = self.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![tid, zero], DType::Bool);
        let one = self.i32c(1);
        let alloc = ThreadOpKind::TmemAlloc { columns, slot };
        self.emit_op(alloc, vec![zero], &[]);
        let init = ThreadOpKind::MbarrierInit { alloc: bar };
        self.emit_op(init, vec![zero, one, elected], &[]);
        self.barrier();
        let load = ThreadOpKind::LoadShared {
            alloc: slot,
            width: 1,
        };
        let base = self.emit(load, vec![zero], DType::I32);
        self.tensor_memory = Some(TensorMemory {
            base,
            columns,
            bar,
            elected,
        });
        Ok(())
    }

    /// At the kernel's end: frees the tensor memory, once every thread is
    /// done with it.
    pub(super) fn free_tensor_memory(&mut self) {
        if let Some(tm) = self.tensor_memory {
            self.barrier();
            let dealloc = ThreadOpKind::TmemDealloc {
                columns: tm.columns,
            };
            self.emit_op(dealloc, vec![tm.base], &[]);
        }
    }

    /// The accumulator registers `acc` (in `plan.layout`) after `a · b`,
    /// for `a: [M, K]` and `b: [K, N]` staged as `staged` says (the module
    /// docs).
    pub(super) fn tcgen05_steps(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        staged: &StagedOperands,
        (k, n): (usize, usize),
        acc: &[Reg],
    ) -> Result<Vec<Reg>, LowerError> {
        // A first: its registers are free before the accumulator's stores.
        self.store_tensor_a(id, plan, staged, k)?;
        self.store_scale_images(id, plan, staged, (k, n))?;
        // A `c` of zeros is not stored: the first step does not accumulate.
        let fresh = self.zero_accumulator(id);
        if !fresh {
            self.store_accumulator(id, plan, acc)?;
        }
        self.barrier();
        self.tcgen05_products(id, plan, staged, (k, n), fresh)?;
        self.load_accumulator(id, plan)
    }

    /// Whether the `c` of the dot `id` is a tile of `+0.0`.
    fn zero_accumulator(&self, id: OpId) -> bool {
        // `c` is the last operand of a `dot` and of a `dot_scaled`.
        let c = self.func.op(id).operands.last().copied();
        let full = c
            .and_then(|c| self.func.defining_op(c))
            .map(|d| &self.func.op(d).kind);
        matches!(full, Some(OpKind::Full { value, .. }) if value.dtype().is_float() && value.to_bits() == 0)
    }

    /// Thread 0's instructions of `a · b` into the accumulator in tensor
    /// memory (over what it holds, or with `fresh` over nothing: the first
    /// step not accumulating), and every thread's wait for them.
    pub(super) fn tcgen05_products(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        staged: &StagedOperands,
        (k, n): (usize, usize),
        fresh: bool,
    ) -> Result<(), LowerError> {
        let Some(tm) = self.tensor_memory else {
            return Err(self.invalid(id, "tcgen05.mma without tensor memory"));
        };
        let a = match staged.a {
            OperandA::Shared(a) => SourceA::Shared(a),
            OperandA::Tensor(_) => SourceA::Tensor(self.tensor_a_base(id, plan)?),
            OperandA::Registers(_) => {
                return Err(self.invalid(id, "tcgen05.mma with A in registers"))
            }
        };
        let images = match plan.block_scaled {
            true => Some(self.scale_image_bases(id, plan, k)?),
            false => None,
        };
        self.tcgen05_issue(plan, staged, (a, tm, images), (k, n), fresh);
        let commit = ThreadOpKind::Tcgen05CommitWait { bar: tm.bar };
        let zero = self.i32c(0);
        self.emit_op(commit, vec![zero, tm.elected], &[]);
        Ok(())
    }

    /// The pieces of the thread's registers of `plan`'s accumulator that
    /// one `tmem.load` or `tmem.store` each moves: the address, the first
    /// register and the count.
    fn accumulator_pieces(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
    ) -> Result<Vec<(Reg, usize, usize)>, LowerError> {
        let Some(tm) = self.tensor_memory else {
            return Err(self.invalid(id, "an accumulator in tensor memory never allocated"));
        };
        let (m, n, per) = (
            plan.layout.shape[0],
            plan.layout.shape[1],
            plan.thread_columns(),
        );
        let chunk = 1 << per.trailing_zeros().min(MOST_COLUMNS.trailing_zeros());
        // The columns of the thread's warpgroup's share.
        let tid = self.thread_id();
        let group = self.hoist_with_const(BinaryOp::Div, tid, 128);
        let share = self.hoist_with_const(BinaryOp::Mul, group, per as i64);
        let own = self.hoist_binary(BinaryOp::Add, tm.base, share);
        let mut pieces = Vec::new();
        for i in 0..m / M {
            for c in (0..per).step_by(chunk) {
                let at = self.tmem_column(own, i * n + c);
                pieces.push((at, i * per + c, chunk));
            }
        }
        Ok(pieces)
    }

    /// Every thread's `tmem.store` of its registers `acc` of `plan`'s
    /// accumulator; the caller orders them before the products.
    fn store_accumulator(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
        acc: &[Reg],
    ) -> Result<(), LowerError> {
        for (at, first, count) in self.accumulator_pieces(id, plan)? {
            let Some(values) = acc.get(first..first + count) else {
                return Err(self.invalid(id, "an accumulator of other registers than its layout's"));
            };
            let mut operands = vec![at];
            operands.extend(values);
            self.emit_op(ThreadOpKind::TmemStore, operands, &[]);
        }
        Ok(())
    }

    /// Every thread's `tmem.load` of its registers of `plan`'s accumulator.
    pub(super) fn load_accumulator(
        &mut self,
        id: OpId,
        plan: &Tcgen05Dot,
    ) -> Result<Vec<Reg>, LowerError> {
        let mut regs = Vec::new();
        for (at, _, count) in self.accumulator_pieces(id, plan)? {
            let load = ThreadOpKind::TmemLoad {
                columns: count as u16,
            };
            let op = self.emit_op(load, vec![at], &vec![DType::F32; count]);
            regs.extend(&self.program.ops[op].results);
        }
        Ok(regs)
    }

    /// The carried value of the `for` `id` that can stay in tensor memory
    /// across its iterations, if one can: the accumulator of the one
    /// `tcgen05.mma` dot in the loop (no other reaches tensor memory), which
    /// that dot alone reads and the loop's `yield` alone takes, started by
    /// a value the loop alone uses.
    pub(super) fn resident_accumulator(&self, id: OpId) -> Option<Resident> {
        let op = self.func.op(id);
        let [body] = op.regions.as_slice() else {
            return None;
        };
        let inits = op.operands.get(3..)?;
        let carried = body.args.get(1..)?;
        let mut dots = Vec::new();
        self.func.walk_region(body, &mut |d| {
            if let Some(TensorDot::Tcgen05(plan)) = self.tensor_plan(d) {
                dots.push((d, plan));
            }
        });
        let [(dot, plan)] = dots.as_slice() else {
            return None;
        };
        let dot_op = self.func.op(*dot);
        let (&c, &result) = (dot_op.operands.last()?, dot_op.results.first()?);
        let index = carried.iter().position(|&v| v == c)?;
        let yields = self.func.op(*body.ops.last()?);
        let alone = [c, result, inits[index]]
            .iter()
            .all(|&v| self.use_count(v) == 1);
        let ok = body.ops.contains(dot)
            && matches!(yields.kind, OpKind::Yield)
            && yields.operands.get(index) == Some(&result)
            && alone;
        ok.then(|| Resident {
            index,
            plan: plan.clone(),
        })
    }

    /// Before the `for` `id`: its carried value `init` stored into tensor
    /// memory as `plan`'s accumulator, ordered before the loop's products,
    /// and `init` bound to it there.
    pub(super) fn store_resident(
        &mut self,
        id: OpId,
        init: Value,
        plan: &Tcgen05Dot,
    ) -> Result<(), LowerError> {
        let (layout, regs) = self.tile(id, init)?;
        let layout_to = Rc::new(plan.layout.clone());
        let regs = self.convert(DType::F32, &layout, &regs, &layout_to);
        self.store_accumulator(id, plan, &regs)?;
        self.barrier();
        self.env.insert(init, Lowered::Resident(layout_to));
        Ok(())
    }

    /// How many operands of the function's ops are `value`.
    fn use_count(&self, value: Value) -> usize {
        let mut uses = 0;
        self.func.walk(&mut |op| {
            uses += self
                .func
                .op(op)
                .operands
                .iter()
                .filter(|&&v| v == value)
                .count();
        });
        uses
    }

    /// The address of the kernel's tensor memory.
    pub(super) fn tensor_memory_base(&self, id: OpId) -> Result<Reg, LowerError> {
        match self.tensor_memory {
            Some(tm) => Ok(tm.base),
            None => Err(self.invalid(id, "tcgen05.mma without tensor memory")),
        }
    }

    /// Thread 0's instructions of the product into the tensor memory of
    /// `tm`, A in `a`, the scale images of a block-scaled one at `images`
    /// (`tensor_scales.rs`).
    fn tcgen05_issue(
        &mut self,
        plan: &Tcgen05Dot,
        staged: &StagedOperands,
        (a, tm, images): (SourceA, TensorMemory, Option<[Reg; 2]>),
        (k, n): (usize, usize),
        fresh: bool,
    ) {
        let m = plan.layout.shape[0];
        let (columns, width) = (plan.kind.n, plan.a_columns());
        let (step_k, b_row) = (plan.kind.k(), plan.b_k_columns());
        let b_major = if staged.b_transposed {
            Major::K
        } else {
            Major::Mn
        };
        let kind = plan.kind.with_b_major(b_major);
        let instruction = |byte: u8| match a {
            SourceA::Shared(a) if images.is_some() => ThreadOpKind::Tcgen05MmaScaled {
                kind,
                a,
                a_swizzle: plan.a_swizzle,
                b: staged.b,
                byte,
            },
            SourceA::Shared(a) => ThreadOpKind::Tcgen05Mma {
                kind,
                a,
                a_swizzle: plan.a_swizzle,
                b: staged.b,
            },
            SourceA::Tensor(_) => ThreadOpKind::Tcgen05MmaTensorA { kind, b: staged.b },
        };
        // A block-scaled step `s` reads byte `s % 4` of the images of its
        // blocks' set `s / 4` (`tensor_scales.rs`).
        let sets = (k / GROUP_K).div_ceil(GROUPS_PER_COLUMN);
        let image_columns = [scale_columns(M), scale_columns(columns)];
        let accumulate = self.constant(Scalar::Bool(true));
        let first = match fresh {
            true => self.constant(Scalar::Bool(false)),
            false => accumulate,
        };
        let [stage_a, stage_b] = staged.offsets;
        for step in 0..k / step_k {
            let accumulate = if step == 0 { first } else { accumulate };
            // A: the step's `K` columns in block `k / W` of A's staging.
            let a_column = (step * step_k / width) * m * width + (step * step_k) % width;
            // B: the step's `K` rows of each block of `columns` `n`, or
            // (K-major) its `K` columns in the step's block of `b_row`.
            let (b_step, b_block) = match staged.b_transposed {
                true => (
                    (step * step_k / b_row) * n * b_row + (step * step_k) % b_row,
                    columns * b_row,
                ),
                false => (step * step_k * columns, k * columns),
            };
            for i in 0..m / M {
                let ia = match a {
                    SourceA::Shared(_) => self.staged_index(a_column + i * M * width, stage_a),
                    // Row block `i`'s `K / 2` columns, the step's 8 of them.
                    SourceA::Tensor(base) => self.tmem_column(base, (i * k + step * step_k) / 2),
                };
                for j in 0..n / columns {
                    let ib = self.staged_index(b_step + j * b_block, stage_b);
                    let d = self.tmem_column(tm.base, i * n + j * columns);
                    let mut operands = vec![ia, ib, d];
                    if let Some([sa, sb]) = images {
                        let set = step / GROUPS_PER_COLUMN;
                        let at_a = (i * sets + set) * image_columns[0];
                        let at_b = (j * sets + set) * image_columns[1];
                        operands.push(self.tmem_column(sa, at_a));
                        operands.push(self.tmem_column(sb, at_b));
                    }
                    operands.extend([accumulate, tm.elected]);
                    let byte = (step % GROUPS_PER_COLUMN) as u8;
                    self.emit_op(instruction(byte), operands, &[]);
                }
            }
        }
    }

    /// `index` plus a pipelined loop's stage offset, if any (`i32`).
    fn staged_index(&mut self, index: usize, stage: Option<Reg>) -> Reg {
        let index = self.i32c(index as i64);
        match stage {
            Some(stage) => self.binary(BinaryOp::Add, index, stage),
            None => index,
        }
    }

    /// `base + columns` (`i32`), hoisted.
    pub(super) fn tmem_column(&mut self, base: Reg, columns: usize) -> Reg {
        match columns {
            0 => base,
            _ => self.hoist_with_const(BinaryOp::Add, base, columns as i64),
        }
    }
}
