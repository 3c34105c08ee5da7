//! `assert`: a false condition records `FaultCode::Assert` with the
//! assertion's number and the bits of the values its message formats,
//! and returns (`check.rs`); a tile condition is checked element by
//! element in row-major order, so the first false element fails.
//! `multiple_of` is the assertion that its scalar is a multiple of its
//! divisor (a signed or unsigned remainder of 0, by its dtype), and is that
//! scalar.

use super::check::Code;
use super::error::HostError;
use super::kernel::{HostKernel, HostValue};
use inkwell::IntPredicate;
use tile_ir::OpId;

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `assert id` (op `op`).
    pub(super) fn assert(&mut self, op: OpId, id: u32) -> Result<(), HostError> {
        let operands = self.operands(op);
        let (&cond, values) = operands
            .split_first()
            .ok_or_else(|| HostError::internal("an assert without a condition"))?;
        let mut report = vec![self.i64(i64::from(id))];
        for &v in values {
            let x = self.scalar(v)?;
            report.push(self.e.value_bits(x)?);
        }
        match self.value(cond)? {
            HostValue::Scalar(ok) => self.check(ok.into_int_value(), op, Code::Assert, &report),
            HostValue::Tile(tile) => {
                let n = self.i64(tile.numel() as i64);
                self.counted(n, &mut |l, j| {
                    let ok = l.get(&tile, j)?.into_int_value();
                    l.check(ok, op, Code::Assert, &report)
                })
            }
            _ => Err(HostError::internal("an assert on a non-bool condition")),
        }
    }

    /// Emits `multiple_of id divisor %x` (op `op`): the check, then `x`.
    pub(super) fn multiple_of(&mut self, op: OpId, id: u32, divisor: u32) -> Result<(), HostError> {
        let &[x] = self.operands(op) else {
            return Err(HostError::internal("a multiple_of without one operand"));
        };
        let signed = self.func.ty(x).dtype().is_signed_int();
        let value = self.scalar(x)?;
        let int = value.into_int_value();
        let d = int.get_type().const_int(u64::from(divisor), false);
        let b = &self.e.b;
        let rest = if signed {
            b.build_int_signed_rem(int, d, "rest")?
        } else {
            b.build_int_unsigned_rem(int, d, "rest")?
        };
        let zero = int.get_type().const_zero();
        let ok = b.build_int_compare(IntPredicate::EQ, rest, zero, "multiple")?;
        let report = [self.i64(i64::from(id)), self.e.value_bits(value)?];
        self.check(ok, op, Code::Assert, &report)?;
        self.define_result(op, HostValue::Scalar(value))
    }
}
