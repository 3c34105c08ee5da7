//! The ops that report to the host: a failed check stops the launch with
//! its fault, and a print appends a record per thread whose element it
//! holds.

use super::{address, Emulator, LockstepError, LockstepFault};
use crate::program::{CheckKind, OpId};
use tile_abi::device_print::PrintRecord;
use tile_ir::Scalar;

impl Emulator<'_> {
    /// `check.<kind>` of `op`: fails at the first thread whose condition
    /// (operand 0) is false, with the fault its kind names, its indices or
    /// values taken from the other operands `x`.
    pub(super) fn check(
        &self,
        id: OpId,
        (kind, op): (CheckKind, &str),
        x: &[Vec<Scalar>],
    ) -> Result<(), LockstepError> {
        let Some(ok) = x.first() else {
            return Err(self.error(
                Some(id),
                None,
                LockstepFault::Malformed("a check without its condition".into()),
            ));
        };
        let Some(t) = ok.iter().position(|v| *v != Scalar::Bool(true)) else {
            return Ok(());
        };
        let (kernel, op) = (self.program.name.clone(), op.to_string());
        let fault = match kind {
            CheckKind::Bounds => LockstepFault::BoundsCheck {
                kernel,
                op,
                index: x[1..].iter().map(|i| address(i[t])).collect(),
            },
            CheckKind::Index => LockstepFault::IndexCheck {
                kernel,
                op,
                index: x[1..].iter().map(|i| address(i[t])).collect(),
            },
            CheckKind::Assert => LockstepFault::Assert {
                kernel,
                op,
                id: x.get(1).map_or(-1, |s| address(s[t])),
                values: x.iter().skip(2).map(|v| v[t]).collect(),
            },
            CheckKind::Window => LockstepFault::WindowCheck {
                kernel,
                op,
                values: x[1..].iter().map(|i| address(i[t])).collect(),
            },
            CheckKind::Step => LockstepFault::NonPositiveStep {
                kernel,
                op,
                step: x.get(1).map_or(0, |s| address(s[t])),
            },
        };
        Err(self.error(Some(id), Some(t as u32), fault))
    }

    /// `print` number `print`: a record of the values `x[2..]` for every
    /// thread where `x[0]` holds, at its element `x[1]`.
    pub(super) fn print(
        &mut self,
        id: OpId,
        print: u32,
        x: &[Vec<Scalar>],
    ) -> Result<(), LockstepError> {
        let (Some(on), Some(element)) = (x.first(), x.get(1)) else {
            let fault = LockstepFault::Malformed("a print without its mask and element".into());
            return Err(self.error(Some(id), None, fault));
        };
        for t in (0..on.len()).filter(|&t| on[t] == Scalar::Bool(true)) {
            let mut values = [0i64; tile_abi::device_print::MAX_VALUES];
            for (slot, v) in values.iter_mut().zip(&x[2..]) {
                *slot = v[t].to_bits() as i64;
            }
            self.prints.push(PrintRecord {
                id: print,
                program: self.block,
                element: address(element[t]) as u32,
                values,
            });
        }
        Ok(())
    }
}
