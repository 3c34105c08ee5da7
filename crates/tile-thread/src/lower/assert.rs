//! `assert`: every thread checks the elements of the condition it holds.
//!
//! ```text
//! ok = ∧_v (¬live_v ∨ cond_v)           (a scalar condition: cond itself)
//! check.assert ok [id, a, …]            (the assertion's number, its values)
//! ```
//!
//! The first thread whose check fails records the assertion in the status
//! record; the others' failures are the same assertion with the same
//! (block-uniform) values.
//!
//! `multiple_of` is the assertion that its scalar is a multiple of the
//! divisor, and is that scalar where the check holds:
//!
//! ```text
//! ok = (x rem divisor) == 0
//! check.assert ok [id, x]
//! r  = ok ? x : 0
//! ```
//!
//! A failed check records itself and lets the program run on (its results
//! are discarded with the launch), so the result is 0 there, which every
//! fact the compiler drew from the promise also holds for: a vector access
//! at an offset made from it stays aligned.

use super::{LowerError, Lowered, Lowerer};
use crate::program::{CheckKind, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, OpId, Scalar, UnaryOp};

impl Lowerer<'_> {
    /// Lowers `assert id` (op `op`).
    pub(super) fn assert(&mut self, op: OpId, id: u32) -> Result<(), LowerError> {
        let func = self.func;
        let (&cond, values) = func
            .op(op)
            .operands
            .split_first()
            .ok_or_else(|| self.invalid(op, "no condition"))?;
        let ok = match self.get(op, cond)? {
            Lowered::Scalar(r) => r,
            Lowered::Tile { layout, regs } => {
                let live = self.coords(&layout).live;
                let mut ok = self.constant(Scalar::Bool(true));
                for (&c, &l) in regs.iter().zip(&live) {
                    let dead = self.emit(ThreadOpKind::Unary(UnaryOp::Not), vec![l], DType::Bool);
                    let holds = self.binary(BinaryOp::Or, dead, c);
                    ok = self.and(ok, holds);
                }
                ok
            }
            _ => return Err(self.invalid(op, "the condition is not a scalar or tile")),
        };
        let mut operands = vec![ok, self.constant(Scalar::I64(i64::from(id)))];
        for &v in values {
            operands.push(self.scalar(op, v)?);
        }
        let kind = ThreadOpKind::Check {
            kind: CheckKind::Assert,
            op: self.check_site(op),
        };
        self.emit_op(kind, operands, &[]);
        Ok(())
    }

    /// Lowers `multiple_of id divisor %x` (op `op`): the check, then `x`
    /// where it holds and 0 where it fails.
    pub(super) fn multiple_of(
        &mut self,
        op: OpId,
        id: u32,
        divisor: u32,
    ) -> Result<(), LowerError> {
        let &[x] = self.func.op(op).operands.as_slice() else {
            return Err(self.invalid(op, "multiple_of takes one operand"));
        };
        let x = self.scalar(op, x)?;
        let dtype = self.program.dtype(x);
        let (Some(d), Some(zero)) = (
            Scalar::wrapping_from_i128(dtype, divisor.into()),
            Scalar::wrapping_from_i128(dtype, 0),
        ) else {
            return Err(self.invalid(op, "the operand is not an integer"));
        };
        let (d, zero) = (self.constant(d), self.constant(zero));
        let rest = self.binary(BinaryOp::Rem, x, d);
        let ok = self.emit(
            ThreadOpKind::Cmp(CmpPred::Eq),
            vec![rest, zero],
            DType::Bool,
        );
        let number = self.constant(Scalar::I64(i64::from(id)));
        let kind = ThreadOpKind::Check {
            kind: CheckKind::Assert,
            op: self.check_site(op),
        };
        self.emit_op(kind, vec![ok, number, x], &[]);
        let kept = self.select(ok, x, zero);
        self.bind(op, Lowered::Scalar(kept))
    }
}
