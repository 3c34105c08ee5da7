//! The parser's cursor over tokens, its `match_*` helpers (each says what it
//! expected), and the grammar of a kernel, its regions and an op's line.
//!
//! The syntax of each op's middle part is in [`super::ops`], `for` and `if`
//! are in [`super::control`], types in [`super::types`] and constants in
//! [`super::literal`].

use super::error::ParseError;
use super::lexer::{lex, Token, TokenKind};
use super::scope::Scopes;
use super::syntax::ResultTypes;
use crate::function::{Function, OpId, Value};
use crate::location::Location;
use crate::ops::OpKind;
use crate::types::Type;

/// How deeply regions may nest before the parser gives up (it recurses once
/// per level).
const MAX_NESTING: usize = 64;

/// Parses one kernel in the text form.
///
/// Ops are built with the result types written in the text; nothing is
/// type-checked beyond what building the structure needs (run the verifier
/// for that). The parser checks that every used name is defined earlier in
/// the same or an enclosing region, that no name is defined twice, that an
/// op has as many result types as result names, and that attributes are well
/// formed (constants fit their dtype).
pub fn parse_function(src: &str) -> Result<Function, ParseError> {
    let mut tokens = lex(src);
    tokens.retain(|t| t.kind != TokenKind::Comment);
    let mut parser = Parser::new(&tokens);
    parser.parse_kernel()?;
    Ok(parser.func)
}

/// The parser's state: the tokens, the cursor, the function being built and
/// the names in scope.
pub(crate) struct Parser<'t, 'a> {
    tokens: &'t [Token<'a>],
    pos: usize,
    /// Returned by [`Parser::peek`] past the last token (never reached in
    /// practice: the last token is an end or an error, and is never consumed).
    end: Token<'a>,
    /// The function under construction.
    pub func: Function,
    /// The names visible at the cursor.
    pub scopes: Scopes<'a>,
    depth: usize,
}

