//! `assert`: the program fails where its condition is false.

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
