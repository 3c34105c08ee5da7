//! Layout-view attributes: layouts, swizzles, and a layout-view op's whole
//! line as the attribute of `OpKind`'s row that nests [`LViewOp`]'s table.

use super::{Operands, Pending, ResultTypes, Syntax};
use crate::function::Value;
use crate::layout::{Layout, Swizzle};
use crate::lview::LViewOp;
use crate::text::error::ParseError;
use crate::text::parser::Parser;
use std::fmt::Write;

/// A layout in CuTe's text form between `<` and `>`.
pub(crate) struct LayoutText;

impl Syntax<Layout> for LayoutText {
    type Read = Layout;

    fn write(value: &Layout, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "<{value}>");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<Layout, ParseError> {
        p.match_layout()
    }

    fn finish(read: Option<Layout>, results: &ResultTypes<'_>) -> Result<Layout, ParseError> {
        results.given(read)
    }
}

/// A swizzle, `Sw<bits,base,shift>`.
pub(crate) struct SwizzleText;

impl Syntax<Swizzle> for SwizzleText {
    type Read = Swizzle;

    fn write(value: &Swizzle, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "{value}");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<Swizzle, ParseError> {
        p.match_swizzle()
    }

    fn finish(read: Option<Swizzle>, results: &ResultTypes<'_>) -> Result<Swizzle, ParseError> {
        results.given(read)
    }
}

/// A layout-view op: its whole line, by [`LViewOp`]'s own table.
pub(crate) struct Nested;

impl Syntax<LViewOp> for Nested {
    type Read = Pending<LViewOp>;

    fn write(value: &LViewOp, operands: &Operands<'_>, out: &mut String) {
        out.push_str(&crate::text::ops::print_line(value, operands));
    }

    fn parse(
        p: &mut Parser<'_, '_>,
        operands: &mut Vec<Value>,
    ) -> Result<Pending<LViewOp>, ParseError> {
        p.parse_line::<LViewOp>(operands)
    }

    fn finish(
        read: Option<Pending<LViewOp>>,
        results: &ResultTypes<'_>,
    ) -> Result<LViewOp, ParseError> {
        results.given(read)?(results)
    }

    fn word(value: &LViewOp) -> &'static str {
        value.name()
    }
}
