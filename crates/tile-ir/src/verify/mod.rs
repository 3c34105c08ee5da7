//! The verifier: structure first, then each op's typing rule.
//!
//! `handles` checks that every later stage may index without checking:
//! handles point into the arenas and every op sits in exactly one region.
//! `structure` then checks that definitions record where they are, values are used only where their
//! definition dominates, and regions have the shape their op needs.
//! `typing` then checks every op against [`crate::rules`] and the region
//! signatures of `for` and `if`. Every error names the op as the printed IR
//! shows it, the rule, and the offending values.

mod handles;
mod structure;
mod typing;

use crate::function::{Function, OpId};
use crate::names::ValueNames;

/// A kernel that breaks a rule of the IR.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("verifier: in kernel `{kernel}`, {location}: {message}")]
pub struct VerifyError {
    /// The kernel's name.
    pub kernel: String,
    /// The op (as `ValueNames::describe_op` shows it) or other place at fault.
    pub location: String,
    /// The broken rule with the offending values.
    pub message: String,
}

/// Checks `func`: structure first, then types.
pub fn verify(func: &Function) -> Result<(), VerifyError> {
    handles::check(func)?;
    let names = ValueNames::new(func);
    structure::check(func, &names)?;
    typing::check(func, &names)
}

/// Builds errors that name the kernel and the op.
struct Reporter<'f> {
    func: &'f Function,
    names: Option<&'f ValueNames>,
}

impl Reporter<'_> {
    fn at(&self, location: impl Into<String>, message: impl Into<String>) -> VerifyError {
        VerifyError {
            kernel: self.func.name.clone(),
            location: location.into(),
            message: message.into(),
        }
    }

    fn op(&self, op: OpId, message: impl Into<String>) -> VerifyError {
        let location = match self.names {
            Some(names) => format!("op `{}`", names.describe_op(self.func, op)),
            None => format!("op `{}` (#{})", self.func.op(op).kind.name(), op.index()),
        };
        self.at(location, message)
    }
}
