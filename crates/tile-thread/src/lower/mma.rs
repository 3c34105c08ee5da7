//! `dot` on tensor cores: `mma.sync.m16n8k16` (`m16n8k8.tf32`) steps from
//! the staged operands.
//!
//! The operands are in shared memory, row-major (`a: [M, K]`, `b: [K, N]`),
//! the accumulator in the instruction's layout (`layout_assign::mma`). Warp
//! `w` owns the 16×8 blocks `(w / wn + wm·i, w % wn + wn·j)`; for each
//! `k`-step of 16 it loads the A fragment of each of its block rows with one
//! `ldmatrix.x4` (the four 8×8 quarters of the 16×16 block, in the A
//! fragment's register order) and the B fragments of each two of its block
//! columns with one `ldmatrix.x4.trans` (B is staged `k`-major, the
//! fragment wants `k` pairs per lane; an `x2.trans` for a last odd column),
//! then issues one `mma` per block. The sum of each step is the
//! instruction's: precision `tensor` allows it. TF32 (`k`-steps of 8, 32-bit
//! elements) loads A the same way (an 8×8 `b16` matrix is 8×4 `f32`, the A
//! fragment's register order again), and B element by element (`.trans`
//! would split 32-bit elements), each operand rounded to TF32 before the
//! step. FP8 (`k`-steps of 32, 8-bit elements) loads A with `ldmatrix` too
//! (an 8×8 `b16` matrix is 8×16 bytes, the A fragment's register order once
//! more) and B element by element, as TF32 does. WMMA and MFMA (whose warps
//! are 64-lane waves) load their fragments element by element.
//!
//! Addresses: each lane's `ldmatrix` row address is swizzled
//! (`operand_swizzle.rs`), and the part of a block's offset that is a
//! multiple of the swizzle's period (rows of 8, or whole `k`-steps of B) is
//! added after the swizzle, where `ptxas` folds it into the instruction's
//! immediate: a warp needs one swizzled register per `k`-step of A and per
//! pair of block columns of B, not one per fragment.

use super::dot::{OperandA, StagedOperands};
use super::operand_swizzle::OperandLayout;
use super::{LowerError, Lowerer};
use crate::layout_assign::{DistLayout, MmaDot};
use crate::program::{LdMatrix, MmaKind, Reg, SharedId, ThreadOpKind, WARP_SIZE};
use tile_hw::mma::{Fragment, MmaFamily};
use tile_ir::{BinaryOp, DType, UnaryOp};

/// The error of an A bound for tensor memory reaching another
/// instruction's steps.
pub(super) fn tensor_a_elsewhere() -> LowerError {
    LowerError::Invalid {
        op: "dot".into(),
        reason: "an operand bound for tensor memory off tcgen05.mma".into(),
    }
}

/// Where [`Lowerer::mma_steps`] takes each `k`-step's `a` fragments from.
#[derive(Clone, Copy)]
enum SourceA<'a> {
    /// The staging, the lane's part from the element given.
    Shared(SharedId, Reg),
    /// Registers, `[k-step][block row]`.
    Registers(&'a [Vec<Vec<Reg>>]),
}

