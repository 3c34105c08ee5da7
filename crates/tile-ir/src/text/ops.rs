//! Each op's line, read and written by its table's format
//! (`ops/table.rs`, [`crate::format`]): the middle of the line, between
//! the result names and the `:` before the result types.
//!
//! Lists of operands take any number of them here; arity is the
//! verifier's business, so ill-typed programs still parse and print.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::parser::{article, Parser};
use super::syntax::{Operands, Pending};
use crate::format::{Count, Layout, LineReader};
use crate::function::Value;
use crate::ops::table::Table;

impl Parser<'_, '_> {
    /// An op's line by the first row of table `K` whose format reads it
    /// (rows starting with a word other than the next token's are
    /// skipped), pushing its operands; otherwise the error of the row that
    /// read furthest, with the cursor there, or "unknown op" at the name.
    pub(crate) fn parse_line<K: Table>(
        &mut self,
        operands: &mut Vec<Value>,
    ) -> Result<Pending<K>, ParseError> {
        let name = self.peek().clone();
        let (start, pushed) = (self.position(), operands.len());
        let mut furthest: Option<(usize, ParseError)> = None;
        for row in K::ROWS {
            let lead = row
                .format
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default();
            if !lead.is_empty() && lead != name.text {
                continue;
            }
            self.rewind(start);
            operands.truncate(pushed);
            match K::parse_variant(row.variant, self, operands) {
                Ok(pending) => return Ok(pending),
                Err(error) => {
                    if furthest
                        .as_ref()
                        .is_none_or(|(at, _)| self.position() > *at)
                    {
                        furthest = Some((self.position(), error));
                    }
                }
            }
        }
        operands.truncate(pushed);
        match furthest {
            Some((at, error)) if at > start => {
                self.rewind(at);
                Err(error)
            }
            _ => {
                self.rewind(start);
                Err(Self::error_at(&name, format!("unknown op `{}`", name.text)))
            }
        }
    }
}

/// The tile IR's parser reads an op's line by its format
/// ([`crate::format::read_line`]): operands are values in scope.
impl LineReader for Parser<'_, '_> {
    type Operand = Value;

    fn next_token(&self) -> &Token<'_> {
        self.peek()
    }

    fn bump(&mut self) {
        Parser::bump(self);
    }

    fn expected(&self, what: &str) -> ParseError {
        Parser::expected(self, what)
    }

    fn operand(&mut self, role: &str) -> Result<Value, ParseError> {
        self.match_operand(&article(role))
    }

    fn operands(&mut self, role: &str) -> Result<Vec<Value>, ParseError> {
        let mut values = Vec::new();
        if self.peek_is(&TokenKind::Value) {
            values.push(self.operand(role)?);
            while self.eat(&TokenKind::Comma) {
                values.push(self.operand(role)?);
            }
        }
        Ok(values)
    }

    fn bracketed(&mut self, role: &str) -> Result<Vec<Value>, ParseError> {
        let expected = article(role);
        self.match_bracket_list(role, |p| p.match_operand(&expected))
    }
}

/// The line of an op of kind `kind` with these operands, by its format; a
/// malformed op (operands that fit no layout of its format) still prints,
/// with `%?` for each missing operand.
pub(crate) fn print_line<K: Table>(kind: &K, operands: &Operands<'_>) -> String {
    let format = kind.format();
    let count = operands.names.len();
    let layout = Layout::of(format, count, &|c, placed| match c {
        Count::Attribute(name) => kind.attribute_count(name),
        Count::Rank(role) => {
            let slot = placed.iter().find(|s| s.name == role)?;
            operands.ranks.get(slot.start).copied().flatten()
        }
        Count::Rest | Count::Fixed(_) => None,
    })
    .unwrap_or_else(|| Layout::partial(format, count));
    layout.render(
        format,
        &mut |name, out| kind.write_attribute(name, operands, out),
        &mut |slot, out| {
            let names: Vec<&str> = (slot.start..slot.start + slot.len)
                .map(|i| operands.names.get(i).map_or("%?", String::as_str))
                .collect();
            out.push_str(&names.join(", "));
        },
    )
}
