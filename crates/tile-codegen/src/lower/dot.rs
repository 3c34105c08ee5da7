//! `dot` on CUDA cores, exact: one fused multiply-add per `k`, ascending.
//!
//! Both operands are staged in shared memory (one barrier for the two); each
//! register `(m, n)` of the accumulator, in the accumulator's layout, then
//! computes `acc = fma(a[m, k], b[k, n], acc)` for `k = 0, 1, …, K-1` from its
//! own `c` register, the operands widened exactly to the accumulator dtype
//! first — the interpreter's order and rounding, so the result is
//! bit-identical. For `i8` operands the step is `acc + a * b` in `i32`.

use super::{LowerError, Lowered, Lowerer};
use crate::thread::ThreadOpKind;
use tile_ir::{BinaryOp, DType, OpId};

impl Lowerer<'_> {
    /// Lowers `dot`.
    pub(super) fn dot(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let ([a, b, c], Some(&result)) = (op.operands.as_slice(), op.results.first()) else {
            return Err(self.invalid(id, "dot takes a, b and c"));
        };
        let (la, ra) = self.tile(id, *a)?;
        let (lb, rb) = self.tile(id, *b)?;
        let (lc, rc) = self.tile(id, *c)?;
        let (k, n) = match (
            la.shape.as_slice(),
            lb.shape.as_slice(),
            lc.shape.as_slice(),
        ) {
            (&[m, k], &[k2, n], &[m2, n2]) if k == k2 && m == m2 && n == n2 => (k, n),
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
        let rc = self.convert(acc_dtype, &lc, &rc, &layout);
        let (ca, cb) = (self.coords(&la), self.coords(&lb));
        let size = |s: &[usize]| s.iter().product();
        let (alloc_a, reused_a) = self.take_shared(da, size(&la.shape));
        let (alloc_b, reused_b) = self.take_shared(db, size(&lb.shape));
        if self.loop_depth > 0 || reused_a || reused_b {
            self.barrier();
        }
        for (alloc, regs, coords) in [(alloc_a, &ra, &ca), (alloc_b, &rb, &cb)] {
            for ((&v, &i), &owner) in regs.iter().zip(&coords.linear).zip(&coords.owner) {
                self.emit_op(ThreadOpKind::StoreShared { alloc }, vec![i, v, owner], &[]);
            }
        }
        self.barrier();
        let coords = self.coords(&layout);
        let mut regs = Vec::new();
        for (v, &c_reg) in rc.iter().enumerate() {
            let live = coords.live[v];
            let zero = self.i32c(0);
            let (mut row, mut col) = (coords.axes[v][0], coords.axes[v][1]);
            if !self.is_true(live) {
                row = self.select(live, row, zero);
                col = self.select(live, col, zero);
            }
            let row_start = self.linear(&[(row, k)]);
            let mut acc = c_reg;
            for kk in 0..k {
                let kc = self.i32c(kk as i64);
                let ia = if kk == 0 {
                    row_start
                } else {
                    self.binary(BinaryOp::Add, row_start, kc)
                };
                let ib = if kk == 0 {
                    col
                } else {
                    let shift = self.i32c((kk * n) as i64);
                    self.binary(BinaryOp::Add, col, shift)
                };
                let x = self.emit(ThreadOpKind::LoadShared { alloc: alloc_a }, vec![ia], da);
                let y = self.emit(ThreadOpKind::LoadShared { alloc: alloc_b }, vec![ib], db);
                let (x, y) = (self.cast(x, acc_dtype), self.cast(y, acc_dtype));
                acc = if acc_dtype == DType::I32 {
                    let p = self.binary(BinaryOp::Mul, x, y);
                    self.binary(BinaryOp::Add, acc, p)
                } else {
                    self.emit(ThreadOpKind::Fma, vec![x, y, acc], acc_dtype)
                };
            }
            regs.push(acc);
        }
        self.release_shared(alloc_a);
        self.release_shared(alloc_b);
        self.bind(id, Lowered::Tile { layout, regs })
    }
}
