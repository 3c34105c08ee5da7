//! How each kind of attribute of the op tables (`ops/table.rs`) is written
//! and read: a number, a name, a list of integers, a layout, a constant
//! whose dtype is the result's, or nothing at all where the result type
//! gives the attribute (`iota`'s shape). The table names a syntax per
//! attribute field; the printer and the parser reach attributes only
//! through these.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::parser::{article, Parser};
use crate::function::Value;
use crate::ops::TextName;
use crate::types::{Shape, Type};
use crate::DType;
use std::fmt::Write;

mod from_results;
mod layouts;
mod lists;

pub(crate) use from_results::{PadValue, ResultDType, ResultShape, ResultValue};
pub(crate) use layouts::{LayoutText, Nested, SwizzleText};
pub(crate) use lists::{
    Axes, Dimensions, Extents, Ints, Modes, Paddings, ShapeOf, SliceRanges, TileExtents,
    VectorExtents, ViewRanges,
};

/// An op kind waiting for its result types, which follow its line.
pub(crate) type Pending<K> = Box<dyn FnOnce(&ResultTypes<'_>) -> Result<K, ParseError>>;

/// What the printer knows of an op's operands: their names and, for
/// tensors, their ranks.
pub(crate) struct Operands<'a> {
    /// Each operand's name.
    pub names: &'a [String],
    /// Each operand's rank, where it is a tensor.
    pub ranks: &'a [Option<usize>],
}

/// An op's result types, and its name for errors.
pub(crate) struct ResultTypes<'a> {
    /// The op's name token.
    pub op: &'a Token<'a>,
    /// The result types.
    pub types: &'a [Type],
}

impl ResultTypes<'_> {
    /// The single result type attributes are taken from.
    fn one(&self) -> Result<&Type, ParseError> {
        match self.types {
            [ty] => Ok(ty),
            _ => Err(Parser::error_at(
                self.op,
                format!(
                    "`{}` needs one result type to take its attributes from, found {}",
                    self.op.text,
                    self.types.len()
                ),
            )),
        }
    }

    /// The shape of the single result, which must be a tile.
    fn tile_shape(&self) -> Result<Shape, ParseError> {
        let ty = self.one()?;
        ty.tile_shape().cloned().ok_or_else(|| {
            Parser::error_at(
                self.op,
                format!(
                    "`{}` takes its shape from its result type, which must be a tile, found `{ty}`",
                    self.op.text
                ),
            )
        })
    }

    /// What the line read of a written attribute.
    fn given<R>(&self, read: Option<R>) -> Result<R, ParseError> {
        read.ok_or_else(|| {
            Parser::error_at(
                self.op,
                format!("`{}`'s line lacks an attribute", self.op.text),
            )
        })
    }
}

/// The text form of attributes of type `T`.
pub(crate) trait Syntax<T> {
    /// What the op's line holds of the value.
    type Read: 'static;

    /// Whether the line writes the value (`false`: the result type gives
    /// it, and the format does not name it).
    const WRITTEN: bool = true;

    /// Writes `value`.
    fn write(value: &T, operands: &Operands<'_>, out: &mut String);

    /// Reads what the line holds where the parser stands; an attribute that
    /// is itself an op's line (a nested table) pushes that op's operands.
    fn parse(p: &mut Parser<'_, '_>, operands: &mut Vec<Value>) -> Result<Self::Read, ParseError>;

    /// The value, from what the line held (`None` where it holds nothing)
    /// and the op's result types.
    fn finish(read: Option<Self::Read>, results: &ResultTypes<'_>) -> Result<T, ParseError>;

    /// The value as a number of operands, for a format's `%list*$name`.
    fn count(_value: &T) -> Option<usize> {
        None
    }

    /// The op's name, for a format that starts with this attribute.
    fn word(_value: &T) -> &'static str {
        ""
    }
}

/// A decimal number (an axis, a count).
pub(crate) struct Decimal;

impl<T: TryFrom<usize> + Copy + std::fmt::Display + 'static> Syntax<T> for Decimal {
    type Read = T;

    fn write(value: &T, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "{value}");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<T, ParseError> {
        let token = p.peek().clone();
        let n = p.match_usize("a number")?;
        T::try_from(n).map_err(|_| Parser::error_at(&token, format!("{n} is out of range")))
    }

    fn finish(read: Option<T>, results: &ResultTypes<'_>) -> Result<T, ParseError> {
        results.given(read)
    }
}

