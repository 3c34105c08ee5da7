//! A small cursor for the text forms of int-tuples, layouts, coordinates,
//! tilers and swizzles.
//!
//! Grammar (whitespace is allowed between tokens):
//! ```text
//! int       := '-'? '_'? digit+            // '_' is CuTe's static marker, ignored
//! int_tuple := int | '(' [int_tuple (',' int_tuple)*] ')'
//! layout    := int_tuple ':' int_tuple
//! coord     := '_' | int | '(' [coord (',' coord)*] ')'
//! tiler     := '<' tiler (',' tiler)* '>' | layout | int_tuple
//! swizzle   := 'Sw<' int ',' int ',' int '>'
//! composed  := swizzle 'o' int 'o' layout
//! ```

use super::error::{LayoutError, Result};

/// A position in the text being parsed.
pub(crate) struct Cursor<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Starts at the beginning of `input`.
    pub(crate) fn new(input: &'a str) -> Self {
        Cursor { input, pos: 0 }
    }

    /// An error at the current position.
    pub(crate) fn error(&self, expected: &'static str) -> LayoutError {
        LayoutError::Parse {
            input: self.input.to_string(),
            pos: self.pos,
            expected,
        }
    }

    fn skip_ws(&mut self) {
        let rest = &self.input[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// The next non-blank byte, not consumed.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.input.as_bytes().get(self.pos).copied()
    }

    /// The next non-blank bytes start with `token`.
    pub(crate) fn looking_at(&mut self, token: &str) -> bool {
        self.skip_ws();
        self.input[self.pos..].starts_with(token)
    }

    /// Consumes `token` if it comes next.
    pub(crate) fn eat(&mut self, token: &str) -> bool {
        let found = self.looking_at(token);
        if found {
            self.pos += token.len();
        }
        found
    }

    /// Consumes `token` or fails with `expected`.
    pub(crate) fn expect(&mut self, token: &str, expected: &'static str) -> Result<()> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// Consumes a lone `_` (a free mode), but not the `_` of `_3`.
    pub(crate) fn eat_free(&mut self) -> bool {
        let free = self.looking_at("_")
            && !self
                .input
                .as_bytes()
                .get(self.pos + 1)
                .is_some_and(u8::is_ascii_digit);
        if free {
            self.pos += 1;
        }
        free
    }

    /// Fails unless only blanks remain.
    pub(crate) fn finish(&mut self) -> Result<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("end of input")),
        }
    }

    /// Parses an integer, with an optional sign and CuTe's `_` marker.
    pub(crate) fn int(&mut self) -> Result<i64> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.input.as_bytes();
        let mut end = start;
        if bytes.get(end) == Some(&b'-') {
            end += 1;
        }
        let negative = end > start;
        if bytes.get(end) == Some(&b'_') {
            end += 1;
        }
        let digits = end;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        if end == digits {
            self.pos = digits;
            return Err(self.error("an integer"));
        }
        let magnitude: i64 = self.input[digits..end]
            .parse()
            .map_err(|_| self.error("an integer that fits in 64 bits"))?;
        self.pos = end;
        Ok(if negative { -magnitude } else { magnitude })
    }

    /// Parses an integer that must convert to `T`; a value out of range is
    /// reported at the integer's first byte.
    pub(crate) fn int_as<T: TryFrom<i64>>(&mut self, expected: &'static str) -> Result<T> {
        self.skip_ws();
        let start = self.pos;
        let value = self.int()?;
        T::try_from(value).map_err(|_| {
            self.pos = start;
            self.error(expected)
        })
    }

    /// Parses `'(' [item (',' item)*] ')'` with `item` for the elements.
    pub(crate) fn tuple<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.expect("(", "`(`")?;
        let mut items = Vec::new();
        if self.eat(")") {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat(")") {
                return Ok(items);
            }
            self.expect(",", "`,` or `)`")?;
        }
    }
}

/// Parses all of `input` with `f`, allowing surrounding blanks.
pub(crate) fn parse_all<T>(input: &str, f: impl FnOnce(&mut Cursor<'_>) -> Result<T>) -> Result<T> {
    let mut cursor = Cursor::new(input);
    let value = f(&mut cursor)?;
    cursor.finish()?;
    Ok(value)
}
