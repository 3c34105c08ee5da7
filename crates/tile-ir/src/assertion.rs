//! The messages of `assert` ops (`device_assert!` in kernels): their
//! placeholders, how a failure's values fill them, and how an assertion's
//! number leads back to its message.
//!
//! A message is text with one `{}` per value; `{{` and `}}` stand for
//! braces. Compiled code reports a failed assertion by its number and the
//! bits of its values; [`Assertion::report`] turns them into the message a
//! user reads.

use crate::function::Function;
use crate::ops::OpKind;
use crate::scalar::Scalar;
use crate::DType;

/// The most values an assertion's message formats (what the status record
/// of compiled code carries besides the assertion's number).
pub const MAX_VALUES: usize = 3;

/// One piece of a message: literal text, or the place of the next value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece<'m> {
    Text(&'m str),
    Brace(char),
    Value,
}

/// The pieces of `message`, or why it is not a message.
fn pieces(message: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = message;
    while let Some(at) = rest.find(['{', '}']) {
        if at > 0 {
            out.push(Piece::Text(&rest[..at]));
        }
        let tail = &rest[at..];
        if tail.starts_with("{{") {
            out.push(Piece::Brace('{'));
        } else if tail.starts_with("}}") {
            out.push(Piece::Brace('}'));
        } else if tail.starts_with("{}") {
            out.push(Piece::Value);
        } else if tail.starts_with('{') {
            return Err(
                "a message formats each value with `{}` only (no names, positions or format specs); write `{{` for a brace"
                    .to_string(),
            );
        } else {
            return Err("an unmatched `}` in the message; write `}}` for a brace".to_string());
        }
        rest = &tail[2..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

/// How many values `message` formats, or why it is not a message.
pub fn placeholders(message: &str) -> Result<usize, String> {
    Ok(pieces(message)?
        .iter()
        .filter(|p| **p == Piece::Value)
        .count())
}

/// `message` with its placeholders replaced by `values` in order (a
/// placeholder without a value stays `{}`; a malformed message is
/// returned as it is).
pub fn format(message: &str, values: &[Scalar]) -> String {
    let Ok(pieces) = pieces(message) else {
        return message.to_string();
    };
    let mut values = values.iter();
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Brace(c) => out.push(c),
            Piece::Value => match values.next() {
                Some(v) => out.push_str(&v.to_string()),
                None => out.push_str("{}"),
            },
        }
    }
    out
}

/// The message of a failed `multiple_of` by `divisor`, formatting the
/// value that is not a multiple of it.
pub fn multiple_of_message(divisor: u32) -> String {
    format!("`multiple_of`: {{}} is not a multiple of {divisor}")
}

/// An assertion of a function: what its `assert` or `multiple_of` ops of one number say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assertion {
    /// The message.
    pub message: String,
    /// The dtypes of the values it formats.
    pub dtypes: Vec<DType>,
}

impl Assertion {
    /// The assertion numbered `id` in `func`, if an `assert` or a
    /// `multiple_of` of `func` has that number.
    pub fn find(func: &Function, id: u32) -> Option<Assertion> {
        func.find_op(|op| match &op.kind {
            OpKind::Assert { id: n, message } if *n == id => Some(Assertion {
                message: message.clone(),
                dtypes: op
                    .operands
                    .iter()
                    .skip(1)
                    .map(|&v| func.ty(v).dtype())
                    .collect(),
            }),
            OpKind::MultipleOf { id: n, divisor } if *n == id => Some(Assertion {
                message: multiple_of_message(*divisor),
                dtypes: op.operands.iter().map(|&v| func.ty(v).dtype()).collect(),
            }),
            _ => None,
        })
    }

    /// The message with the values compiled code reported as bits (each the
    /// value's bit pattern in the low bits; extra bits are ignored).
    pub fn report(&self, bits: &[i64]) -> String {
        let values: Vec<Scalar> = self
            .dtypes
            .iter()
            .zip(bits)
            .map(|(&dtype, &b)| Scalar::from_bits(dtype, b as u64))
            .collect();
        format(&self.message, &values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_counted_and_braces_escaped() {
        assert_eq!(placeholders("x = {}, y = {}"), Ok(2));
        assert_eq!(placeholders("{{}} {}"), Ok(1));
        assert_eq!(placeholders("plain"), Ok(0));
        assert!(placeholders("{x}").unwrap_err().contains("`{}` only"));
        assert!(placeholders("{:?}").unwrap_err().contains("`{}` only"));
        assert!(placeholders("a } b").unwrap_err().contains("unmatched `}`"));
    }

    #[test]
    fn values_fill_the_placeholders_in_order() {
        let values = [Scalar::I32(-3), Scalar::F32(1.5), Scalar::Bool(true)];
        assert_eq!(
            format("i = {}, x = {}, ok = {} {{done}}", &values),
            "i = -3, x = 1.5, ok = true {done}"
        );
        assert_eq!(format("{} and {}", &values[..1]), "-3 and {}");
    }

    #[test]
    fn reported_bits_become_values_of_their_dtypes() {
        let a = Assertion {
            message: "u = {}, h = {}, b = {}".to_string(),
            dtypes: vec![DType::U8, DType::F16, DType::Bool],
        };
        // Sign-extended bits, as compiled code widens them.
        let h = i64::from(half::f16::from_f32(-2.5).to_bits());
        assert_eq!(a.report(&[-1, h, -1]), "u = 255, h = -2.5, b = true");
    }
}
