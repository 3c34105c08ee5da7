//! Splits the text form into tokens that remember their source text and
//! position.
//!
//! Newlines are tokens (the text form puts one op on each line); spaces, tabs
//! and `//` comments are skipped. A decimal integer immediately followed by
//! `x` is an extent of a tile type (`4x8xf32`), so that `x` becomes its own
//! [`TokenKind::Times`] token. A character that starts no token becomes a
//! [`TokenKind::Error`] token, which ends the stream.

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// A word: `[A-Za-z_][A-Za-z0-9_]*` (op names, keywords, dtypes).
    Ident,
    /// A decimal integer without sign.
    Int,
    /// A decimal number with a fraction or an exponent, without sign.
    Float,
    /// A value name: `%` followed by `[A-Za-z0-9_]+`.
    Value,
    /// A kernel name: `@` followed by `[A-Za-z0-9_]+`.
    Global,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `<`
    LAngle,
    /// `>`
    RAngle,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `=`
    Equals,
    /// `-`
    Minus,
    /// The `x` between the extents of a tile type.
    Times,
    /// The end of a line.
    Newline,
    /// The end of the input.
    Eof,
    /// Text that starts no token, with the message to report.
    Error(String),
}

/// One token: its kind, its source text and where it starts.
#[derive(Clone, Debug)]
pub(crate) struct Token<'a> {
    /// What the token is.
    pub kind: TokenKind,
    /// The token's text in the source (empty at the end of the input).
    pub text: &'a str,
    /// The line of its first character, from 1.
    pub line: usize,
    /// The column of its first character, from 1, counted in characters.
    pub column: usize,
}

impl Token<'_> {
    /// How an error message names this token when it was not what was
    /// expected.
    pub fn describe(&self) -> String {
        match &self.kind {
            TokenKind::Newline => "end of line".to_string(),
            TokenKind::Eof => "end of input".to_string(),
            TokenKind::Error(message) => message.clone(),
            _ => format!("`{}`", self.text),
        }
    }

    /// Whether this token is the word `word`.
    pub fn is_keyword(&self, word: &str) -> bool {
        self.kind == TokenKind::Ident && self.text == word
    }
}

/// Tokenizes `src`. The result always ends with an [`TokenKind::Eof`] or an
/// [`TokenKind::Error`] token.
pub(crate) fn lex(src: &str) -> Vec<Token<'_>> {
    let mut lexer = Lexer {
        src,
        pos: 0,
        line: 1,
        column: 1,
        tokens: Vec::new(),
    };
    lexer.run();
    lexer.tokens
}

struct Lexer<'a> {
    src: &'a str,
    /// Byte offset of the next character. Every byte the lexer steps over
    /// outside a comment is ASCII, so this is always a character boundary
    /// there (a non-ASCII character outside a comment ends the stream).
    pos: usize,
    line: usize,
    column: usize,
    tokens: Vec<Token<'a>>,
}

