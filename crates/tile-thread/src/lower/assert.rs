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

use super::{LowerError, Lowered, Lowerer};
use crate::program::{CheckKind, ThreadOpKind};
use tile_ir::{BinaryOp, DType, OpId, Scalar, UnaryOp};

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
}
