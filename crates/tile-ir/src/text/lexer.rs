//! Splits the text form into tokens that remember their source text and
//! position.
//!
//! Newlines are tokens (the text form puts one op on each line); spaces and
//! tabs are skipped, and a `//` comment is one [`TokenKind::Comment`] token
//! (the tile IR's parser drops them; the thread-level program's keeps them as
//! notes). A decimal integer immediately followed by `x` is an extent of a
//! tile type (`4x8xf32`), so that `x` becomes its own [`TokenKind::Times`]
//! token. A character that starts no token becomes a [`TokenKind::Error`]
//! token, which ends the stream.
//!
//! The lexer is shared by the text forms built on the tile IR's (the
//! thread-level program of `tile-thread`), so it knows a few tokens the tile
//! IR itself never uses: `.`, `"strings"` and comments.

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
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
    /// `.`
    Dot,
    /// A string in double quotes, with Rust's escapes (`\"`, `\\`, `\n`,
    /// `\t`, `\r`, `\0`, `\'`, `\u{..}`), quotes included in the text.
    Str,
    /// A `//` comment up to the end of its line (the newline excluded).
    Comment,
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
pub struct Token<'a> {
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

    /// The text of a [`TokenKind::Str`] token with its escapes resolved, or
    /// `None` for another token or a malformed escape.
    pub fn string_value(&self) -> Option<String> {
        if self.kind != TokenKind::Str {
            return None;
        }
        let inner = self.text.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            out.push(match chars.next()? {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                '0' => '\0',
                'u' => {
                    let rest = chars.as_str().strip_prefix('{')?;
                    let end = rest.find('}')?;
                    let c = char::from_u32(u32::from_str_radix(&rest[..end], 16).ok()?)?;
                    chars = rest[end + 1..].chars();
                    c
                }
                c @ ('\\' | '"' | '\'') => c,
                _ => return None,
            });
        }
        Some(out)
    }

    /// Whether this token is the word `word`.
    pub fn is_keyword(&self, word: &str) -> bool {
        self.kind == TokenKind::Ident && self.text == word
    }
}

/// Tokenizes `src`. The result always ends with an [`TokenKind::Eof`] or an
/// [`TokenKind::Error`] token.
pub fn lex(src: &str) -> Vec<Token<'_>> {
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
                    TokenKind::Comment
                }
                b'"' => self.string(),
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

    /// Lexes a string in double quotes; an unterminated one is an error.
    fn string(&mut self) -> TokenKind {
        self.bump();
        loop {
            match self.peek() {
                None | Some(b'\n') => {
                    return TokenKind::Error("a string without its closing `\"`".to_string())
                }
                Some(b'"') => {
                    self.bump();
                    return TokenKind::Str;
                }
                Some(b'\\') => {
                    self.bump();
                    self.bump();
                }
                Some(_) => self.bump(),
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
        '.' => TokenKind::Dot,
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
        let tokens = lex("1.5 1e-8 2E+3 7 // x\n%a @k 1. $");
        let got: Vec<_> = tokens.iter().map(|t| (t.kind.clone(), t.text)).collect();
        assert_eq!(
            got,
            [
                (Float, "1.5"),
                (Float, "1e-8"),
                (Float, "2E+3"),
                (Int, "7"),
                (Comment, "// x"),
                (Newline, "\n"),
                (Value, "%a"),
                (Global, "@k"),
                (Int, "1"),
                (Dot, "."),
                (Error("unexpected character `$`".into()), "$"),
            ]
        );
        assert_eq!((tokens[6].line, tokens[6].column), (2, 1));
        assert_eq!((tokens[8].line, tokens[8].column), (2, 7));
    }

    #[test]
    fn strings_keep_their_escapes_until_asked() {
        let tokens = lex(r#""a \"b\" \\ \u{e9}\n" "open"#);
        assert_eq!(tokens[0].kind, TokenKind::Str);
        assert_eq!(
            tokens[0].string_value().as_deref(),
            Some("a \"b\" \\ \u{e9}\n")
        );
        assert_eq!(
            tokens[1].kind,
            TokenKind::Error("a string without its closing `\"`".into())
        );
        let text = format!("{:?}", "%3 = load %1, %2 \"x\"");
        assert_eq!(
            lex(&text)[0].string_value().as_deref(),
            Some("%3 = load %1, %2 \"x\"")
        );
    }
}