impl<'t, 'a> Parser<'t, 'a> {
    fn new(tokens: &'t [Token<'a>]) -> Self {
        let end = tokens.last().cloned().unwrap_or(Token {
            kind: TokenKind::Eof,
            text: "",
            line: 1,
            column: 1,
        });
        Parser {
            tokens,
            pos: 0,
            end,
            func: Function::default(),
            scopes: Scopes::default(),
            depth: 0,
        }
    }

    // ---- the cursor ----

    /// The next token, not consumed.
    pub fn peek(&self) -> &Token<'a> {
        self.tokens.get(self.pos).unwrap_or(&self.end)
    }

    /// Consumes and returns the next token; the final end or error token is
    /// never consumed.
    pub fn bump(&mut self) -> Token<'a> {
        let token = self.peek().clone();
        if !matches!(token.kind, TokenKind::Eof | TokenKind::Error(_)) {
            self.pos += 1;
        }
        token
    }

    /// Where the cursor stands, to come back to with [`Parser::rewind`].
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Moves the cursor back (or forward) to `pos`.
    pub(crate) fn rewind(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// Whether the next token is of `kind`.
    pub fn peek_is(&self, kind: &TokenKind) -> bool {
        &self.peek().kind == kind
    }

    /// Consumes the next token if it is of `kind`.
    pub fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.peek_is(kind);
        if found {
            self.bump();
        }
        found
    }

    /// Consumes the next token if it is the word `word`.
    pub fn eat_keyword(&mut self, word: &str) -> bool {
        let found = self.peek().is_keyword(word);
        if found {
            self.bump();
        }
        found
    }

    // ---- errors ----

    /// An error at `token`.
    pub fn error_at(token: &Token<'_>, message: impl Into<String>) -> ParseError {
        ParseError {
            line: token.line,
            column: token.column,
            message: message.into(),
        }
    }

    /// "expected `expected`, found <the next token>", at the next token (or
    /// the lexer's message when the next token is not a token at all).
    pub fn expected(&self, expected: &str) -> ParseError {
        let found = self.peek();
        let message = match &found.kind {
            TokenKind::Error(message) => message.clone(),
            _ => format!("expected {expected}, found {}", found.describe()),
        };
        Self::error_at(found, message)
    }

    // ---- match_* helpers: each consumes what it expects or says what it
    // expected ----

    /// Consumes a token of `kind`, described as `expected` in the error.
    pub fn match_token(
        &mut self,
        kind: TokenKind,
        expected: &str,
    ) -> Result<Token<'a>, ParseError> {
        if self.peek_is(&kind) {
            Ok(self.bump())
        } else {
            Err(self.expected(expected))
        }
    }

    /// Consumes the word `word`.
    pub fn match_keyword(&mut self, word: &str, expected: &str) -> Result<Token<'a>, ParseError> {
        if self.peek().is_keyword(word) {
            Ok(self.bump())
        } else {
            Err(self.expected(expected))
        }
    }

    /// Consumes a word.
    pub fn match_ident(&mut self, expected: &str) -> Result<Token<'a>, ParseError> {
        self.match_token(TokenKind::Ident, expected)
    }

    /// Consumes a non-negative integer that fits a `usize`.
    pub fn match_usize(&mut self, expected: &str) -> Result<usize, ParseError> {
        let token = self.match_token(TokenKind::Int, expected)?;
        token.text.parse().map_err(|_| {
            Self::error_at(
                &token,
                format!("`{}` is too large for {expected}", token.text),
            )
        })
    }

    /// Consumes a value name and returns the value it names in the current
    /// scope.
    pub fn match_operand(&mut self, expected: &str) -> Result<Value, ParseError> {
        let token = self.match_token(TokenKind::Value, expected)?;
        self.scopes.lookup(&token)
    }

    /// Consumes `[elem, elem, ...]` (possibly empty), calling `elem` for each
    /// element; `what` names an element in errors.
    pub fn match_bracket_list<T>(
        &mut self,
        what: &str,
        mut elem: impl FnMut(&mut Self) -> Result<T, ParseError>,
    ) -> Result<Vec<T>, ParseError> {
        self.match_token(
            TokenKind::LBracket,
            &format!("`[` to start a list of {}", plural(what)),
        )?;
        let mut items = Vec::new();
        if self.eat(&TokenKind::RBracket) {
            return Ok(items);
        }
        loop {
            items.push(elem(self)?);
            if self.eat(&TokenKind::RBracket) {
                return Ok(items);
            }
            self.match_token(
                TokenKind::Comma,
                &format!("`,` or `]` after {}", article(what)),
            )?;
        }
    }

    /// Consumes `[n, n, ...]` of non-negative integers, each named `what`.
    pub fn match_int_list(&mut self, what: &str) -> Result<Vec<usize>, ParseError> {
        let expected = article(what);
        self.match_bracket_list(what, |p| p.match_usize(&expected))
    }

    /// Consumes the end of a line (or leaves the end of the input for the
    /// enclosing region to report).
    pub fn match_line_end(&mut self) -> Result<(), ParseError> {
        if self.eat(&TokenKind::Newline) || self.peek_is(&TokenKind::Eof) {
            Ok(())
        } else {
            Err(self.expected("end of line"))
        }
    }

    fn skip_newlines(&mut self) {
        while self.eat(&TokenKind::Newline) {}
    }

    // ---- the grammar of kernels, regions and op lines ----

    /// `kernel @name(%p: type, ...) { ops }`
    fn parse_kernel(&mut self) -> Result<(), ParseError> {
        self.skip_newlines();
        self.match_keyword("kernel", "`kernel`")?;
        let name = self.match_token(TokenKind::Global, "the kernel name `@name`")?;
        self.func.name = name.text.strip_prefix('@').unwrap_or(name.text).to_string();
        self.match_token(TokenKind::LParen, "`(` to start the parameters")?;
        self.skip_newlines();
        if !self.eat(&TokenKind::RParen) {
            loop {
                self.parse_param()?;
                self.skip_newlines();
                if self.eat(&TokenKind::RParen) {
                    break;
                }
                self.match_token(TokenKind::Comma, "`,` or `)` after a parameter")?;
                self.skip_newlines();
            }
        }
        let open = self.match_token(TokenKind::LBrace, "`{` to open the kernel body")?;
        self.func.body.ops = self.parse_region_ops(&open)?;
        self.skip_newlines();
        if self.peek_is(&TokenKind::Eof) {
            Ok(())
        } else {
            Err(self.expected("end of input after the kernel"))
        }
    }

    /// `%name: type`
    fn parse_param(&mut self) -> Result<(), ParseError> {
        let token = self.match_token(TokenKind::Value, "a parameter `%name`")?;
        let name = token.text.strip_prefix('%').unwrap_or(token.text);
        if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return Err(Self::error_at(
                &token,
                format!(
                    "parameter name `{}` must start with a letter or `_`",
                    token.text
                ),
            ));
        }
        self.match_token(TokenKind::Colon, "`:` after the parameter name")?;
        let ty = self.parse_type()?;
        let value = self.func.add_param(name, ty);
        self.scopes.define(&token, value)
    }

    /// The ops of a region up to and including its closing `}`; the cursor is
    /// just after the opening `{` (`open`). Scoping is the caller's.
    pub fn parse_region_ops(&mut self, open: &Token<'_>) -> Result<Vec<OpId>, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(Self::error_at(
                open,
                format!("regions nest more than {MAX_NESTING} levels deep"),
            ));
        }
        self.depth += 1;
        if !self.eat(&TokenKind::Newline) {
            return Err(self.expected("end of line after `{`"));
        }
        let mut ops = Vec::new();
        loop {
            self.skip_newlines();
            if self.eat(&TokenKind::RBrace) {
                break;
            }
            if self.peek_is(&TokenKind::Eof) {
                return Err(self.expected(&format!(
                    "`}}` to close the region opened at {}:{}",
                    open.line, open.column
                )));
            }
            ops.push(self.parse_op()?);
            self.match_line_end()?;
        }
        self.depth -= 1;
        Ok(ops)
    }

    /// `[%r, ... =] name ... [: types]`: one op, defining its result names.
    fn parse_op(&mut self) -> Result<OpId, ParseError> {
        let mut defs = Vec::new();
        if self.peek_is(&TokenKind::Value) {
            loop {
                defs.push(self.match_token(TokenKind::Value, "a result name")?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.match_token(TokenKind::Equals, "`,` or `=` after a result name")?;
        }
        let name = self.peek().clone();
        if name.kind != TokenKind::Ident {
            return Err(self.expected("an op name"));
        }
        // The ops whose lines open regions read themselves; the rest, up to
        // their result types, are read by the op table.
        let op = match name.text {
            "for" | "while" | "if" => {
                self.bump();
                match name.text {
                    "for" => self.parse_for(&defs, &name)?,
                    "while" => self.parse_while(&defs, &name)?,
                    _ => self.parse_if(&defs)?,
                }
            }
            "reduce_with" | "scan_with" => self.parse_combine(&defs, &name)?,
            _ => self.parse_simple_op(&defs, &name)?,
        };
        let results = self.func.op(op).results.clone();
        for (token, value) in defs.iter().zip(results) {
            self.scopes.define(token, value)?;
        }
        Ok(op)
    }

    /// An op without regions: its name, operands and attributes, then its
    /// result types.
    fn parse_simple_op(
        &mut self,
        defs: &[Token<'a>],
        name: &Token<'a>,
    ) -> Result<OpId, ParseError> {
        let mut operands = Vec::new();
        let pending = self.parse_line::<OpKind>(&mut operands)?;
        let types = self.parse_result_types(defs)?;
        let kind = pending(&ResultTypes {
            op: name,
            types: &types,
        })?;
        let loc = self.parse_location()?;
        let op = self.func.create_op(kind, operands, types, Vec::new());
        self.func.ops[op].loc = loc;
        Ok(op)
    }

    /// An optional `loc("file":line:column[, "snippet"])` after an op's
    /// result types.
    pub fn parse_location(&mut self) -> Result<Option<Location>, ParseError> {
        if !self.eat_keyword("loc") {
            return Ok(None);
        }
        self.match_token(TokenKind::LParen, "`(` after `loc`")?;
        let file = self.match_string("the file name of `loc`, in quotes")?;
        self.match_token(TokenKind::Colon, "`:` after the file name")?;
        let line = self.match_u32("a line number")?;
        self.match_token(TokenKind::Colon, "`:` after the line number")?;
        let column = self.match_u32("a column number")?;
        let snippet = if self.eat(&TokenKind::Comma) {
            Some(self.match_string("the snippet of `loc`, in quotes")?)
        } else {
            None
        };
        self.match_token(TokenKind::RParen, "`)` to close `loc`")?;
        Ok(Some(Location {
            file,
            line,
            column,
            snippet,
        }))
    }

    /// Consumes a string in double quotes and returns its value.
    pub fn match_string(&mut self, expected: &str) -> Result<String, ParseError> {
        let token = self.match_token(TokenKind::Str, expected)?;
        token
            .string_value()
            .ok_or_else(|| Self::error_at(&token, format!("malformed escape in {}", token.text)))
    }

    /// Consumes a non-negative integer that fits a `u32`.
    pub fn match_u32(&mut self, expected: &str) -> Result<u32, ParseError> {
        let token = self.match_token(TokenKind::Int, expected)?;
        token.text.parse().map_err(|_| {
            Self::error_at(
                &token,
                format!("`{}` is too large for {expected}", token.text),
            )
        })
    }

    /// `: type, ...` when the op has result names (required) or a `:` follows
    /// (then it must list as many types as there are names).
    pub fn parse_result_types(&mut self, defs: &[Token<'_>]) -> Result<Vec<Type>, ParseError> {
        if !self.peek_is(&TokenKind::Colon) {
            if defs.is_empty() {
                return Ok(Vec::new());
            }
            return Err(self.expected("`:` and the result types"));
        }
        let colon = self.bump();
        let mut types = vec![self.parse_type()?];
        while self.eat(&TokenKind::Comma) {
            types.push(self.parse_type()?);
        }
        if types.len() != defs.len() {
            return Err(Self::error_at(
                &colon,
                format!(
                    "{} but {}",
                    count(defs.len(), "result name"),
                    count(types.len(), "result type")
                ),
            ));
        }
        Ok(types)
    }
}

/// `"an index"`, `"a dimension"`: `what` with its indefinite article.
pub(crate) fn article(what: &str) -> String {
    let vowel = what.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {what}", if vowel { "an" } else { "a" })
}

/// `"axes"`, `"indices"`, `"dimensions"`: the plural of `what`.
pub(crate) fn plural(what: &str) -> String {
    match what {
        "axis" => "axes".to_string(),
        "index" => "indices".to_string(),
        _ => format!("{what}s"),
    }
}

/// `"1 result type"`, `"2 result types"`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