impl<'a> Lexer<'a> {
    fn byte_at(&self, offset: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + offset).copied()
    }

    fn peek(&self) -> Option<u8> {
        self.byte_at(0)
    }

    /// Steps over one byte; a comment's non-ASCII characters are stepped
    /// over byte by byte, but only the first byte of each counts as a column.
    fn bump(&mut self) {
        if let Some(b) = self.peek() {
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xc0 != 0x80 {
                self.column += 1;
            }
        }
    }

    fn bump_while(&mut self, keep: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&keep) {
            self.bump();
        }
    }

    fn run(&mut self) {
        loop {
            let (start, line, column) = (self.pos, self.line, self.column);
            let Some(c) = self.peek() else {
                self.push(TokenKind::Eof, start, line, column);
                return;
            };
            let kind = match c {
                b' ' | b'\t' | b'\r' => {
                    self.bump();
                    continue;
                }
                b'/' if self.byte_at(1) == Some(b'/') => {
                    self.bump_while(|c| c != b'\n');
                    continue;
                }
                b'%' | b'@' => {
                    self.bump();
                    let name_start = self.pos;
                    self.bump_while(is_name_byte);
                    if self.pos == name_start {
                        let what = if c == b'%' { "value" } else { "kernel" };
                        TokenKind::Error(format!(
                            "expected a {what} name after `{}`",
                            char::from(c)
                        ))
                    } else if c == b'%' {
                        TokenKind::Value
                    } else {
                        TokenKind::Global
                    }
                }
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    self.bump_while(is_name_byte);
                    TokenKind::Ident
                }
                c if c.is_ascii_digit() => self.number(),
                c if c.is_ascii() => {
                    self.bump();
                    punctuation(char::from(c))
                }
                _ => {
                    let found = self.src.get(self.pos..).and_then(|s| s.chars().next());
                    let found = found.map_or_else(String::new, |c| c.escape_debug().to_string());
                    TokenKind::Error(format!("unexpected character `{found}`"))
                }
            };
            let is_int = kind == TokenKind::Int;
            let stop = matches!(kind, TokenKind::Error(_));
            self.push(kind, start, line, column);
            if stop {
                return;
            }
            if is_int && self.peek() == Some(b'x') {
                let (start, line, column) = (self.pos, self.line, self.column);
                self.bump();
                self.push(TokenKind::Times, start, line, column);
            }
        }
    }

    /// Lexes `digits ('.' digits)? ([eE] [+-]? digits)?`.
    fn number(&mut self) -> TokenKind {
        let digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
        self.bump_while(|c| c.is_ascii_digit());
        let mut kind = TokenKind::Int;
        if self.peek() == Some(b'.') && digit(self.byte_at(1)) {
            self.bump();
            self.bump_while(|c| c.is_ascii_digit());
            kind = TokenKind::Float;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.byte_at(1), Some(b'+' | b'-')));
            if digit(self.byte_at(1 + sign)) {
                for _ in 0..=sign {
                    self.bump();
                }
                self.bump_while(|c| c.is_ascii_digit());
                kind = TokenKind::Float;
            }
        }
        kind
    }

    fn push(&mut self, kind: TokenKind, start: usize, line: usize, column: usize) {
        let text = self.src.get(start..self.pos).unwrap_or("");
        self.tokens.push(Token {
            kind,
            text,
            line,
            column,
        });
    }
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn punctuation(c: char) -> TokenKind {
    match c {
        '\n' => TokenKind::Newline,
        '(' => TokenKind::LParen,
        ')' => TokenKind::RParen,
        '[' => TokenKind::LBracket,
        ']' => TokenKind::RBracket,
        '{' => TokenKind::LBrace,
        '}' => TokenKind::RBrace,
        '<' => TokenKind::LAngle,
        '>' => TokenKind::RAngle,
        ',' => TokenKind::Comma,
        ':' => TokenKind::Colon,
        '=' => TokenKind::Equals,
        '-' => TokenKind::Minus,
        other => TokenKind::Error(format!("unexpected character `{}`", other.escape_debug())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        lex(src).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn tile_extents_split_on_x() {
        use TokenKind::*;
        assert_eq!(
            kinds("tile<4x8xf32>"),
            [Ident, LAngle, Int, Times, Int, Times, Ident, RAngle, Eof]
        );
    }

    #[test]
    fn numbers_comments_and_positions() {
        use TokenKind::*;
        let tokens = lex("1.5 1e-8 2E+3 7 // x\n%a @k 1.");
        let got: Vec<_> = tokens.iter().map(|t| (t.kind.clone(), t.text)).collect();
        assert_eq!(
            got,
            [
                (Float, "1.5"),
                (Float, "1e-8"),
                (Float, "2E+3"),
                (Int, "7"),
                (Newline, "\n"),
                (Value, "%a"),
                (Global, "@k"),
                (Int, "1"),
                (Error("unexpected character `.`".into()), "."),
            ]
        );
        assert_eq!((tokens[5].line, tokens[5].column), (2, 1));
        assert_eq!((tokens[7].line, tokens[7].column), (2, 7));
    }
}
