//! The error of reading the text form: a message and where it applies.

/// A syntax or scoping error in the text form, at a 1-based line and column
/// (columns count characters). Displays as `line:column: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// The line of the offending token, from 1.
    pub line: usize,
    /// The column of the offending token's first character, from 1.
    pub column: usize,
    /// What was expected and what was found.
    pub message: String,
}
