//! How each kind of attribute of the op tables (`ops/table.rs`) is written
//! and read: a number, a name, a list of integers, a layout, a constant
//! whose dtype is the result's, or nothing at all where the result type
//! gives the attribute (`iota`'s shape). The table names a syntax per
//! attribute field; the printer and the parser reach attributes only
//! through these.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::literal::Literal;
use super::parser::{article, Parser};
use crate::function::Value;
use crate::layout::{Layout, Swizzle};
use crate::lview::LViewOp;
use crate::ops::{Padding, SliceRange, TextName};
use crate::types::{Shape, Type};
use crate::DType;
use std::fmt::Write;
use std::marker::PhantomData;

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

/// What the elements of an integer list are called in errors.
pub(crate) trait Noun {
    /// The singular noun ("axis", "dimension").
    const NOUN: &'static str;
}

macro_rules! nouns {
    ($($name:ident => $noun:literal),* $(,)?) => {$(
        #[doc = concat!("Lists of ", $noun, "s.")]
        pub(crate) struct $name;

        impl Noun for $name {
            const NOUN: &'static str = $noun;
        }
    )*};
}

nouns!(
    Dimensions => "dimension",
    Axes => "axis",
    Paddings => "padding",
    TileExtents => "tile extent",
    VectorExtents => "vector extent",
    Modes => "mode",
    Extents => "extent",
);

/// `[n, n, ...]`: non-negative integers, each a `N::NOUN`.
pub(crate) struct Ints<N>(PhantomData<N>);

impl<N: Noun> Syntax<Vec<usize>> for Ints<N> {
    type Read = Vec<usize>;

    fn write(value: &Vec<usize>, _: &Operands<'_>, out: &mut String) {
        let items: Vec<String> = value.iter().map(usize::to_string).collect();
        let _ = write!(out, "[{}]", items.join(", "));
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<Vec<usize>, ParseError> {
        p.match_int_list(N::NOUN)
    }

    fn finish(
        read: Option<Vec<usize>>,
        results: &ResultTypes<'_>,
    ) -> Result<Vec<usize>, ParseError> {
        results.given(read)
    }
}

/// A shape, `[d0, d1, ...]`, each a `N::NOUN`; as a count, its rank.
pub(crate) struct ShapeOf<N>(PhantomData<N>);

impl<N: Noun> Syntax<Shape> for ShapeOf<N> {
    type Read = Shape;

    fn write(value: &Shape, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "{value}");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<Shape, ParseError> {
        Ok(Shape::new(p.match_int_list(N::NOUN)?))
    }

    fn finish(read: Option<Shape>, results: &ResultTypes<'_>) -> Result<Shape, ParseError> {
        results.given(read)
    }

