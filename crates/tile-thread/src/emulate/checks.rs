//! The ops that report to the host: a failed check stops the launch with
//! its fault, and a print appends a record per thread whose element it
//! holds.

use super::{address, Emulator, LockstepError, LockstepFault, Operands};
use crate::program::{CheckKind, OpId};
use tile_abi::device_print::PrintRecord;
use tile_ir::Scalar;

impl Emulator<'_> {
    /// `check.<kind>` of `op`: fails at the first thread whose condition
    /// `ok` is false, with the fault its kind names, its indices or values
    /// taken from its `values`.
    pub(super) fn check(
        &self,
        id: OpId,
        (kind, op): (CheckKind, &str),
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let ok = self.role(id, x, "ok")?;
        let values = x.list("values");
        let Some(t) = ok.iter().position(|v| *v != Scalar::Bool(true)) else {
            return Ok(());
        };
        let (kernel, op) = (self.program.name.clone(), op.to_string());
        let fault = match kind {
            CheckKind::Bounds => LockstepFault::BoundsCheck {
                kernel,
                op,
                index: values.iter().map(|i| address(i[t])).collect(),
            },
            CheckKind::Index => LockstepFault::IndexCheck {
                kernel,
                op,
                index: values.iter().map(|i| address(i[t])).collect(),
            },
            CheckKind::Assert => LockstepFault::Assert {
                kernel,
                op,
                id: values.first().map_or(-1, |s| address(s[t])),
                values: values.iter().skip(1).map(|v| v[t]).collect(),
            },
            CheckKind::Window => LockstepFault::WindowCheck {
                kernel,
                op,
                values: values.iter().map(|i| address(i[t])).collect(),
            },
            CheckKind::TensorIndex => LockstepFault::TensorIndexCheck {
                kernel,
                op,
                index: values.first().map_or(-1, |s| address(s[t])),
                count: values.get(1).map_or(0, |s| address(s[t])),
            },
            CheckKind::Step => LockstepFault::NonPositiveStep {
                kernel,
                op,
                step: values.first().map_or(0, |s| address(s[t])),
            },
        };
        Err(self.error(Some(id), Some(t as u32), fault))
    }

    /// `print` number `print`: a record of its values for every thread
    /// where `on` holds, at its `element`.
    pub(super) fn print(
        &mut self,
        id: OpId,
        print: u32,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let [on, element] = self.roles(id, x, ["on", "element"])?;
        for t in (0..on.len()).filter(|&t| on[t] == Scalar::Bool(true)) {
            let mut values = [0i64; tile_abi::device_print::MAX_VALUES];
            for (slot, v) in values.iter_mut().zip(x.list("values")) {
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
