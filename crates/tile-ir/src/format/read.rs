//! Reading an op's line by its format: [`read_line`], over any parser that
//! is a [`LineReader`] (the tile IR's, the thread program's).

use super::{pieces, Piece};
use crate::text::{lex, ParseError, Token, TokenKind};

/// What reading an op's line by its format asks of a parser (the tile IR's
/// and the thread program's): tokens, operands by role, and errors.
pub trait LineReader {
    /// An operand as the parser resolves it (a value, a register).
    type Operand;

    /// The next token, not consumed.
    fn next_token(&self) -> &Token<'_>;

    /// Whether the next token is `token` (the same kind and text).
    fn at(&self, token: &Token<'_>) -> bool {
        let next = self.next_token();
        next.kind == token.kind && next.text == token.text
    }

    /// Consumes the next token.
    fn bump(&mut self);

    /// An error at the next token: "expected `what`, found …".
    fn expected(&self, what: &str) -> ParseError;

    /// One operand of role `role`.
    fn operand(&mut self, role: &str) -> Result<Self::Operand, ParseError>;

    /// A comma-separated list of operands of role `role`, empty where the
    /// next token is not an operand.
    fn operands(&mut self, role: &str) -> Result<Vec<Self::Operand>, ParseError>;

    /// `[a, b, ...]`: a bracketed list of operands of role `role`.
    fn bracketed(&mut self, role: &str) -> Result<Vec<Self::Operand>, ParseError>;
}

/// An attribute's reader: reads attribute `name` where the parser stands,
/// pushing the operands of a nested op's line.
pub type AttributeReader<'f, R> =
    dyn FnMut(&mut R, &str, &mut Vec<<R as LineReader>::Operand>) -> Result<(), ParseError> + 'f;

/// Reads an op's line by `format`: its literal text as written, each
/// attribute by `attribute`, each operand (or list of them) pushed to
/// `operands` in format order; a list between brackets (`%view[%index*]`)
/// reads as a bracketed list of its role, and an optional group is read
/// where its first word follows.
pub fn read_line<R: LineReader>(
    r: &mut R,
    format: &'static str,
    operands: &mut Vec<R::Operand>,
    attribute: &mut AttributeReader<'_, R>,
) -> Result<(), ParseError> {
    let pieces = pieces(format);
    let mut i = 0;
    // Literal text a bracketed list already read.
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
                        read_literal(r, before)?;
                        operands.extend(r.bracketed(name)?);
                        (i, skip) = (i + 2, 1);
                        continue;
                    }
                    _ => read_literal(r, text)?,
                }
            }
            Piece::Attribute(name) => attribute(r, name, operands)?,
            Piece::Operand {
                name, list: None, ..
            } => operands.push(r.operand(name)?),
            Piece::Operand { name, .. } => operands.extend(r.operands(name)?),
            Piece::GroupStart => {
                let first = match pieces.get(i + 1) {
                    Some(Piece::Literal(text)) => lex(text).into_iter().next(),
                    _ => None,
                };
                if !first.is_some_and(|t| r.at(&t)) {
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

/// The tokens of `text`, as written.
fn read_literal<R: LineReader>(r: &mut R, text: &str) -> Result<(), ParseError> {
    for token in lex(text) {
        if matches!(token.kind, TokenKind::Eof | TokenKind::Newline) {
            break;
        }
        if !r.at(&token) {
            return Err(r.expected(&format!("`{}`", token.text)));
        }
        r.bump();
    }
    Ok(())
}