/// A grid axis: a number that fits in a byte.
pub(crate) struct GridAxis;

impl Syntax<u8> for GridAxis {
    type Read = u8;

    fn write(value: &u8, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "{value}");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<u8, ParseError> {
        let token = p.peek().clone();
        let axis = p.match_usize("a grid axis")?;
        u8::try_from(axis)
            .map_err(|_| Parser::error_at(&token, format!("grid axis {axis} is out of range")))
    }

    fn finish(read: Option<u8>, results: &ResultTypes<'_>) -> Result<u8, ParseError> {
        results.given(read)
    }
}

/// A value of an attribute enum, by its name.
pub(crate) struct Word;

impl<T: TextName> Syntax<T> for Word {
    type Read = T;

    fn write(value: &T, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "{value}");
    }

    /// Consumes the word only when it names a value, so that a line
    /// starting with an unknown name reads as no op at all.
    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<T, ParseError> {
        let token = p.peek().clone();
        match T::from_text(token.text).filter(|_| token.kind == TokenKind::Ident) {
            Some(value) => {
                p.bump();
                Ok(value)
            }
            None => {
                let names: Vec<String> = T::ALL.iter().map(|v| format!("`{v}`")).collect();
                let what = article(T::WHAT);
                Err(p.expected(&format!("{what} ({})", names.join(", "))))
            }
        }
    }

    fn finish(read: Option<T>, results: &ResultTypes<'_>) -> Result<T, ParseError> {
        results.given(read)
    }

    fn word(value: &T) -> &'static str {
        value.text()
    }
}

/// A dtype's name.
pub(crate) struct DTypeName;

impl Syntax<DType> for DTypeName {
    type Read = DType;

    fn write(value: &DType, _: &Operands<'_>, out: &mut String) {
        out.push_str(value.name());
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<DType, ParseError> {
        p.match_dtype()
    }

    fn finish(read: Option<DType>, results: &ResultTypes<'_>) -> Result<DType, ParseError> {
        results.given(read)
    }
}

/// `parts <n>`: how many parts a layout view splits into.
pub(crate) struct Parts;

impl Syntax<usize> for Parts {
    type Read = usize;

    fn write(value: &usize, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "parts {value}");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<usize, ParseError> {
        p.match_keyword("parts", "`parts` and the number of parts")?;
        p.match_usize("a number of parts")
    }

    fn finish(read: Option<usize>, results: &ResultTypes<'_>) -> Result<usize, ParseError> {
        results.given(read)
    }
}

/// ` keepdim` where the flag is set, nothing otherwise.
pub(crate) struct KeepDim;

impl Syntax<bool> for KeepDim {
    type Read = bool;

    fn write(value: &bool, _: &Operands<'_>, out: &mut String) {
        if *value {
            out.push_str(" keepdim");
        }
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<bool, ParseError> {
        Ok(p.eat_keyword("keepdim"))
    }

    fn finish(read: Option<bool>, results: &ResultTypes<'_>) -> Result<bool, ParseError> {
        results.given(read)
    }
}

/// ` stages(n)` where a loop has its own number of stages, nothing
/// otherwise.
pub(crate) struct Stages;

impl Syntax<Option<u32>> for Stages {
    type Read = Option<u32>;

    fn write(value: &Option<u32>, _: &Operands<'_>, out: &mut String) {
        if let Some(stages) = value {
            let _ = write!(out, " stages({stages})");
        }
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<Option<u32>, ParseError> {
        if !p.eat_keyword("stages") {
            return Ok(None);
        }
        p.match_token(TokenKind::LParen, "`(` after `stages`")?;
        let n = p.match_u32("the number of stages")?;
        p.match_token(TokenKind::RParen, "`)` after the number of stages")?;
        Ok(Some(n))
    }

    fn finish(
        read: Option<Option<u32>>,
        results: &ResultTypes<'_>,
    ) -> Result<Option<u32>, ParseError> {
        results.given(read)
    }
}

/// A string in quotes, with Rust's escapes.
pub(crate) struct Quoted;

impl Syntax<String> for Quoted {
    type Read = String;

    fn write(value: &String, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "{value:?}");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<String, ParseError> {
        p.match_string("a message in quotes")
    }

    fn finish(read: Option<String>, results: &ResultTypes<'_>) -> Result<String, ParseError> {
        results.given(read)
    }
}
