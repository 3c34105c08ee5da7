//! Constants: how a literal is written, and the [`Scalar`] it denotes once
//! the dtype (taken from the op's result type) is known.
//!
//! Integer dtypes take integer literals in range. Float dtypes take integer
//! or float literals, `nan`, `inf` and `-inf`; a finite literal beyond the
//! dtype's largest finite value is an error (so are `inf` for `f8e4m3` and
//! the MX formats, which have no infinity, `nan` for FP4 and FP6, which have
//! no NaN, and a negative `f8e8m0`). `bool` takes `true` and `false`.

use super::error::ParseError;
use super::lexer::TokenKind;
use super::parser::Parser;
use crate::dtype::DType;
use crate::eval::round_f64;
use crate::f8::F8E5M2;
use crate::scalar::Scalar;

/// A constant as written, before its dtype is known.
#[derive(Clone, Debug)]
pub(crate) struct Literal {
    kind: LiteralKind,
    /// The literal's text, with its sign.
    text: String,
    line: usize,
    column: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum LiteralKind {
    Int,
    Float,
    Bool(bool),
    Nan,
    Inf { negative: bool },
}

impl Parser<'_, '_> {
    /// Consumes a constant: `[-]digits`, `[-]1.5e3`, `[-]inf`, `nan`, `true`
    /// or `false`.
    pub fn parse_literal(&mut self) -> Result<Literal, ParseError> {
        let first = self.peek().clone();
        let negative = self.eat(&TokenKind::Minus);
        let token = self.peek().clone();
        let kind = match token.kind {
            TokenKind::Int => LiteralKind::Int,
            TokenKind::Float => LiteralKind::Float,
            TokenKind::Ident if token.text == "inf" => LiteralKind::Inf { negative },
            TokenKind::Ident if !negative && token.text == "nan" => LiteralKind::Nan,
            TokenKind::Ident if !negative && token.text == "true" => LiteralKind::Bool(true),
            TokenKind::Ident if !negative && token.text == "false" => LiteralKind::Bool(false),
            _ if negative => return Err(self.expected("a number or `inf` after `-`")),
            _ => return Err(self.expected("a constant")),
        };
        self.bump();
        Ok(Literal {
            kind,
            text: format!("{}{}", if negative { "-" } else { "" }, token.text),
            line: first.line,
            column: first.column,
        })
    }
}

/// The constant written as `text` (`[-]digits`, `[-]1.5e3`, `[-]inf`,
/// `nan`, `true` or `false`, as the printer writes a [`Scalar`]) as a
/// `dtype` value, or an error at `line` and `column`: the parse of a
/// constant for text forms built on this one.
pub fn parse_scalar(
    text: &str,
    dtype: DType,
    line: usize,
    column: usize,
) -> Result<Scalar, ParseError> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let kind = match body {
        "inf" => Some(LiteralKind::Inf { negative }),
        "nan" if !negative => Some(LiteralKind::Nan),
        "true" if !negative => Some(LiteralKind::Bool(true)),
        "false" if !negative => Some(LiteralKind::Bool(false)),
        b if digits(b) => Some(LiteralKind::Int),
        b if b.starts_with(|c: char| c.is_ascii_digit()) && b.parse::<f64>().is_ok() => {
            Some(LiteralKind::Float)
        }
        _ => None,
    };
    let literal = Literal {
        kind: kind.ok_or_else(|| ParseError {
            line,
            column,
            message: format!("expected a constant, found `{text}`"),
        })?,
        text: text.to_string(),
        line,
        column,
    };
    literal.to_scalar(dtype)
}

