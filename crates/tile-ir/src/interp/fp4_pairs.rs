//! `unpack_fp4` and `pack_fp4`: FP4 (E2M1) values two to a byte, the
//! lower-indexed one of each pair in the low four bits.

use super::value::{RtValue, Tile};
use super::Fault;
use crate::dtype::DType;
use crate::ops::OpKind;
use crate::scalar::Scalar;

/// Runs `unpack_fp4` or `pack_fp4`.
pub(super) fn run(kind: &OpKind, operands: &[RtValue]) -> Result<RtValue, Fault> {
    let [x] = operands else {
        return Err(Fault::Type(format!(
            "`{}` takes one operand, found {}",
            kind.name(),
            operands.len()
        )));
    };
    let x = x.tile("the operand")?;
    let (axis, unpack) = match *kind {
        OpKind::UnpackFp4 { axis } => (axis, true),
        OpKind::PackFp4 { axis } => (axis, false),
        _ => {
            return Err(Fault::Type(format!(
                "`{}` is not an FP4 pair op",
                kind.name()
            )))
        }
    };
    let (from, to) = match unpack {
        true => (DType::U8, DType::F4E2M1),
        false => (DType::F4E2M1, DType::U8),
    };
    let extent = x.shape.get(axis).copied();
    let fits = x.dtype == from && extent.is_some_and(|n| unpack || n.is_multiple_of(2));
    if !fits {
        return Err(Fault::Type(format!(
            "`{}` along axis {axis} of a {} tile of shape {:?}",
            kind.name(),
            x.dtype,
            x.shape
        )));
    }
    let mut shape = x.shape.clone();
    shape[axis] = match unpack {
        true => shape[axis] * 2,
        false => shape[axis] / 2,
    };
    let mut index = vec![0; shape.len()];
    let out = Tile::build(shape, to, |out| {
        index.copy_from_slice(out);
        let bits = if unpack {
            index[axis] = out[axis] / 2;
            let byte = x.at(&index)?.to_bits();
            (byte >> (4 * (out[axis] % 2))) & 0xf
        } else {
            index[axis] = 2 * out[axis];
            let low = x.at(&index)?.to_bits() & 0xf;
            index[axis] += 1;
            let high = x.at(&index)?.to_bits() & 0xf;
            low | (high << 4)
        };
        Ok(Scalar::from_bits(to, bits))
    })?;
    Ok(RtValue::Tile(out))
}
