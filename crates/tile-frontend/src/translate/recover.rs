//! Going on after an error, so that one build reports every independent
//! error of a kernel.
//!
//! Recovery is per statement: when a statement of a block fails, its error
//! is recorded and the block goes on with the next statement. The names the
//! failed statement would have bound (the pattern of a `let`) or assigned
//! (`x = ..`, `x += ..` anywhere in it) are *poisoned*: they hold
//! [`Val::Poisoned`], and reading one fails with [`diag::poisoned`], an
//! error that is never reported. A statement that reads a poisoned name thus
//! fails silently and poisons its own names in turn, so an error is reported
//! once, at its span, and not again at every use of what it would have
//! defined; statements that do not depend on it are lowered and checked as
//! usual.
//!
//! A failed tail expression makes its block fail with the unreported error,
//! so the value of a block, a branch or a helper call is poisoned as a
//! whole. The same syntax may be lowered more than once (a helper called
//! twice, an `if` branch lowered to learn its type and then for real): an
//! error equal to a recorded one (same message, same span) is not recorded
//! again.
//!
//! [`diag::poisoned`]: crate::diag::poisoned

use super::control::Assigned;
use super::{Translator, Val};
use crate::diag::{is_poisoned, key};
use syn::visit::Visit;
use syn::{Pat, Stmt};

impl Translator<'_> {
    /// Records the errors of `e` that are neither poisoned nor already
    /// recorded.
    pub(crate) fn report(&mut self, e: syn::Error) {
        for one in e {
            if is_poisoned(&one) || self.errors.iter().any(|r| key(r) == key(&one)) {
                continue;
            }
            self.errors.push(one);
        }
    }

    /// Records the error `e` of `stmt` and poisons the names it binds or
    /// assigns.
    pub(crate) fn recover(&mut self, stmt: &Stmt, e: syn::Error) {
        self.report(e);
        let mut assigned = Assigned::default();
        assigned.visit_stmt(stmt);
        for name in assigned.0.keys() {
            if self.scopes.lookup(name).is_some() {
                self.scopes.set(name, Val::Poisoned);
            }
        }
        if let Stmt::Local(local) = stmt {
            self.poison(&local.pat);
        }
    }

    /// Defines every name `pat` binds as poisoned.
    fn poison(&mut self, pat: &Pat) {
        match pat {
            Pat::Ident(pi) => {
                let mutable = pi.mutability.is_some();
                self.scopes
                    .define(pi.ident.to_string(), Val::Poisoned, mutable);
            }
            Pat::Tuple(pt) => pt.elems.iter().for_each(|p| self.poison(p)),
            Pat::Paren(p) => self.poison(&p.pat),
            Pat::Type(pt) => self.poison(&pt.pat),
            _ => {}
        }
    }

    /// The recorded errors as one, if there are any.
    pub(crate) fn recorded(&mut self) -> syn::Result<()> {
        let mut errors = std::mem::take(&mut self.errors).into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                first.extend(errors);
                Err(first)
            }
        }
    }
}
