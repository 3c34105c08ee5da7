//! `dot` on tensor cores: `mma.sync.m16n8k16` steps from the staged
//! operands.
//!
//! The operands are in shared memory, row-major (`a: [M, K]`, `b: [K, N]`),
//! the accumulator in the instruction's layout (`layout_assign::mma`). Warp
//! `w` owns the 16×8 blocks `(w / wn + wm·i, w % wn + wn·j)`; for each
//! `k`-step of 16 it loads the A fragment of each of its block rows with one
//! `ldmatrix.x4` (the four 8×8 quarters of the 16×16 block, in the A
//! fragment's register order) and the B fragment of each of its block
//! columns with one `ldmatrix.x2.trans` (B is staged `k`-major, the
//! fragment wants `k` pairs per lane), then issues one `mma` per block. The sum of each step
//! is the instruction's: precision `tensor` allows it. WMMA and MFMA (whose
//! warps are 64-lane waves) load their fragments element by element.

use super::Lowerer;
use crate::layout_assign::MmaDot;
use crate::program::{LdMatrix, MmaKind, Reg, SharedId, ThreadOpKind};
use tile_abi::mma::{Fragment, MmaFamily};
use tile_ir::layout::Swizzle;
use tile_ir::{BinaryOp, DType};

impl Lowerer<'_> {
    /// The accumulator registers `acc` (in `plan.layout`) after every
    /// `k`-step of `a · b`, for `a: [M, K]` and `b: [K, N]` staged in
    /// `alloc_a` and `alloc_b`.
    pub(super) fn mma_steps(
        &mut self,
        plan: &MmaDot,
        [alloc_a, alloc_b]: [SharedId; 2],
        (k, n): (usize, usize),
        acc: &[Reg],
        [sw_a, sw_b]: [Option<Swizzle>; 2],
    ) -> Vec<Reg> {
        let kind = plan.kind;
        let (im, in_, ik) = kind.shape();
        let [wm, wn] = plan.warps;
        let m = plan.layout.shape[0];
        let (rep_m, rep_n) = (m / (im * wm), n / (in_ * wn));
        // Lane `l` supplies row `l % 16` (A: of the block's 16 rows, its
        // left or right 8 columns by `l / 16`; B: of the step's 16 `k`) to
        // `ldmatrix`; warp `w` = wn·warp_m + warp_n.
        // MFMA: a 64-lane wave, lane `l` holds row `l % im` of A's block and
        // column `l % im` of B's, `k` from `4·(l / im)` of the step on.
        let tid = self.thread_id();
        let lanes = kind.lanes() as i64;
        let lane = self.hoist_with_const(BinaryOp::Rem, tid, lanes);
        let warp = self.hoist_with_const(BinaryOp::Div, tid, lanes);
        let row = self.hoist_with_const(BinaryOp::Rem, lane, im as i64);
        let half = self.hoist_with_const(BinaryOp::Div, lane, im as i64);
        let warp_m = self.hoist_with_const(BinaryOp::Div, warp, wn as i64);
        let warp_n = self.hoist_with_const(BinaryOp::Rem, warp, wn as i64);
        let dtype = kind.operand_dtype();
        let by_elements = kind.family() != MmaFamily::MmaSync;
        let (base_a, base_b) = if kind.family() == MmaFamily::Mfma {
            (
                self.linear(&[(warp_m, im * k), (row, k), (half, 4)]),
                self.linear(&[(half, 4 * n), (row, 1), (warp_n, in_)]),
            )
        } else if by_elements {
            // WMMA: lane `l` holds row `l % 16` of A's block and column
            // `l % 16` of B's, all 16 `k` of the step (lanes 16..32 the same).
            (
                self.linear(&[(warp_m, im * k), (row, k)]),
                self.linear(&[(row, 1), (warp_n, in_)]),
            )
        } else {
            (
                self.linear(&[(warp_m, im * k), (row, k), (half, 8)]),
                self.linear(&[(row, n), (warp_n, in_)]),
            )
        };
        // A: the four 8×8 quarters of a 16×16 block (element order of the
        // A fragment); B: the two 8×8 halves of a 16×8 block, transposed.
        let a_shape = LdMatrix {
            count: 4,
            trans: false,
        };
        let b_shape = LdMatrix {
            count: 2,
            trans: true,
        };
        let mut acc = acc.to_vec();
        for step in 0..k / ik {
            let a_frags: Vec<Vec<Reg>> = (0..rep_m)
                .map(|rm| {
                    let offset = rm * im * wm * k + step * ik;
                    if by_elements {
                        self.elements(alloc_a, kind, base_a, offset, 1)
                    } else {
                        self.ldmatrix(alloc_a, a_shape, dtype, base_a, offset, sw_a)
                    }
                })
                .collect();
            let b_frags: Vec<Vec<Reg>> = (0..rep_n)
                .map(|rn| {
                    let offset = step * ik * n + rn * in_ * wn;
                    if by_elements {
                        self.elements(alloc_b, kind, base_b, offset, n)
                    } else {
                        self.ldmatrix(alloc_b, b_shape, dtype, base_b, offset, sw_b)
                    }
                })
                .collect();
            let nc = kind.elements(Fragment::C);
            for (rm, a_frag) in a_frags.iter().enumerate() {
                for (rn, b_frag) in b_frags.iter().enumerate() {
                    let first = nc * (rn + rep_n * rm);
                    let mut operands = a_frag.clone();
                    operands.extend(b_frag);
                    operands.extend(&acc[first..first + nc]);
                    let op =
                        self.emit_op(ThreadOpKind::Mma { kind }, operands, &vec![DType::F32; nc]);
                    let results = self.program.ops[op].results.clone();
                    acc[first..first + nc].copy_from_slice(&results);
                }
            }
        }
        acc
    }

    /// The 16 (MFMA: 4) elements of `alloc` at `base + offset + i·stride`:
    /// a WMMA or MFMA operand fragment of `kind`.
    fn elements(
        &mut self,
        alloc: SharedId,
        kind: MmaKind,
        base: Reg,
        offset: usize,
        stride: usize,
    ) -> Vec<Reg> {
        (0..kind.elements(Fragment::A))
            .map(|i| {
                let c = self.i32c((offset + i * stride) as i64);
                let index = self.binary(BinaryOp::Add, base, c);
                let dtype = kind.operand_dtype();
                self.emit(ThreadOpKind::LoadShared { alloc }, vec![index], dtype)
            })
            .collect()
    }

    /// The registers `ldmatrix` of `shape` gives each lane from `alloc`
    /// (stored under `swizzle`), the lane's row at `base + offset`.
    fn ldmatrix(
        &mut self,
        alloc: SharedId,
        shape: LdMatrix,
        dtype: DType,
        base: Reg,
        offset: usize,
        swizzle: Option<Swizzle>,
    ) -> Vec<Reg> {
        let index = if offset == 0 {
            base
        } else {
            let c = self.i32c(offset as i64);
            self.binary(BinaryOp::Add, base, c)
        };
        let index = self.swizzled(index, swizzle);
        let results = vec![dtype; 2 * usize::from(shape.count)];
        let op = self.emit_op(
            ThreadOpKind::LdMatrix { alloc, shape },
            vec![index],
            &results,
        );
        self.program.ops[op].results.clone()
    }
}