    fn count(value: &Shape) -> Option<usize> {
        Some(value.rank())
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

/// `[start:stop:step, ...]`: a `slice`'s ranges.
pub(crate) struct SliceRanges;

impl Syntax<Vec<SliceRange>> for SliceRanges {
    type Read = Vec<SliceRange>;

    fn write(value: &Vec<SliceRange>, _: &Operands<'_>, out: &mut String) {
        let ranges: Vec<String> = value.iter().map(SliceRange::to_string).collect();
        let _ = write!(out, "[{}]", ranges.join(", "));
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<Vec<SliceRange>, ParseError> {
        p.match_bracket_list("slice", |p| {
            let start = p.match_usize("the start of a slice")?;
            p.match_token(TokenKind::Colon, "`:` after the start of a slice")?;
            let stop = p.match_usize("the stop of a slice")?;
            let step_expected = "`:` and the step after the stop of a slice";
            p.match_token(TokenKind::Colon, step_expected)?;
            let step = p.match_usize("the step of a slice")?;
            Ok(SliceRange { start, stop, step })
        })
    }

    fn finish(
        read: Option<Vec<SliceRange>>,
        results: &ResultTypes<'_>,
    ) -> Result<Vec<SliceRange>, ParseError> {
        results.given(read)
    }
}

/// `[start:stop, ...]`: a layout view's half-open ranges.
pub(crate) struct ViewRanges;

impl Syntax<Vec<(usize, usize)>> for ViewRanges {
    type Read = Vec<(usize, usize)>;

    fn write(value: &Vec<(usize, usize)>, _: &Operands<'_>, out: &mut String) {
        let ranges: Vec<String> = value.iter().map(|(s, e)| format!("{s}:{e}")).collect();
        let _ = write!(out, "[{}]", ranges.join(", "));
    }

    fn parse(
        p: &mut Parser<'_, '_>,
        _: &mut Vec<Value>,
    ) -> Result<Vec<(usize, usize)>, ParseError> {
        p.match_bracket_list("range", |p| {
            let start = p.match_usize("the start of a range")?;
            p.match_token(TokenKind::Colon, "`:` after the start of a range")?;
            let stop = p.match_usize("the stop of a range")?;
            Ok((start, stop))
        })
    }

    fn finish(
        read: Option<Vec<(usize, usize)>>,
        results: &ResultTypes<'_>,
    ) -> Result<Vec<(usize, usize)>, ParseError> {
        results.given(read)
    }
}

/// A constant written as a literal, of the result's dtype.
pub(crate) struct ResultValue;

impl Syntax<crate::Scalar> for ResultValue {
    type Read = Literal;

    fn write(value: &crate::Scalar, _: &Operands<'_>, out: &mut String) {
        let _ = write!(out, "{value}");
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<Literal, ParseError> {
        p.parse_literal()
    }

    fn finish(
        read: Option<Literal>,
        results: &ResultTypes<'_>,
    ) -> Result<crate::Scalar, ParseError> {
        let literal = results.given(read)?;
        literal.to_scalar(results.one()?.dtype())
    }
}

/// The result's shape, not written (`full`, `iota`).
pub(crate) struct ResultShape;

impl Syntax<Shape> for ResultShape {
    type Read = ();
    const WRITTEN: bool = false;

    fn write(_: &Shape, _: &Operands<'_>, _: &mut String) {}

    fn parse(_: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<(), ParseError> {
        Ok(())
    }

    fn finish(_: Option<()>, results: &ResultTypes<'_>) -> Result<Shape, ParseError> {
        results.tile_shape()
    }
}

/// The result's dtype, not written (`iota`).
pub(crate) struct ResultDType;

impl Syntax<DType> for ResultDType {
    type Read = ();
    const WRITTEN: bool = false;

    fn write(_: &DType, _: &Operands<'_>, _: &mut String) {}

    fn parse(_: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<(), ParseError> {
        Ok(())
    }

    fn finish(_: Option<()>, results: &ResultTypes<'_>) -> Result<DType, ParseError> {
        Ok(results.one()?.dtype())
    }
}

/// A masked load's padding: `zero`, `nan`, `posinf`, `neginf` or a
/// constant of the result's dtype.
pub(crate) struct PadValue;

/// A padding as the line holds it.
pub(crate) enum PaddingRead {
    /// One of the named paddings.
    Named(Padding),
    /// A constant, whose dtype is the result's.
    Value(Literal),
}

impl Syntax<Padding> for PadValue {
    type Read = PaddingRead;

    fn write(value: &Padding, _: &Operands<'_>, out: &mut String) {
        match value {
            Padding::Zero => out.push_str("zero"),
            Padding::Nan => out.push_str("nan"),
            Padding::PosInf => out.push_str("posinf"),
            Padding::NegInf => out.push_str("neginf"),
            Padding::Value(value) => {
                let _ = write!(out, "{value}");
            }
        }
    }

    fn parse(p: &mut Parser<'_, '_>, _: &mut Vec<Value>) -> Result<PaddingRead, ParseError> {
        let named = [
            ("zero", Padding::Zero),
            ("nan", Padding::Nan),
            ("posinf", Padding::PosInf),
            ("neginf", Padding::NegInf),
        ];
        match named.iter().find(|(word, _)| p.peek().is_keyword(word)) {
            Some(&(_, padding)) => {
                p.bump();
                Ok(PaddingRead::Named(padding))
            }
            None => Ok(PaddingRead::Value(p.parse_literal()?)),
        }
    }

    fn finish(read: Option<PaddingRead>, results: &ResultTypes<'_>) -> Result<Padding, ParseError> {
        match results.given(read)? {
            PaddingRead::Named(padding) => Ok(padding),
            PaddingRead::Value(literal) => {
                Ok(Padding::Value(literal.to_scalar(results.one()?.dtype())?))
            }
        }
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
        out.push_str(&super::ops::print_line(value, operands));
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
