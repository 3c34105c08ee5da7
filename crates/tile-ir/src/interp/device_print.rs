//! `print`: the lines of one program, handed to the run's sink.

use super::value::RtValue;
use super::Fault;
use crate::assertion::format;
use crate::device_print::Printed;
use crate::scalar::Scalar;

/// Runs `print "message"` on its operands for `program`: one line, or one
/// per element of the operands' tiles in row-major order.
pub(super) fn print(
    message: &str,
    operands: &[RtValue],
    program: [u32; 3],
    sink: &mut dyn FnMut(Printed),
) -> Result<(), Fault> {
    let shape = operands.iter().find_map(|v| match v {
        RtValue::Tile(t) => Some(t.shape.clone()),
        _ => None,
    });
    let count = shape.as_ref().map_or(1, |s| s.iter().product());
    for element in 0..count {
        let values =
            operands
                .iter()
                .map(|v| match v {
                    RtValue::Scalar(s) => Ok(*s),
                    RtValue::Tile(t) => t.data.get(element).copied().ok_or_else(|| {
                        Fault::Type("the printed tiles have different shapes".into())
                    }),
                    other => Err(Fault::Type(format!(
                        "a print formats scalars and tiles, found {}",
                        other.describe()
                    ))),
                })
                .collect::<Result<Vec<Scalar>, Fault>>()?;
        sink(Printed {
            program,
            element: shape
                .as_ref()
                .map(|s| super::value::Tile::unravel(element, s)),
            text: format(message, &values),
        });
    }
    Ok(())
}
