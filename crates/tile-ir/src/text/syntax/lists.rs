//! Attributes written as bracketed lists: integers named by what they
//! count, shapes, and the ranges of `slice` and `lview_slice`.

use super::{Operands, ResultTypes, Syntax};
use crate::function::Value;
use crate::ops::SliceRange;
use crate::text::error::ParseError;
use crate::text::lexer::TokenKind;
use crate::text::parser::Parser;
use crate::types::Shape;
use std::fmt::Write;
use std::marker::PhantomData;

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
