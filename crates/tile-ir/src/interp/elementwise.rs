//! Tile creation and elementwise ops, applied element by element through
//! [`crate::eval`].

use super::value::{numel, RtValue, Tile};
use super::Fault;
use crate::dtype::DType;
use crate::eval;
use crate::ops::OpKind;
use crate::scalar::Scalar;
use crate::types::Shape;

/// Runs an op of the elementwise family: `full`, `iota`, or an elementwise
/// op on scalars or tiles.
pub(super) fn run(kind: &OpKind, operands: &[RtValue]) -> Result<RtValue, Fault> {
    match kind {
        OpKind::Full { value, shape } => full(*value, shape),
        OpKind::Iota { shape, dtype } => iota(shape, *dtype),
        _ => elementwise(kind, operands),
    }
}

/// `full`: every element is `value`.
fn full(value: Scalar, shape: &Shape) -> Result<RtValue, Fault> {
    Ok(RtValue::Tile(Tile {
        shape: shape.dims().to_vec(),
        dtype: value.dtype(),
        data: vec![value; numel(shape.dims())?],
    }))
}

/// `iota`: each element is its row-major linear index, converted to `dtype`
/// by [`eval::cast`] (so it wraps in a small integer dtype and rounds in a
/// small float dtype).
fn iota(shape: &Shape, dtype: DType) -> Result<RtValue, Fault> {
    let data = (0..numel(shape.dims())?)
        .map(|i| eval::cast(Scalar::U64(i as u64), dtype))
        .collect();
    Ok(RtValue::Tile(Tile {
        shape: shape.dims().to_vec(),
        dtype,
        data,
    }))
}

/// `unary`, `binary`, `cmp`, `select`, `fma`, `cast` and `bitcast` on scalars, or on
/// tiles of one shape, element by element.
fn elementwise(kind: &OpKind, operands: &[RtValue]) -> Result<RtValue, Fault> {
    let f = |x: &[Scalar]| -> Result<Scalar, Fault> {
        Ok(match (kind, x) {
            (OpKind::Unary(op), [a]) => eval::unary(*op, *a)?,
            (OpKind::Binary(op), [a, b]) => eval::binary(*op, *a, *b)?,
            (OpKind::Cmp(pred), [a, b]) => Scalar::Bool(eval::compare(*pred, *a, *b)?),
            (OpKind::Select, [c, a, b]) => eval::select(*c, *a, *b)?,
            (OpKind::Fma, [a, b, c]) => eval::fma(*a, *b, *c)?,
            (OpKind::Cast { to }, [a]) => eval::cast(*a, *to),
            (OpKind::Bitcast { to }, [a]) => eval::bitcast(*a, *to)?,
            _ => {
                return Err(Fault::Type(format!(
                    "`{}` does not take {} operand(s)",
                    kind.name(),
                    x.len()
                )))
            }
        })
    };
    if operands.iter().all(|v| matches!(v, RtValue::Scalar(_))) {
        let scalars = operands
            .iter()
            .map(|v| v.scalar("an operand"))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(RtValue::Scalar(f(&scalars)?));
    }
    let tiles = operands
        .iter()
        .map(|v| v.tile("every operand (with a tile operand)"))
        .collect::<Result<Vec<_>, _>>()?;
    let shape = &tiles[0].shape;
    if let Some(other) = tiles.iter().find(|t| t.shape != *shape) {
        return Err(Fault::Type(format!(
            "operands of shapes {shape:?} and {:?} (broadcasts are explicit)",
            other.shape
        )));
    }
    let mut row = Vec::with_capacity(tiles.len());
    let data = (0..tiles[0].data.len())
        .map(|i| {
            row.clear();
            row.extend(tiles.iter().map(|t| t.data[i]));
            f(&row)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let dtype = match data.first() {
        Some(s) => s.dtype(),
        None => tiles[0].dtype,
    };
    Ok(RtValue::Tile(Tile {
        shape: shape.clone(),
        dtype,
        data,
    }))
}
