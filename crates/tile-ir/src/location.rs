//! Where in the kernel's source an op comes from.
//!
//! The front end records, for each op it builds, the file, line and column
//! of the Rust expression that made it and a short snippet of that
//! expression; the text form keeps them as a trailing `loc(..)` on the op's
//! line, passes keep them on the ops they keep or rewrite, and every
//! run-time error of an op leads with them ([`crate::ValueNames::describe_site`]).

use std::fmt;

/// A source location: `file:line:column`, and the expression there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file as the compiler names it (`src/lib.rs`, `tests/copy.rs`).
    pub file: String,
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, counted in characters.
    pub column: u32,
    /// A short rendering of the expression (`x.load(..)`), if known.
    pub snippet: Option<String>,
}

/// `file:line:column`
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

impl Location {
    /// The text form's attribute: `loc("file":line:column)`, or
    /// `loc("file":line:column, "snippet")`, strings with Rust's escapes.
    pub fn attribute(&self) -> String {
        match &self.snippet {
            Some(snippet) => format!(
                "loc({:?}:{}:{}, {snippet:?})",
                self.file, self.line, self.column
            ),
            None => format!("loc({:?}:{}:{})", self.file, self.line, self.column),
        }
    }
}
