//! The emulator's registers: a value per thread for each register, defined
//! once with its declared dtype, and the reads ops make of them.

use super::{Emulator, LockstepError, LockstepFault, Operands};
use crate::program::{Op, OpId, Reg};
use tile_ir::Scalar;

impl Emulator<'_> {
    /// The value of `reg` per thread.
    pub(super) fn value(&self, op: OpId, reg: Reg) -> Result<&Vec<Scalar>, LockstepError> {
        self.regs
            .get(reg.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                self.error(
                    Some(op),
                    None,
                    LockstepFault::Malformed(format!(
                        "%{} is used before it is defined",
                        reg.index()
                    )),
                )
            })
    }

    /// Defines `reg` with a value per thread, of its declared dtype.
    pub(super) fn define(
        &mut self,
        op: OpId,
        reg: Reg,
        values: Vec<Scalar>,
    ) -> Result<(), LockstepError> {
        let declared = self.program.dtype(reg);
        if let Some(bad) = values.iter().find(|v| v.dtype() != declared) {
            return Err(self.error(
                Some(op),
                None,
                LockstepFault::Malformed(format!(
                    "%{} is declared {declared} but computed as {}",
                    reg.index(),
                    bad.dtype()
                )),
            ));
        }
        match self.regs.get_mut(reg.index()) {
            Some(slot) => {
                *slot = Some(values);
                Ok(())
            }
            None => Err(self.error(
                Some(op),
                None,
                LockstepFault::Malformed("no such register".into()),
            )),
        }
    }

    /// The operands of `op`, per operand a value per thread.
    pub(super) fn operands(&self, id: OpId, op: &Op) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        op.operands
            .iter()
            .map(|&r| self.value(id, r).cloned())
            .collect()
    }

    /// One value per thread, from `f(thread)`.
    pub(super) fn per_thread(
        &self,
        id: OpId,
        mut f: impl FnMut(u32) -> Result<Scalar, LockstepFault>,
    ) -> Result<Vec<Scalar>, LockstepError> {
        (0..self.threads)
            .map(|t| f(t).map_err(|e| self.error(Some(id), Some(t), e)))
            .collect()
    }

    /// The per-thread values of op `id`'s operand of role `name`.
    pub(super) fn role<'x>(
        &self,
        id: OpId,
        x: &Operands<'x>,
        name: &str,
    ) -> Result<&'x [Scalar], LockstepError> {
        x.get(name).map(Vec::as_slice).ok_or_else(|| {
            let what = format!("no operand `{name}`");
            self.error(Some(id), None, LockstepFault::Malformed(what))
        })
    }

    /// The per-thread values of op `id`'s operands of roles `names`.
    pub(super) fn roles<'x, const N: usize>(
        &self,
        id: OpId,
        x: &Operands<'x>,
        names: [&str; N],
    ) -> Result<[&'x [Scalar]; N], LockstepError> {
        let mut values = [&[][..]; N];
        for (slot, name) in values.iter_mut().zip(names) {
            *slot = self.role(id, x, name)?;
        }
        Ok(values)
    }

    /// The one value of `values` when every thread holds it (`what` names it
    /// in the error otherwise).
    pub(super) fn uniform(
        &self,
        id: OpId,
        what: &'static str,
        values: &[Scalar],
    ) -> Result<Scalar, LockstepError> {
        let first = values[0];
        match values.iter().position(|v| v.to_bits() != first.to_bits()) {
            None => Ok(first),
            Some(t) => Err(self.error(
                Some(id),
                Some(t as u32),
                LockstepFault::NonUniform {
                    what,
                    first: first.to_string(),
                    thread: t as u32,
                    other: values[t].to_string(),
                },
            )),
        }
    }

    /// The global of tensor `param`: its own, or for a tensor of an array
    /// the one `get_tensor` bound it to.
    pub(super) fn global(&self, id: OpId, param: usize) -> Result<usize, LockstepError> {
        if let Some(Some(g)) = self.bound.get(param) {
            return Ok(*g);
        }
        match self.globals.get(param) {
            Some(Some(_)) => Ok(param),
            _ => Err(self.error(
                Some(id),
                None,
                LockstepFault::Malformed(format!("parameter {param} is not a tensor")),
            )),
        }
    }
}

/// An index or address operand as an `i64` (non-integers become -1, which no
/// memory holds).
pub(super) fn address(v: Scalar) -> i64 {
    v.to_i128()
        .and_then(|i| i64::try_from(i).ok())
        .unwrap_or(-1)
}