impl Literal {
    /// The value of this literal as a `dtype`, or an error at the literal
    /// when it is not a `dtype` value.
    pub fn to_scalar(&self, dtype: DType) -> Result<Scalar, ParseError> {
        let text = &self.text;
        let scalar = match (self.kind, dtype) {
            (LiteralKind::Bool(b), DType::Bool) => Some(Scalar::Bool(b)),
            (_, DType::Bool) => {
                return Err(self.error(format!(
                    "expected `true` or `false` for a bool constant, found `{text}`"
                )))
            }
            (LiteralKind::Bool(_), _) => {
                return Err(self.error(format!(
                    "expected a number for a {dtype} constant, found `{text}`"
                )))
            }
            (LiteralKind::Int, d) if d.is_int() => int_scalar(d, text),
            (_, d) if d.is_int() => {
                return Err(self.error(format!(
                    "expected an integer constant for {d}, found `{text}`"
                )))
            }
            (LiteralKind::Int | LiteralKind::Float, d) => finite_float_scalar(d, text),
            (LiteralKind::Nan, d) if d.is_mx() && d != DType::F8E8M0 => {
                return Err(self.error(format!("{d} has no NaN")))
            }
            (LiteralKind::Nan, d) => round_f64(f64::NAN, d),
            (LiteralKind::Inf { .. }, d) if !d.has_infinity() => {
                return Err(self.error(format!("{d} has no infinity")))
            }
            (LiteralKind::Inf { negative }, DType::F8E5M2) => {
                Some(Scalar::F8E5M2(F8E5M2::from_bits(if negative {
                    0xfc
                } else {
                    0x7c
                })))
            }
            (LiteralKind::Inf { negative }, d) => round_f64(
                if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                },
                d,
            ),
        };
        scalar.ok_or_else(|| self.error(format!("constant {text} is out of range for {dtype}")))
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }
}

/// The integer `text` as a `dtype`, or `None` when it does not fit.
fn int_scalar(dtype: DType, text: &str) -> Option<Scalar> {
    let value: i128 = text.parse().ok()?;
    let bits = dtype.bits();
    let (min, max) = if dtype.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if (min..=max).contains(&value) {
        Scalar::wrapping_from_i128(dtype, value)
    } else {
        None
    }
}

/// The finite number `text` rounded to the float `dtype`, or `None` when it
/// lies beyond the dtype's largest finite value.
fn finite_float_scalar(dtype: DType, text: &str) -> Option<Scalar> {
    // `f32` is parsed directly: going through `f64` could round twice.
    let scalar = match dtype {
        DType::F32 => Scalar::F32(text.parse().ok()?),
        _ => round_f64(text.parse().ok()?, dtype)?,
    };
    let fits = match dtype.max_finite() {
        // Narrow conversions saturate instead of overflowing to infinity, so
        // the range is checked on the literal itself.
        Some(max) if dtype.is_narrow_float() => {
            let value = text.parse::<f64>().ok()?;
            value.abs() <= max && (dtype != DType::F8E8M0 || value >= 0.0)
        }
        _ => scalar.to_f64().is_finite(),
    };
    fits.then_some(scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_fit_their_dtype_exactly() {
        assert_eq!(int_scalar(DType::I8, "-128"), Some(Scalar::I8(-128)));
        assert_eq!(int_scalar(DType::I8, "128"), None);
        assert_eq!(
            int_scalar(DType::U64, "18446744073709551615"),
            Some(Scalar::U64(u64::MAX))
        );
        assert_eq!(int_scalar(DType::U64, "18446744073709551616"), None);
        assert_eq!(int_scalar(DType::U16, "-0"), Some(Scalar::U16(0)));
        assert_eq!(int_scalar(DType::I64, &"9".repeat(60)), None);
    }

    #[test]
    fn floats_overflow_where_their_dtype_ends() {
        assert_eq!(
            finite_float_scalar(DType::F32, "3.4028235e38"),
            Some(Scalar::F32(f32::MAX))
        );
        assert_eq!(finite_float_scalar(DType::F32, "3.5e38"), None);
        assert!(finite_float_scalar(DType::F16, "65504").is_some());
        // Rounds up to the next binade, which f16 does not have.
        assert_eq!(finite_float_scalar(DType::F16, "65520"), None);
        assert!(finite_float_scalar(DType::F8E5M2, "57344").is_some());
        assert_eq!(finite_float_scalar(DType::F8E5M2, "57345"), None);
        assert_eq!(finite_float_scalar(DType::F8E4M3, "-449"), None);
        assert_eq!(finite_float_scalar(DType::F64, "1e309"), None);
    }
}
