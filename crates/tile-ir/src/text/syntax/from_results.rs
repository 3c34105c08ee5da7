//! Attributes the result type gives, whole or in part: a constant of the
//! result's dtype, `full`'s and `iota`'s shape and dtype, a masked load's
//! padding.

use super::{Operands, ResultTypes, Syntax};
use crate::function::Value;
use crate::ops::Padding;
use crate::text::error::ParseError;
use crate::text::literal::Literal;
use crate::text::parser::Parser;
use crate::types::Shape;
use crate::DType;
use std::fmt::Write;

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
