//! How each kind of attribute of the op table is written and read: a
//! number, a parameter's name, an allocation `@s<n>`, an instruction's name,
//! an optional suffix. The table names a syntax per attribute field
//! (`BlockId { axis: u8 as Decimal }`); the printer and the parser reach
//! attributes only through these.

use super::Parser;
use crate::program::{CheckKind, DescriptorSwizzle, LdMatrix, MmaKind, Param, SharedId};
use crate::program::{ShuffleMode, Tcgen05Kind, WgmmaKind};
use std::fmt::Write;
use tile_hw::wgmma::Major;
use tile_ir::text::{parse_scalar, ParseError, TokenKind};
use tile_ir::{AtomicOp, BinaryOp, CmpPred, DType, MemOrder, MemScope, Scalar, UnaryOp};

/// The text form of attributes of type `T`.
pub(in crate::program) trait Syntax<T> {
    /// Writes `value`; `params` name the kernel's parameters.
    fn write(value: &T, params: &[Param], out: &mut String);

    /// Reads a value where the parser stands.
    fn parse(p: &mut Parser<'_, '_>) -> Result<T, ParseError>;

    /// The value as a number of operands, for a format's `%list*$name`.
    fn count(_value: &T) -> Option<usize> {
        None
    }
}

/// A decimal number (an axis, a width, a count of columns).
pub(in crate::program) struct Decimal;

