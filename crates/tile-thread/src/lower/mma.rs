//! `dot` on tensor cores: `mma.sync.m16n8k16` steps from the staged
//! operands.
//!
//! The operands are in shared memory, row-major (`a: [M, K]`, `b: [K, N]`),
//! the accumulator in the instruction's layout (`layout_assign::mma`). Warp
//! `w` owns the 16×8 blocks `(w / wn + wm·i, w % wn + wn·j)`; for each
//! `k`-step of 16 it reads the A fragment of each of its block rows and the
//! B fragment of each of its block columns (the element order of
//! [`tile_abi::mma`]), then issues one `mma` per block. The sum of each step
//! is the instruction's: precision `tensor` allows it.

use super::Lowerer;
use crate::layout_assign::MmaDot;
use crate::program::{Reg, SharedId, ThreadOpKind};
use tile_abi::mma::Fragment;
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
    ) -> Vec<Reg> {
        let kind = plan.kind;
        let (im, in_, ik) = kind.shape();
        let [wm, wn] = plan.warps;
        let m = plan.layout.shape[0];
        let (rep_m, rep_n) = (m / (im * wm), n / (in_ * wn));
        // Thread-dependent bases: lane `l` = 4g + t, warp `w` = wn·wm_i + wn_i.
        let tid = self.thread_id();
        let lane = self.hoist_with_const(BinaryOp::Rem, tid, 32);
        let warp = self.hoist_with_const(BinaryOp::Div, tid, 32);
        let g = self.hoist_with_const(BinaryOp::Div, lane, 4);
        let t = self.hoist_with_const(BinaryOp::Rem, lane, 4);
        let warp_m = self.hoist_with_const(BinaryOp::Div, warp, wn as i64);
        let warp_n = self.hoist_with_const(BinaryOp::Rem, warp, wn as i64);
        // A: row 16·warp_m + g, column 2t; B: row 2t, column 8·warp_n + g.
        let base_a = self.linear(&[(warp_m, im * k), (g, k), (t, 2)]);
        let base_b = self.linear(&[(t, 2 * n), (warp_n, in_), (g, 1)]);
        // The offset of element `i` of lane 0's fragment from lane 0's base.
        let offset = |fragment: Fragment, i: usize, stride: usize| {
            let (row, col) = kind.element(fragment, 0, i);
            row * stride + col
        };
        let dtype = kind.operand_dtype();
        let mut acc = acc.to_vec();
        for step in 0..k / ik {
            let mut a_frags = Vec::with_capacity(rep_m);
            for rm in 0..rep_m {
                let start = rm * im * wm * k + step * ik;
                let frag: Vec<Reg> = (0..kind.elements(Fragment::A))
                    .map(|i| {
                        self.read_fragment(
                            alloc_a,
                            dtype,
                            base_a,
                            start + offset(Fragment::A, i, k),
                        )
                    })
                    .collect();
                a_frags.push(frag);
            }
            let mut b_frags = Vec::with_capacity(rep_n);
            for rn in 0..rep_n {
                let start = step * ik * n + rn * in_ * wn;
                let frag: Vec<Reg> = (0..kind.elements(Fragment::B))
                    .map(|i| {
                        self.read_fragment(
                            alloc_b,
                            dtype,
                            base_b,
                            start + offset(Fragment::B, i, n),
                        )
                    })
                    .collect();
                b_frags.push(frag);
            }
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

    /// The element of `alloc` at `base + offset`.
    fn read_fragment(&mut self, alloc: SharedId, dtype: DType, base: Reg, offset: usize) -> Reg {
        let index = if offset == 0 {
            base
        } else {
            let c = self.i32c(offset as i64);
            self.binary(BinaryOp::Add, base, c)
        };
        self.emit(ThreadOpKind::LoadShared { alloc }, vec![index], dtype)
    }
}
