//! The syntax of the layout-view ops and of layouts in the text form.
//!
//! A layout is written in CuTe's text form between `<` and `>`:
//! `layout_view %t <(4,8):(8,1)>`; the type of a view is
//! `lview<f32, (4,8):(8,1)>`, of a masked view (an edge tile)
//! `lview<f32, (4,8):(100,1), masked>`, of a swizzled one
//! `lview<f32, Sw<1,2,3> o (4,8):(8,1)>`.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::ops::Attrs;
use super::parser::Parser;
use super::print::padding_text;
use crate::function::Value;
use crate::layout::{Layout, Swizzle};
use crate::lview::LViewOp;
use crate::ops::OpKind;
use crate::types::Shape;

impl Parser<'_, '_> {
    /// The body of a layout-view op named `name`, or `None` when `name` is
    /// not one.
    pub fn parse_lview_body(
        &mut self,
        name: &Token<'_>,
    ) -> Result<Option<(Attrs, Vec<Value>)>, ParseError> {
        let ready =
            |op: LViewOp, operands: Vec<Value>| Some((Attrs::Ready(OpKind::LView(op)), operands));
        if !(name.text == "layout_view" || name.text.starts_with("lview_")) {
            return Ok(None);
        }
        if name.text == "lview_store" || name.text == "lview_store_masked" {
            let tile = self.match_operand("the stored tile")?;
            self.match_token(TokenKind::Comma, "`,` after the stored tile")?;
            let view = self.match_operand("a layout view operand")?;
            let op = match name.text {
                "lview_store" => LViewOp::Store,
                _ => LViewOp::StoreMasked,
            };
            return Ok(ready(op, vec![tile, view]));
        }
        let first = if name.text == "layout_view" {
            "a tensor operand"
        } else {
            "a layout view operand"
        };
        let x = self.match_operand(first)?;
        Ok(match name.text {
            "layout_view" => {
                let layout = self.match_layout()?;
                ready(LViewOp::Make { layout }, vec![x])
            }
            "lview_tile" => {
                let shape = self.match_int_list("tile extent")?;
                let mut operands = vec![x];
                operands.extend(self.match_bracket_list("index", |p| p.match_operand("an index"))?);
                ready(LViewOp::Tile { shape }, operands)
            }
            "lview_split" => {
                self.match_keyword("axis", "`axis`")?;
                let axis = self.match_usize("an axis")?;
                self.match_keyword("parts", "`parts` and the number of parts")?;
                let parts = self.match_usize("a number of parts")?;
                let mut operands = vec![x];
                operands.extend(self.match_bracket_list("index", |p| p.match_operand("an index"))?);
                ready(LViewOp::Split { axis, parts }, operands)
            }
            "lview_vectorize" => {
                let shape = self.match_int_list("vector extent")?;
                ready(LViewOp::Vectorize { shape }, vec![x])
            }
            "lview_slice" => {
                let ranges = self.match_bracket_list("range", |p| {
                    let start = p.match_usize("the start of a range")?;
                    p.match_token(TokenKind::Colon, "`:` after the start of a range")?;
                    let stop = p.match_usize("the stop of a range")?;
                    Ok((start, stop))
                })?;
                ready(LViewOp::Slice { ranges }, vec![x])
            }
            "lview_transpose" => {
                let perm = self.match_int_list("mode")?;
                ready(LViewOp::Transpose { perm }, vec![x])
            }
            "lview_reshape" => {
                let shape = Shape::new(self.match_int_list("extent")?);
                ready(LViewOp::Reshape { shape }, vec![x])
            }
            "lview_compose" => {
                let layout = self.match_layout()?;
                ready(LViewOp::Compose { layout }, vec![x])
            }
            "lview_coalesce" => ready(LViewOp::Coalesce, vec![x]),
            "lview_swizzle" => {
                let swizzle = self.match_swizzle()?;
                ready(LViewOp::Swizzle { swizzle }, vec![x])
            }
            "lview_distribute" => {
                let threads = self.match_layout()?;
                let tid = self.match_operand("a thread id")?;
                ready(LViewOp::Distribute { threads }, vec![x, tid])
            }
            "lview_load" => ready(LViewOp::Load, vec![x]),
            "lview_load_masked" => {
                let attrs = match self.match_padding()? {
                    Attrs::Ready(OpKind::LoadMasked { padding }) => {
                        Attrs::Ready(OpKind::LView(LViewOp::LoadMasked { padding }))
                    }
                    Attrs::LoadMaskedValue(value) => Attrs::LViewLoadMaskedValue(value),
                    other => other,
                };
                Some((attrs, vec![x]))
            }
            other => return Err(Self::error_at(name, format!("unknown op `{other}`"))),
        })
    }

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

/// The text of a layout-view op between the `=` and the result types, given
/// its operands' names.
pub(super) fn print_body(op: &LViewOp, operands: &[String]) -> String {
    let name = op.name();
    let at = |i: usize| operands.get(i).map_or("%?", String::as_str);
    let rest = operands.get(1..).unwrap_or_default().join(", ");
    let list = |items: &[usize]| {
        let items: Vec<String> = items.iter().map(usize::to_string).collect();
        format!("[{}]", items.join(", "))
    };
    let x = at(0);
    match op {
        LViewOp::Make { layout } | LViewOp::Compose { layout } => format!("{name} {x} <{layout}>"),
        LViewOp::Tile { shape } => format!("{name} {x} {} [{rest}]", list(shape)),
        LViewOp::Split { axis, parts } => format!("{name} {x} axis {axis} parts {parts} [{rest}]"),
        LViewOp::Vectorize { shape } => format!("{name} {x} {}", list(shape)),
        LViewOp::Slice { ranges } => {
            let ranges: Vec<String> = ranges.iter().map(|(s, e)| format!("{s}:{e}")).collect();
            format!("{name} {x} [{}]", ranges.join(", "))
        }
        LViewOp::Transpose { perm } => format!("{name} {x} {}", list(perm)),
        LViewOp::Reshape { shape } => format!("{name} {x} {shape}"),
        LViewOp::Coalesce | LViewOp::Load => format!("{name} {x}"),
        LViewOp::Swizzle { swizzle } => format!("{name} {x} {swizzle}"),
        LViewOp::Distribute { threads } => format!("{name} {x} <{threads}> {}", at(1)),
        LViewOp::LoadMasked { padding } => format!("{name} {x} pad({})", padding_text(padding)),
        LViewOp::Store | LViewOp::StoreMasked => format!("{name} {x}, {}", at(1)),
    }
}