impl Lowerer<'_> {
    /// The accumulator registers `acc` (in `plan.layout`) after every
    /// `k`-step of `a · b`, for `a: [M, K]` and `b: [K, N]` staged as
    /// `staged` says.
    pub(super) fn mma_steps(
        &mut self,
        plan: &MmaDot,
        staged: &StagedOperands,
        (k, n): (usize, usize),
        acc: &[Reg],
    ) -> Result<Vec<Reg>, LowerError> {
        // A's lane offset first, then B's (the order of their registers).
        let a_source = match &staged.a {
            &OperandA::Shared(alloc) => SourceA::Shared(alloc, self.a_base(plan, k)),
            OperandA::Registers(fragments) => SourceA::Registers(fragments),
            OperandA::Tensor(_) => return Err(tensor_a_elsewhere()),
        };
        let alloc_b = staged.b;
        // `mma.sync`'s operands are swizzled rows or the TMA's blocks; the
        // others' plain rows.
        let [place_a, place_b] = staged.layouts;
        let [stage_a, stage_b] = staged.offsets;
        let kind = plan.kind;
        let (_, in_, ik) = kind.shape();
        let wn = plan.warps[1];
        let rep_n = n / (in_ * wn);
        // Lane `l` supplies row `l % 16` of the step's 16 `k` to
        // `ldmatrix`; warp `w` = wn·warp_m + warp_n. MFMA: a 64-lane wave,
        // lane `l` holds column `l % im` of B's block, `k` from
        // `e·(l / im)` of the step on (`e` = 4, or 8 on CDNA 4's forms);
        // RDNA 4's WMMA likewise in a warp
        // (its elements' further `k` are `kind.element`'s).
        let [lane, warp, row, half] = self.lane_coordinates(kind);
        let warp_n = self.hoist_with_const(BinaryOp::Rem, warp, wn as i64);
        let dtype = kind.operand_dtype();
        let by_elements = kind.family() != MmaFamily::MmaSync;
        let tf32 = kind == MmaKind::Tf32M16N8K8;
        // `mma.sync`'s TF32 and FP8 load B element by element: `.trans`
        // would split or swap their elements.
        let b_elements = !by_elements && (tf32 || kind.is_fp8());
        // B: one `ldmatrix.x4.trans` per two blocks of a warp's columns
        // (lanes 16..32 address the second block, `8·wn` columns further),
        // an `x2.trans` for a last odd one.
        let b_pairs = !by_elements && !b_elements && rep_n >= 2;
        let base_b = if matches!(kind.family(), MmaFamily::Mfma | MmaFamily::Wmma12) {
            // The `k` of the first element of lane `in_` (the second half).
            let k_half = operand_k(plan, in_, 0);
            self.linear(&[(half, k_half * n), (row, 1), (warp_n, in_)])
        } else if by_elements {
            // WMMA: lane `l` holds column `l % 16` of B's block, all 16 `k`
            // of the step (lanes 16..32 the same).
            self.linear(&[(row, 1), (warp_n, in_)])
        } else if b_elements {
            // B: lane `l` holds column `l / 4` at the `k` of its fragment's
            // elements, which start at `k = l % 4` (TF32) or `4·(l % 4)`
            // (FP8).
            let group = self.hoist_with_const(BinaryOp::Div, lane, 4);
            let in_group = self.hoist_with_const(BinaryOp::Rem, lane, 4);
            let k_per_lane = kind.element(Fragment::B, 1, 0).0;
            self.linear(&[(in_group, k_per_lane * n), (group, 1), (warp_n, in_)])
        } else {
            let second_block = if b_pairs { in_ * wn } else { 0 };
            self.linear(&[(row, n), (warp_n, in_), (half, second_block)])
        };
        // B: the two 8×8 halves of a 16×8 block, transposed.
        let b_shape = |count| LdMatrix { count, trans: true };
        // A K-major B (`[N, K]` staged): the lane's row of `ldmatrix`, an
        // `x4` for each two block columns whatever the element size.
        let base_bt = staged
            .b_transposed
            .then(|| self.transposed_b_base(plan, k, rep_n >= 2));
        // A block-scaled instruction's scales (`block_scales.rs`).
        let scales = staged
            .scales
            .as_ref()
            .map(|s| self.with_scale_bases(plan, s));
        let mut acc = acc.to_vec();
        for step in 0..k / ik {
            let a_frags: Vec<Vec<Reg>> = match a_source {
                SourceA::Registers(fragments) => fragments[step].clone(),
                SourceA::Shared(alloc, base) => {
                    self.a_fragments(plan, (alloc, place_a, stage_a), (base, k), step)
                }
            };
            let b_frags: Vec<Vec<Reg>> = if let Some(base) = base_bt {
                let at = (alloc_b, place_b, stage_b);
                self.transposed_b_fragments(plan, at, (base, k, n), step)
            } else if b_elements {
                (0..rep_n)
                    .map(|rn| {
                        (0..kind.elements(Fragment::B))
                            .map(|i| {
                                // Lane 0's `k` of element `i`; the lane's
                                // own is in `base_b`.
                                let k0 = kind.element(Fragment::B, 0, i).0;
                                let offset = step * ik * n + rn * in_ * wn + k0 * n;
                                let at = (base_b, offset, stage_b);
                                let index = self.operand_address(at, (place_b, n));
                                let load = ThreadOpKind::LoadShared {
                                    alloc: alloc_b,
                                    width: 1,
                                };
                                self.emit(load, vec![index], dtype)
                            })
                            .collect()
                    })
                    .collect()
            } else if by_elements {
                (0..rep_n)
                    .map(|rn| {
                        let offset = step * ik * n + rn * in_ * wn;
                        self.elements(alloc_b, plan, base_b, offset, n)
                    })
                    .collect()
            } else {
                let mut frags = Vec::new();
                let mut rn = 0;
                while rn < rep_n {
                    let offset = step * ik * n + rn * in_ * wn;
                    let count = if b_pairs && rn + 1 < rep_n { 4 } else { 2 };
                    let at = (base_b, offset, stage_b);
                    let regs = self.ldmatrix(alloc_b, b_shape(count), dtype, at, (place_b, n));
                    frags.extend(regs.chunks(4).map(<[Reg]>::to_vec));
                    rn += usize::from(count) / 2;
                }
                frags
            };
            // The instruction reads TF32: round to nearest, as `round_tf32`.
            let (a_frags, b_frags) = if tf32 {
                let mut round = |frags: Vec<Vec<Reg>>| -> Vec<Vec<Reg>> {
                    frags
                        .into_iter()
                        .map(|regs| {
                            regs.into_iter()
                                .map(|r| {
                                    let op = ThreadOpKind::Unary(UnaryOp::RoundTf32);
                                    self.emit(op, vec![r], DType::F32)
                                })
                                .collect()
                        })
                        .collect()
                };
                (round(a_frags), round(b_frags))
            } else {
                (a_frags, b_frags)
            };
            let nc = kind.elements(Fragment::C);
            let reps = [a_frags.len(), b_frags.len()];
            let step_scales = match &scales {
                Some(s) => Some(self.step_scales(plan, s, reps, step)?),
                None => None,
            };
            for (rm, a_frag) in a_frags.iter().enumerate() {
                for (rn, b_frag) in b_frags.iter().enumerate() {
                    let first = nc * (rn + rep_n * rm);
                    // A transposed block: `Dᵀ = Bᵀ·Aᵀ`, whose A fragment
                    // is B's and whose B fragment is A's (MFMA's are mirror
                    // images).
                    let (first_operand, second) = match plan.transposed {
                        true => (b_frag, a_frag),
                        false => (a_frag, b_frag),
                    };
                    let mut operands = first_operand.clone();
                    operands.extend(second);
                    operands.extend(&acc[first..first + nc]);
                    if let Some([a_scales, b_scales]) = &step_scales {
                        operands.extend([a_scales[rm], b_scales[rn]]);
                    }
                    let op =
                        self.emit_op(ThreadOpKind::Mma { kind }, operands, &vec![DType::F32; nc]);
                    let results = self.program.ops[op].results.clone();
                    acc[first..first + nc].copy_from_slice(&results);
                }
            }
        }
        Ok(acc)
    }

    /// A thread's lane, warp (MFMA: wave), row of its instruction block
    /// (`lane % M`) and half (`lane / M`) under `kind`, hoisted.
    pub(super) fn lane_coordinates(&mut self, kind: MmaKind) -> [Reg; 4] {
        let im = kind.shape().0 as i64;
        let tid = self.thread_id();
        let lanes = kind.lanes() as i64;
        let lane = self.hoist_with_const(BinaryOp::Rem, tid, lanes);
        let warp = self.hoist_with_const(BinaryOp::Div, tid, lanes);
        let row = self.hoist_with_const(BinaryOp::Rem, lane, im);
        let half = self.hoist_with_const(BinaryOp::Div, lane, im);
        [lane, warp, row, half]
    }

    /// The element of a staged `a: [M, k]` at which the lane's part of its
    /// warp's first block row starts ([`Lowerer::a_fragments`] adds each
    /// fragment's offset).
    pub(super) fn a_base(&mut self, plan: &MmaDot, k: usize) -> Reg {
        let kind = plan.kind;
        let (im, _, ik) = kind.shape();
        let wn = plan.warps[1];
        // Lane `l` supplies row `l % 16` of the block to `ldmatrix`, its
        // left or right 8 columns (TF32: 4, FP8: 16) by `l / 16`. WMMA:
        // lane `l` holds row `l % 16`, all 16 `k` of the step. MFMA: a
        // 64-lane wave, lane `l` holds row `l % im`, `k` from `e·(l / im)`
        // of the step on (`e` its elements); RDNA 4's WMMA likewise in a
        // warp.
        let [_, warp, row, half] = self.lane_coordinates(kind);
        let warp_m = self.hoist_with_const(BinaryOp::Div, warp, wn as i64);
        match kind.family() {
            MmaFamily::Mfma | MmaFamily::Wmma12 => {
                let k_half = operand_k(plan, im, 0);
                self.linear(&[(warp_m, im * k), (row, k), (half, k_half)])
            }
            MmaFamily::Wmma => self.linear(&[(warp_m, im * k), (row, k)]),
            MmaFamily::MmaSync => self.linear(&[(warp_m, im * k), (row, k), (half, ik / 2)]),
        }
    }

    /// The `a` fragments of `k`-step `step` of each of a warp's block rows
    /// (in the instruction's element order) from `alloc`, where `a: [M,
    /// k]` is staged as `place` at `stage`, the lane's part starting at
    /// `base` ([`Lowerer::a_base`]).
    pub(super) fn a_fragments(
        &mut self,
        plan: &MmaDot,
        (alloc, place, stage): (SharedId, OperandLayout, Option<Reg>),
        (base, k): (Reg, usize),
        step: usize,
    ) -> Vec<Vec<Reg>> {
        let kind = plan.kind;
        let (im, _, ik) = kind.shape();
        let wm = plan.warps[0];
        let rep_m = plan.layout.shape[0] / (im * wm);
        // The four 8×8 quarters of a 16×16 block, in the A fragment's
        // element order.
        let shape = LdMatrix {
            count: 4,
            trans: false,
        };
        (0..rep_m)
            .map(|rm| {
                let offset = rm * im * wm * k + step * ik;
                if kind.family() == MmaFamily::MmaSync {
                    let dtype = kind.operand_dtype();
                    self.ldmatrix(alloc, shape, dtype, (base, offset, stage), (place, k))
                } else {
                    self.elements(alloc, plan, base, offset, 1)
                }
            })
            .collect()
    }

    /// The element of a K-major `b` staged as `[n, k]` at which the lane's
    /// row of its warp's first (pair of) block columns starts
    /// ([`Lowerer::transposed_b_fragments`]): `ldmatrix`'s matrix `q = l /
    /// 8` is the `k` half `q % 2` of block column `q / 2` (of the second
    /// of a pair, `8·wn` rows further, when `pairs`). A half is 16 bytes of
    /// a row: 8 16-bit `k`, 16 FP8 ones, 4 TF32 ones, each lane's register
    /// the consecutive `k` its B fragment holds.
    fn transposed_b_base(&mut self, plan: &MmaDot, k: usize, pairs: bool) -> Reg {
        let kind = plan.kind;
        let (_, in_, ik) = kind.shape();
        let wn = plan.warps[1];
        let [lane, warp, row, half] = self.lane_coordinates(kind);
        let warp_n = self.hoist_with_const(BinaryOp::Rem, warp, wn as i64);
        let in_block = self.hoist_with_const(BinaryOp::Rem, lane, in_ as i64);
        let k_half = self.hoist_with_const(BinaryOp::Div, row, 8);
        let second = if pairs { in_ * wn * k } else { 0 };
        self.linear(&[
            (in_block, k),
            (k_half, ik / 2),
            (warp_n, in_ * k),
            (half, second),
        ])
    }

    /// The `b` fragments of `k`-step `step` of each of a warp's block
    /// columns from `alloc`, where `b` is staged K-major as `[n, k]` as
    /// `place` at `stage`: one `ldmatrix.x4` (no `.trans`: a lane's pair
    /// of `k` is two consecutive elements of its row, the B fragment's
    /// order) per two block columns, an `x2` for a last odd one.
    fn transposed_b_fragments(
        &mut self,
        plan: &MmaDot,
        (alloc, place, stage): (SharedId, OperandLayout, Option<Reg>),
        (base, k, n): (Reg, usize, usize),
        step: usize,
    ) -> Vec<Vec<Reg>> {
        let kind = plan.kind;
        let (_, in_, ik) = kind.shape();
        let wn = plan.warps[1];
        let rep_n = n / (in_ * wn);
        let dtype = kind.operand_dtype();
        let mut frags = Vec::new();
        let mut rn = 0;
        while rn < rep_n {
            let count = if rep_n >= 2 && rn + 1 < rep_n { 4 } else { 2 };
            let offset = rn * in_ * wn * k + step * ik;
            let shape = LdMatrix {
                count,
                trans: false,
            };
            let regs = self.ldmatrix(alloc, shape, dtype, (base, offset, stage), (place, k));
            frags.extend(regs.chunks(kind.elements(Fragment::B)).map(<[Reg]>::to_vec));
            rn += usize::from(count) / 2;
        }
        frags
    }

    /// The `a` fragments of a chained product (`[k-step][block
    /// row]`, each in the instruction's element order) among the registers
    /// `regs` of an operand tile of `K = k` columns in `layout`, or `None`
    /// unless every element of every fragment is one register of `layout`
    /// in every thread: the register that holds the fragment's coordinate
    /// for thread 0 must hold it for all (`layout_assign/chain.rs`).
    pub(super) fn chained_a_fragments(
        &self,
        plan: &MmaDot,
        layout: &DistLayout,
        regs: &[Reg],
        k: usize,
    ) -> Option<Vec<Vec<Vec<Reg>>>> {
        let kind = plan.kind;
        if regs.len() != layout.registers() {
            return None;
        }
        let (im, _, ik) = kind.shape();
        let [wm, wn] = plan.warps;
        let m = plan.layout.shape[0];
        if layout.shape != [m, k] || !k.is_multiple_of(ik) {
            return None;
        }
        let lanes = kind.lanes();
        let threads = self.program.num_warps as usize * WARP_SIZE as usize;
        // Where element `i` of block row `rm`'s fragment at `k`-step `step`
        // sits for thread `t`.
        let at = |t: usize, step: usize, rm: usize, i: usize| {
            let (lane, warp) = (t % lanes, t / lanes);
            let row = kind.element(Fragment::A, lane, i).0;
            vec![
                (rm * wm + warp / wn) * im + row,
                step * ik + operand_k(plan, lane, i),
            ]
        };
        let counts = [k / ik, m / (im * wm), kind.elements(Fragment::A)];
        fragments_in(layout, regs, threads, counts, at)
    }

    /// A WMMA or MFMA operand fragment of `plan`'s instruction: its
    /// elements (16 for RDNA 3's WMMA, 8 for RDNA 4's, 4 for MFMA, 8 for
    /// CDNA 4's) from `alloc` at `base + offset + k_i·stride`, `k_i` the
    /// `k` of element `i` of lane 0 as the plan feeds it ([`operand_k`]; a
    /// lane's own `k` beyond lane 0's are in its `base`).
    fn elements(
        &mut self,
        alloc: SharedId,
        plan: &MmaDot,
        base: Reg,
        offset: usize,
        stride: usize,
    ) -> Vec<Reg> {
        let kind = plan.kind;
        (0..kind.elements(Fragment::A))
            .map(|i| {
                let k = operand_k(plan, 0, i);
                let c = self.i32c((offset + k * stride) as i64);
                let index = self.binary(BinaryOp::Add, base, c);
                let dtype = kind.operand_dtype();
                self.emit(
                    ThreadOpKind::LoadShared { alloc, width: 1 },
                    vec![index],
                    dtype,
                )
            })
            .collect()
    }

    /// The registers `ldmatrix` of `shape` gives each lane from `alloc`
    /// (an operand of rows of `cols` elements stored as `place`), the lane's
    /// row at `base + offset` of the stage at `stage` (a whole number of
    /// swizzle periods, or 0).
    fn ldmatrix(
        &mut self,
        alloc: SharedId,
        shape: LdMatrix,
        dtype: DType,
        at: (Reg, usize, Option<Reg>),
        stored: (OperandLayout, usize),
    ) -> Vec<Reg> {
        let index = self.operand_address(at, stored);
        // Four 8-bit elements per register, two 16-bit ones, or one 32-bit
        // one.
        let per_register = 4 / dtype.size_bytes();
        let results = vec![dtype; per_register * usize::from(shape.count)];
        let op = self.emit_op(
            ThreadOpKind::LdMatrix { alloc, shape },
            vec![index],
            &results,
        );
        self.program.ops[op].results.clone()
    }

    /// Where element `base + offset` (row-major) of an operand of rows of
    /// `cols` elements stored as `place` sits, in the stage at `stage` (a
    /// whole number of swizzle periods, or 0).
    ///
    /// The part of the offset that commutes with the placement is added
    /// after it, as an immediate, so that the placed registers are few (one
    /// per distinct remainder): for swizzled rows, the multiples of the
    /// swizzle's period; for the TMA's blocks, whole groups of 8 rows (`8·W`
    /// elements of a block, the swizzle's period), the rest (which may
    /// move the element to another block) before.
    fn operand_address(
        &mut self,
        (base, offset, stage): (Reg, usize, Option<Reg>),
        (place, cols): (OperandLayout, usize),
    ) -> Reg {
        let (low, high) = match place {
            OperandLayout::RowMajor(swizzle) => {
                let period = swizzle.map_or(1, super::operand_swizzle::swizzle_period);
                (offset % period, offset - offset % period)
            }
            OperandLayout::Blocks { width, .. } => match (offset / cols, offset % cols) {
                (rows, col) if rows % 8 == 0 => (col, rows * width),
                _ => (offset, 0),
            },
        };
        let index = if low == 0 {
            base
        } else {
            let c = self.i32c(low as i64);
            self.binary(BinaryOp::Add, base, c)
        };
        let index = match place {
            OperandLayout::RowMajor(swizzle) => self.swizzled(index, swizzle),
            OperandLayout::Blocks { rows, width, bytes } => {
                let (row, col) = match cols.is_power_of_two() {
                    true => (
                        self.with_const(BinaryOp::Shr, index, cols.trailing_zeros() as i64),
                        self.with_const(BinaryOp::And, index, cols as i64 - 1),
                    ),
                    false => (
                        self.with_const(BinaryOp::Div, index, cols as i64),
                        self.with_const(BinaryOp::Rem, index, cols as i64),
                    ),
                };
                self.blocks_index([rows, width, bytes], (row, col), false)
            }
        };
        let index = match stage {
            Some(stage) => self.binary(BinaryOp::Add, index, stage),
            None => index,
        };
        if high == 0 {
            index
        } else {
            let c = self.i32c(high as i64);
            self.binary(BinaryOp::Add, index, c)
        }
    }
}