impl<T> Syntax<T> for Decimal
where
    T: Copy + std::fmt::Display + std::str::FromStr + TryInto<usize>,
{
    fn write(value: &T, _: &[Param], out: &mut String) {
        let _ = write!(out, "{value}");
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<T, ParseError> {
        p.match_int("a number")
    }

    fn count(value: &T) -> Option<usize> {
        (*value).try_into().ok()
    }
}

/// A kernel parameter, by name.
pub(in crate::program) struct ParamName;

impl Syntax<usize> for ParamName {
    fn write(value: &usize, params: &[Param], out: &mut String) {
        out.push_str(params.get(*value).map_or("?", |p| p.name.as_str()));
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<usize, ParseError> {
        p.match_param()
    }
}

/// A shared allocation: `@s<n>`.
pub(in crate::program) struct Shared;

impl Syntax<SharedId> for Shared {
    fn write(value: &SharedId, _: &[Param], out: &mut String) {
        let _ = write!(out, "@s{}", value.index());
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<SharedId, ParseError> {
        p.match_shared()
    }
}

/// A dtype's name.
pub(in crate::program) struct DTypeName;

impl Syntax<DType> for DTypeName {
    fn write(value: &DType, _: &[Param], out: &mut String) {
        out.push_str(value.name());
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<DType, ParseError> {
        p.match_dtype()
    }
}

/// A string in quotes, with Rust's escapes.
pub(in crate::program) struct Quoted;

impl Syntax<String> for Quoted {
    fn write(value: &String, _: &[Param], out: &mut String) {
        let _ = write!(out, "{value:?}");
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<String, ParseError> {
        let token = p.match_token(TokenKind::Str, "a string in quotes")?;
        token
            .string_value()
            .ok_or_else(|| Parser::error_at(&token, "a malformed escape in a string"))
    }
}

/// A constant's literal, whose dtype is read from the `: <dtype>` after it.
pub(in crate::program) struct Literal;

impl Syntax<Scalar> for Literal {
    fn write(value: &Scalar, _: &[Param], out: &mut String) {
        let _ = write!(out, "{value}");
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<Scalar, ParseError> {
        let first = p.peek().clone();
        let mut text = String::new();
        if p.eat(&TokenKind::Minus) {
            text.push('-');
        }
        let token = p.bump();
        if !matches!(
            token.kind,
            TokenKind::Int | TokenKind::Float | TokenKind::Ident
        ) {
            return Err(Parser::error_at(
                &token,
                format!("expected a constant, found {}", token.describe()),
            ));
        }
        text.push_str(token.text);
        // The dtype follows; read it ahead without consuming it.
        let (colon, dtype) = (p.peek().clone(), p.tokens.get(p.pos + 1).cloned());
        let dtype = match (colon.kind, dtype) {
            (TokenKind::Colon, Some(d)) => Parser::dtype_of(&d)?,
            _ => return Err(p.expected("`:` and the constant's dtype")),
        };
        parse_scalar(&text, dtype, first.line, first.column)
    }
}

/// A value of an enumeration written by its name.
pub(in crate::program) struct Name;

/// An enumeration written by name: what the parser calls it in errors.
pub(in crate::program) trait Named: Sized + Copy {
    /// What a value is, in "unknown <what> `x`".
    const WHAT: &'static str;
    /// The value's name.
    fn text(self) -> &'static str;
    /// The value named `name`.
    fn named(name: &str) -> Option<Self>;
}

macro_rules! named {
    ($($ty:ty => $what:literal),* $(,)?) => {$(
        impl Named for $ty {
            const WHAT: &'static str = $what;
            fn text(self) -> &'static str {
                self.name()
            }
            fn named(name: &str) -> Option<Self> {
                <$ty>::from_name(name)
            }
        }
    )*};
}

named!(
    UnaryOp => "op",
    BinaryOp => "op",
    CmpPred => "comparison",
    AtomicOp => "atomic update",
    MemOrder => "memory order",
    MemScope => "memory scope",
    ShuffleMode => "shuffle mode",
    CheckKind => "check",
);

impl<T: Named> Syntax<T> for Name {
    fn write(value: &T, _: &[Param], out: &mut String) {
        out.push_str(value.text());
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<T, ParseError> {
        let word = p.match_ident(T::WHAT)?;
        T::named(word.text)
            .ok_or_else(|| Parser::error_at(&word, format!("unknown {} `{}`", T::WHAT, word.text)))
    }
}

/// A global access's width: `v<w>`.
pub(in crate::program) struct VectorWidth;

impl Syntax<u8> for VectorWidth {
    fn write(value: &u8, _: &[Param], out: &mut String) {
        let _ = write!(out, "v{value}");
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<u8, ParseError> {
        let token = p.match_ident("`v<width>`")?;
        let width = token.text.strip_prefix('v').and_then(|w| w.parse().ok());
        width.ok_or_else(|| {
            let message = format!("expected `v<width>`, found `{}`", token.text);
            Parser::error_at(&token, message)
        })
    }

    fn count(value: &u8) -> Option<usize> {
        Some(usize::from(*value))
    }
}

/// A shared access's width: nothing for one element, `.v<w>` for more.
pub(in crate::program) struct SharedWidth;

impl Syntax<u8> for SharedWidth {
    fn write(value: &u8, params: &[Param], out: &mut String) {
        if *value != 1 {
            out.push('.');
            VectorWidth::write(value, params, out);
        }
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<u8, ParseError> {
        if p.eat(&TokenKind::Dot) {
            VectorWidth::parse(p)
        } else {
            Ok(1)
        }
    }

    fn count(value: &u8) -> Option<usize> {
        Some(usize::from(*value))
    }
}

/// A count after an `x`: `tmem.load`'s columns.
pub(in crate::program) struct Times;

impl Syntax<u16> for Times {
    fn write(value: &u16, _: &[Param], out: &mut String) {
        let _ = write!(out, "x{value}");
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<u16, ParseError> {
        let shape = p.match_ident("`x` and the columns")?;
        let columns = shape.text.strip_prefix('x').and_then(|n| n.parse().ok());
        columns
            .ok_or_else(|| Parser::error_at(&shape, format!("unknown load shape `{}`", shape.text)))
    }
}

/// `ldmatrix`'s matrices and transposition: `x4`, `x2.trans`.
pub(in crate::program) struct Matrices;

impl Syntax<LdMatrix> for Matrices {
    fn write(value: &LdMatrix, _: &[Param], out: &mut String) {
        let trans = if value.trans { ".trans" } else { "" };
        let _ = write!(out, "x{}{trans}", value.count);
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<LdMatrix, ParseError> {
        let count = p.match_ident("`x1`, `x2` or `x4`")?;
        let count = match count.text {
            "x1" => 1,
            "x2" => 2,
            "x4" => 4,
            other => {
                let message = format!("unknown matrix count `{other}`");
                return Err(Parser::error_at(&count, message));
            }
        };
        let trans = p.peek_ident_after_dot() == Some("trans");
        if trans {
            p.bump();
            p.bump();
        }
        Ok(LdMatrix { count, trans })
    }
}

/// An `mma` instruction's name (`m16n8k16.f16`, `wmma12.16x16x16.e4m3`):
/// the tokens that touch, read as one word.
pub(in crate::program) struct MmaName;

impl Syntax<MmaKind> for MmaName {
    fn write(value: &MmaKind, _: &[Param], out: &mut String) {
        out.push_str(&value.name());
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<MmaKind, ParseError> {
        let first = p.peek().clone();
        let mut name = String::new();
        let mut column = first.column;
        loop {
            let token = p.peek();
            let touches = token.line == first.line && token.column == column;
            if !touches || matches!(token.kind, TokenKind::Value | TokenKind::Newline) {
                break;
            }
            name.push_str(token.text);
            column += token.text.chars().count();
            p.bump();
        }
        MmaKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| Parser::error_at(&first, format!("unknown mma `{name}`")))
    }
}

/// A descriptor product's name: `m<M>n<N>k16.<dtype>`, then `.bk` for a
/// K-major B. Reads the shape, the dtype and the major; `M` is checked by
/// the caller.
fn descriptor_kind(p: &mut Parser<'_, '_>, m: usize) -> Result<(usize, DType, Major), ParseError> {
    let shape = p.match_ident("an instruction shape")?;
    p.match_token(TokenKind::Dot, "`.` and the operands' dtype")?;
    let dtype = p.match_dtype()?;
    // `K` is 32 bytes of the operands' elements.
    let k = format!("k{}", 32 / dtype.size_bytes().max(1));
    let n = shape
        .text
        .strip_prefix(&format!("m{m}n"))
        .and_then(|s| s.strip_suffix(k.as_str()))
        .and_then(|n| n.parse().ok());
    let Some(n) = n else {
        let message = format!("unknown {} `{}.{dtype}`", p.op, shape.text);
        return Err(Parser::error_at(&shape, message));
    };
    let b_major = if p.peek_ident_after_dot() == Some("bk") {
        p.bump();
        p.bump();
        Major::K
    } else {
        Major::Mn
    };
    Ok((n, dtype, b_major))
}

/// A `wgmma`'s instruction: `m64n<N>k<K>.<dtype>[.bk]`.
pub(in crate::program) struct WgmmaName;

impl Syntax<WgmmaKind> for WgmmaName {
    fn write(value: &WgmmaKind, _: &[Param], out: &mut String) {
        out.push_str(&value.name());
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<WgmmaKind, ParseError> {
        let at = p.peek().clone();
        let (n, dtype, b_major) = descriptor_kind(p, 64)?;
        match WgmmaKind::new(dtype, n) {
            Some(kind) if kind.allows_b_major(b_major) => Ok(kind.with_b_major(b_major)),
            Some(kind) => {
                let message = format!("a wgmma of {dtype} reads B K-major only: `{}`", kind.name());
                Err(Parser::error_at(&at, message))
            }
            None => Err(Parser::error_at(
                &at,
                format!("unknown wgmma `m64n{n}.{dtype}`"),
            )),
        }
    }
}

/// A `tcgen05.mma`'s instruction: `m128n<N>k<K>.<dtype>[.bk]`.
pub(in crate::program) struct Tcgen05Name;

impl Syntax<Tcgen05Kind> for Tcgen05Name {
    fn write(value: &Tcgen05Kind, _: &[Param], out: &mut String) {
        out.push_str(&value.name());
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<Tcgen05Kind, ParseError> {
        let at = p.peek().clone();
        let (n, dtype, b_major) = descriptor_kind(p, 128)?;
        Tcgen05Kind::new(dtype, n, b_major).ok_or_else(|| {
            let message = format!("unknown tcgen05.mma `m128n{n}.{dtype}`");
            Parser::error_at(&at, message)
        })
    }
}

/// A descriptor operand's swizzle: nothing for rows of 128 bytes, `.sw64`
/// or `.sw32` for narrower ones.
pub(in crate::program) struct SwizzleSuffix;

impl Syntax<DescriptorSwizzle> for SwizzleSuffix {
    fn write(value: &DescriptorSwizzle, _: &[Param], out: &mut String) {
        match value.row_bytes() {
            Some(128) => {}
            bytes => {
                let _ = write!(out, ".sw{}", bytes.unwrap_or(0));
            }
        }
    }

    fn parse(p: &mut Parser<'_, '_>) -> Result<DescriptorSwizzle, ParseError> {
        if !p.eat(&TokenKind::Dot) {
            return Ok(DescriptorSwizzle::B128);
        }
        let word = p.match_ident("`bk`, `sw64` or `sw32`")?;
        let swizzle = word
            .text
            .strip_prefix("sw")
            .and_then(|bytes| bytes.parse().ok())
            .and_then(DescriptorSwizzle::for_rows);
        swizzle.ok_or_else(|| {
            let message = format!(
                "unknown {} suffix `{}`: `bk` (a K-major B), then `sw64` or `sw32`",
                p.op, word.text
            );
            Parser::error_at(&word, message)
        })
    }
}
