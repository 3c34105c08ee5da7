//! `assert`: a false condition records `FaultCode::Assert` with the
//! assertion's number and the bits of the values its message formats,
//! and returns (`check.rs`); a tile condition is checked element by
//! element in row-major order, so the first false element fails.

use super::check::Code;
use super::error::HostError;
use super::kernel::{HostKernel, HostValue};
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
}
