//! Errors of the front end: every one is a [`syn::Error`] spanned at the
//! user's offending syntax, whose message names the rule that was broken and
//! the values on both sides.

use proc_macro2::Span;
use quote::ToTokens;
use std::fmt::Display;
use tile_ir::builder::BuildError;

/// An error spanning all of `node` (first to last token, so the caret covers
/// the whole expression even on stable Rust).
pub(crate) fn err(node: &dyn ToTokens, message: impl Display) -> syn::Error {
    syn::Error::new_spanned(node.to_token_stream(), message)
}

/// An error at a single span.
pub(crate) fn err_at(span: Span, message: impl Display) -> syn::Error {
    syn::Error::new(span, message)
}

/// A builder error (a broken typing rule of the tile IR) at `node`.
pub(crate) fn build_err(node: &dyn ToTokens, error: BuildError) -> syn::Error {
    err(node, build_msg(error))
}

/// The message of a builder error: the op and its broken rule.
pub(crate) fn build_msg(error: BuildError) -> String {
    match error {
        BuildError::Rule { op, message, .. } => format!("`{op}`: {message}"),
        BuildError::Verify(e) => format!("internal error, the kernel failed verification: {e}"),
    }
}

/// The builder error that aborts a region closure after the front end
/// recorded its own, spanned error.
pub(crate) fn abort() -> BuildError {
    BuildError::Rule {
        op: "front end",
        operands: String::new(),
        message: "aborted after an error".into(),
    }
}

/// The message of [`poisoned`].
const POISONED: &str = "a value whose error is already reported";

/// The error of an expression that reads a variable whose own statement
/// failed: its error is already reported, so this one is not (the
/// translator drops it where it recovers, `translate/recover.rs`).
pub(crate) fn poisoned() -> syn::Error {
    syn::Error::new(Span::call_site(), POISONED)
}

/// Whether `e` is [`poisoned`]'s error.
pub(crate) fn is_poisoned(e: &syn::Error) -> bool {
    e.to_string() == POISONED
}

/// What tells two errors apart: the message and where it starts. The same
/// syntax lowered twice (a helper called twice, an `if` branch lowered once
/// to learn its type and once for real) fails with equal keys.
pub(crate) fn key(e: &syn::Error) -> (String, String) {
    (e.to_string(), format!("{:?}", e.span()))
}
