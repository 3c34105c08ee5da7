//! Which value names are visible where.
//!
//! Every name is defined once in the whole kernel. A name defined inside a
//! region (a region argument or the result of an op in it) is visible until
//! the region's closing `}`; using it later is an error that says so.

use super::error::ParseError;
use super::lexer::Token;
use super::parser::Parser;
use crate::function::Value;
use std::collections::HashMap;

/// The names defined so far and which of them are still visible.
#[derive(Debug, Default)]
pub(crate) struct Scopes<'a> {
    /// Every name defined so far (names borrow the source text).
    defs: HashMap<&'a str, Definition>,
    /// For each open region, the names defined in it.
    open: Vec<Vec<&'a str>>,
}

#[derive(Debug)]
struct Definition {
    value: Value,
    line: usize,
    column: usize,
    visible: bool,
}

impl<'a> Scopes<'a> {
    /// Opens a region: names defined from now on go out of scope at the
    /// matching [`Scopes::pop`].
    pub fn push(&mut self) {
        self.open.push(Vec::new());
    }

    /// Closes the innermost region, hiding the names defined in it.
    pub fn pop(&mut self) {
        for name in self.open.pop().unwrap_or_default() {
            if let Some(def) = self.defs.get_mut(name) {
                def.visible = false;
            }
        }
    }

    /// Defines the value name `token` (`%name`) as `value`.
    pub fn define(&mut self, token: &Token<'a>, value: Value) -> Result<(), ParseError> {
        if let Some(first) = self.defs.get(token.text) {
            return Err(Parser::error_at(
                token,
                format!(
                    "redefinition of `{}` (first defined at {}:{})",
                    token.text, first.line, first.column
                ),
            ));
        }
        self.defs.insert(
            token.text,
            Definition {
                value,
                line: token.line,
                column: token.column,
                visible: true,
            },
        );
        if let Some(names) = self.open.last_mut() {
            names.push(token.text);
        }
        Ok(())
    }

    /// The value that the name `token` (`%name`) stands for here.
    pub fn lookup(&self, token: &Token<'_>) -> Result<Value, ParseError> {
        match self.defs.get(token.text) {
            Some(def) if def.visible => Ok(def.value),
            Some(def) => Err(Parser::error_at(
                token,
                format!(
                    "`{}` is not visible here: it is defined at {}:{} inside a region that has ended",
                    token.text, def.line, def.column
                ),
            )),
            None => Err(Parser::error_at(
                token,
                format!("use of undefined value `{}`", token.text),
            )),
        }
    }
}