/// The `k`, within its step, of element `i` of `lane`'s A fragment as
/// `plan` feeds the instruction: the instruction's own, or with
/// [`MmaDot::paired_k`] the `k` of two CDNA 3 half-steps. B's elements,
/// the mirror image of A's on WMMA and MFMA, take the same `k`.
fn operand_k(plan: &MmaDot, lane: usize, i: usize) -> usize {
    let kind = plan.kind;
    if plan.paired_k {
        let (side, _, k) = kind.shape();
        4 * (lane / side) + i % 4 + (k / 2) * (i / 4)
    } else {
        kind.element(Fragment::A, lane, i).1
    }
}

/// The registers among `regs` (in `layout`, over `threads` threads) of
/// `[steps][rows][elements]` operand fragments, element `i` of row `r` at
/// step `s` wanted at coordinate `at(t, s, r, i)` in thread `t`: for each,
/// the register that holds it in thread 0, if it holds it (live) in every
/// thread; `None` unless every element has one.
pub(super) fn fragments_in(
    layout: &DistLayout,
    regs: &[Reg],
    threads: usize,
    [steps, rows, elements]: [usize; 3],
    at: impl Fn(usize, usize, usize, usize) -> Vec<usize>,
) -> Option<Vec<Vec<Vec<Reg>>>> {
    let holds = |t: usize, v: usize, want: &[usize]| {
        let (coord, live, _) = layout.coordinate(t, v);
        live && coord == want
    };
    (0..steps)
        .map(|step| {
            (0..rows)
                .map(|rm| {
                    (0..elements)
                        .map(|i| {
                            let v = (0..regs.len()).find(|&v| holds(0, v, &at(0, step, rm, i)))?;
                            (0..threads)
                                .all(|t| holds(t, v, &at(t, step, rm, i)))
                                .then_some(regs[v])
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}
