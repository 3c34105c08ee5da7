//! Variables: nested scopes inside frames. A frame is the body of the kernel
//! or of an inlined helper; a helper sees its own variables and the kernel's
//! globals (parameters and const parameters), never its caller's locals.

use super::Val;
use std::collections::HashMap;

/// A variable's current value and whether it may be assigned.
#[derive(Clone, Debug)]
pub(crate) struct Binding {
    /// The value it holds now.
    pub(crate) val: Val,
    /// Declared with `let mut`.
    pub(crate) mutable: bool,
}

/// The scopes of the current program point.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    globals: HashMap<String, Binding>,
    scopes: Vec<HashMap<String, Binding>>,
    /// The index in `scopes` where each open frame starts.
    frames: Vec<usize>,
}

impl Scopes {
    /// Defines a global (a parameter or a const parameter).
    pub(crate) fn define_global(&mut self, name: String, val: Val) {
        self.globals.insert(
            name,
            Binding {
                val,
                mutable: false,
            },
        );
    }

    /// Opens a scope.
    pub(crate) fn push(&mut self) {
        self.scopes.push(HashMap::new());
    }

    /// Closes the innermost scope.
    pub(crate) fn pop(&mut self) {
        self.scopes.pop();
    }

    /// Opens a frame (a helper's body) with one scope.
    pub(crate) fn push_frame(&mut self) {
        self.frames.push(self.scopes.len());
        self.push();
    }

    /// Closes the innermost frame and its scopes.
    pub(crate) fn pop_frame(&mut self) {
        let start = self.frames.pop().unwrap_or(0);
        self.scopes.truncate(start);
    }

    fn frame_start(&self) -> usize {
        self.frames.last().copied().unwrap_or(0)
    }

    /// Defines a variable in the innermost scope (shadowing any other).
    pub(crate) fn define(&mut self, name: String, val: Val, mutable: bool) {
        if self.scopes.is_empty() {
            self.push();
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, Binding { val, mutable });
        }
    }

    /// The binding a name refers to here.
    pub(crate) fn lookup(&self, name: &str) -> Option<&Binding> {
        let start = self.frame_start();
        self.scopes[start..]
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .or_else(|| self.globals.get(name))
    }

    /// Replaces the value of the variable `name` refers to here.
    pub(crate) fn set(&mut self, name: &str, val: Val) {
        let start = self.frame_start();
        if let Some(b) = self.scopes[start..]
            .iter_mut()
            .rev()
            .find_map(|s| s.get_mut(name))
        {
            b.val = val;
        }
    }
}
