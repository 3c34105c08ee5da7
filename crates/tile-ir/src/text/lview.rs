//! The syntax of the layout-view ops and of layouts in the text form.
//!
//! A layout is written in CuTe's text form between `<` and `>`:
//! `layout_view %t <(4,8):(8,1)>`; the type of a view is
//! `lview<f32, (4,8):(8,1)>`, of a masked view (an edge tile)
//! `lview<f32, (4,8):(100,1), masked>`, of a swizzled one
//! `lview<f32, Sw<1,2,3> o (4,8):(8,1)>`.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::parser::Parser;
use crate::layout::{Layout, Swizzle};

impl Parser<'_, '_> {
    /// `<layout>`: a layout in CuTe's text form, up to the matching `>`.
    pub fn match_layout(&mut self) -> Result<Layout, ParseError> {
        let open = self.match_token(TokenKind::LAngle, "`<` and a layout")?;
        self.match_layout_until_rangle(&open)
    }

    /// The layout text up to and including the next `>` (the `<` before it
    /// already consumed), parsed with [`Layout`]'s `FromStr`.
    pub fn match_layout_until_rangle(&mut self, open: &Token<'_>) -> Result<Layout, ParseError> {
        let text = self.layout_text()?;
        parse_layout(open, &text)
    }

    /// A layout view type's layout and whether it ends in `, masked`, up to
    /// and including the closing `>`.
    pub fn match_view_layout(&mut self, open: &Token<'_>) -> Result<(Layout, bool), ParseError> {
        let text = self.layout_text()?;
        match text.strip_suffix(",masked") {
            Some(layout) => Ok((parse_layout(open, layout)?, true)),
            None => Ok((parse_layout(open, &text)?, false)),
        }
    }

    /// A swizzle, `Sw<bits,base,shift>`.
    pub fn match_swizzle(&mut self) -> Result<Swizzle, ParseError> {
        let sw = self.match_keyword("Sw", "a swizzle `Sw<bits,base,shift>`")?;
        self.match_token(TokenKind::LAngle, "`<` after `Sw`")?;
        let text = format!("Sw<{}>", self.layout_text()?);
        text.parse::<Swizzle>()
            .map_err(|e| Self::error_at(&sw, format!("bad swizzle `{text}`: {e}")))
    }

    /// The tokens up to the next `>`, which is consumed, joined.
    fn layout_text(&mut self) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            if self.peek_is(&TokenKind::RAngle) {
                self.bump();
                return Ok(text);
            }
            if matches!(
                self.peek().kind,
                TokenKind::Newline | TokenKind::Eof | TokenKind::Error(_) | TokenKind::LAngle
            ) {
                return Err(self.expected("`>` to close the layout"));
            }
            text.push_str(self.bump().text);
        }
    }
}

/// `text` parsed as a layout, an error at `open` if it is not one.
fn parse_layout(open: &Token<'_>, text: &str) -> Result<Layout, ParseError> {
    text.parse::<Layout>()
        .map_err(|e| Parser::error_at(open, format!("bad layout `{text}`: {e}")))
}
