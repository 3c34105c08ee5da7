//! `assert`: the program fails where its condition is false; `multiple_of`
//! is the assertion that its operand is a multiple of its divisor.

use super::value::{RtValue, Tile};
use super::Fault;
use crate::assertion;
use crate::scalar::Scalar;

/// Runs `assert id "message"` on its operands: the condition (a `bool`
/// scalar or tile), then the values the message formats.
pub(super) fn assert(id: u32, message: &str, operands: &[RtValue]) -> Result<(), Fault> {
    let Some((cond, values)) = operands.split_first() else {
        return Err(Fault::Type("an assert needs a condition".into()));
    };
    let element = match cond {
        RtValue::Scalar(Scalar::Bool(true)) => return Ok(()),
        RtValue::Scalar(Scalar::Bool(false)) => None,
        RtValue::Tile(tile) => match tile.data.iter().position(|v| *v != Scalar::Bool(true)) {
            None => return Ok(()),
            Some(at) => Some(Tile::unravel(at, &tile.shape)),
        },
        other => {
            return Err(Fault::Type(format!(
                "the condition of an assert must be bool, found {}",
                other.describe()
            )))
        }
    };
    let values = values
        .iter()
        .map(|v| v.scalar("a formatted value"))
        .collect::<Result<Vec<_>, _>>()?;
    Err(Fault::Assert {
        id,
        message: assertion::format(message, &values),
        element,
    })
}

/// Runs `multiple_of id divisor %x`: `x` where it is a multiple of
/// `divisor`, else the failure of assertion `id`.
pub(super) fn multiple_of(id: u32, divisor: u32, operands: &[RtValue]) -> Result<RtValue, Fault> {
    let [x] = operands else {
        return Err(Fault::Type("multiple_of takes one operand".into()));
    };
    let value = x.scalar("the operand of multiple_of")?;
    let Some(n) = value.to_i128() else {
        return Err(Fault::Type(format!(
            "the operand of multiple_of must be an integer, found {}",
            x.describe()
        )));
    };
    if n % i128::from(divisor.max(1)) == 0 {
        return Ok(x.clone());
    }
    Err(Fault::Assert {
        id,
        message: assertion::format(&assertion::multiple_of_message(divisor), &[value]),
        element: None,
    })
}
