//! Each op's line, read and written by its table's format
//! (`ops/table.rs`, [`crate::format`]): the middle of the line, between
//! the result names and the `:` before the result types.
//!
//! Lists of operands take any number of them here; arity is the
//! verifier's business, so ill-typed programs still parse and print.

use super::error::ParseError;
use super::lexer::{lex, Token, TokenKind};
use super::parser::{article, Parser};
use super::syntax::{Operands, Pending};
use crate::format::{pieces, Count, Layout, Piece};
use crate::function::Value;
use crate::ops::table::Table;

/// Reads one attribute, by field name, where the parser stands (pushing the
/// operands of a nested op's line).
pub(crate) type AttributeReader<'f, 't, 'a> =
    dyn FnMut(&mut Parser<'t, 'a>, &str, &mut Vec<Value>) -> Result<(), ParseError> + 'f;

impl<'t, 'a> Parser<'t, 'a> {
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

    /// Reads an op's line by `format`: its literal text as written, each
    /// attribute by `attribute`, each operand (or list of them) as a value
    /// in scope, pushed to `operands` in format order. A list between
    /// brackets (`%view[%index*]`) reads as a bracketed list of its role.
    pub(crate) fn fields(
        &mut self,
        format: &'static str,
        operands: &mut Vec<Value>,
        attribute: &mut AttributeReader<'_, 't, 'a>,
    ) -> Result<(), ParseError> {
        let pieces = pieces(format);
        let mut i = 0;
        // Literal text already read by a bracketed list.
        let mut skip = 0;
        while let Some(&piece) = pieces.get(i) {
            match piece {
                Piece::Literal(text) => {
                    let text = &text[skip..];
                    skip = 0;
                    match (text.strip_suffix('['), pieces.get(i + 1), pieces.get(i + 2)) {
                        (
                            Some(before),
                            Some(&Piece::Operand {
                                name,
                                list: Some(_),
                                ..
                            }),
                            Some(Piece::Literal(after)),
                        ) if after.starts_with(']') => {
                            self.match_literal(before)?;
                            let expected = article(name);
                            operands.extend(
                                self.match_bracket_list(name, |p| p.match_operand(&expected))?,
                            );
                            (i, skip) = (i + 2, 1);
                            continue;
                        }
                        _ => self.match_literal(text)?,
                    }
                }
                Piece::Attribute(name) => attribute(self, name, operands)?,
                Piece::Operand {
                    name, list: None, ..
                } => operands.push(self.match_operand(&article(name))?),
                Piece::Operand { name, .. } => {
                    if self.peek_is(&TokenKind::Value) {
                        operands.push(self.match_operand(&article(name))?);
                        while self.eat(&TokenKind::Comma) {
                            operands.push(self.match_operand(&article(name))?);
                        }
                    }
                }
                Piece::GroupStart => {
                    // A group is written where its first word follows.
                    let first = match pieces.get(i + 1) {
                        Some(Piece::Literal(text)) => lex(text).into_iter().next(),
                        _ => None,
                    };
                    if !first.is_some_and(|t| self.at(&t)) {
                        while pieces.get(i).is_some_and(|p| *p != Piece::GroupEnd) {
                            i += 1;
                        }
                    }
                }
                Piece::GroupEnd => {}
            }
            i += 1;
        }
        Ok(())
    }

    /// Whether the next token is `token` (same kind and text).
    fn at(&self, token: &Token<'_>) -> bool {
        let next = self.peek();
        next.kind == token.kind && next.text == token.text
    }

    /// The tokens of `text`, as written.
    fn match_literal(&mut self, text: &str) -> Result<(), ParseError> {
        for token in lex(text) {
            if matches!(token.kind, TokenKind::Eof | TokenKind::Newline) {
                break;
            }
            if !self.at(&token) {
                return Err(self.expected(&format!("`{}`", token.text)));
            }
            self.bump();
        }
        Ok(())
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
