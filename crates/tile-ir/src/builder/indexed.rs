//! The builder's accesses at index tiles: `gather`, `scatter` and the
//! atomics.

use super::{prepend, BuildError, Builder};
use crate::function::Value;
use crate::ops::OpKind;

impl Builder {
    /// The elements of `tensor` at `(indices[0][j], ...)` where `mask[j]`
    /// holds, `other[j]` elsewhere ([`OpKind::Gather`]).
    pub fn gather(
        &mut self,
        tensor: Value,
        indices: &[Value],
        mask: Value,
        other: Value,
    ) -> Result<Value, BuildError> {
        let mut operands = prepend(&[tensor], indices);
        operands.extend([mask, other]);
        self.op1(OpKind::Gather, &operands)
    }

    /// Writes `value[j]` to the elements of `tensor` at `(indices[0][j],
    /// ...)` where `mask[j]` holds ([`OpKind::Scatter`]).
    pub fn scatter(
        &mut self,
        tensor: Value,
        indices: &[Value],
        value: Value,
        mask: Value,
    ) -> Result<(), BuildError> {
        let mut operands = prepend(&[tensor], indices);
        operands.extend([value, mask]);
        self.op(OpKind::Scatter, &operands).map(drop)
    }

    /// An atomic update of `tensor` at the elements `(indices[0][j], ...)`
    /// where `mask[j]` holds, returning the old values ([`OpKind::Atomic`]);
    /// `cmp` is the compared tile of `cas` (`None` for the other updates).
    pub fn atomic(&mut self, kind: OpKind, access: AtomicAccess<'_>) -> Result<Value, BuildError> {
        let mut operands = prepend(&[access.tensor], access.indices);
        operands.extend(access.cmp);
        operands.extend([access.value, access.mask]);
        self.op1(kind, &operands)
    }
}

/// The operands of [`Builder::atomic`].
#[derive(Clone, Copy, Debug)]
pub struct AtomicAccess<'a> {
    /// The tensor updated.
    pub tensor: Value,
    /// One integer index tile per tensor axis.
    pub indices: &'a [Value],
    /// The compared tile of `cas`.
    pub cmp: Option<Value>,
    /// The operand of the update.
    pub value: Value,
    /// Which elements take part.
    pub mask: Value,
}
