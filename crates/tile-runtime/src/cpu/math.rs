//! The math table's functions: the oracle's own f64 functions (NaNs
//! canonical, as `tile_ir::eval` returns them), which
//! [`super::HostLibrary::load`] writes into each loaded kernel's table
//! (`tile_abi::host::MathTable`), so compiled code computes what the
//! interpreter computes, bit for bit.

use tile_abi::host::MathTable;
use tile_ir::{eval, BinaryOp, Scalar, UnaryOp};

/// The table: the oracle's f64 values of every math-library function.
pub(crate) const MATH_TABLE: MathTable = MathTable { unary, binary };

/// The oracle's f64 value of the function in `slot` of [`UnaryOp::MATH`]
/// at `x` (NaN for a slot outside it, which compiled code never passes).
extern "C" fn unary(slot: u32, x: f64) -> f64 {
    usize::try_from(slot)
        .ok()
        .and_then(|i| UnaryOp::MATH.get(i))
        .and_then(|&op| eval::unary(op, Scalar::F64(x)).ok())
        .map_or(f64::NAN, |v| v.to_f64())
}

/// The oracle's f64 value of the function in `slot` of [`BinaryOp::MATH`]
/// at `(x, y)` (NaN for a slot outside it).
extern "C" fn binary(slot: u32, x: f64, y: f64) -> f64 {
    usize::try_from(slot)
        .ok()
        .and_then(|i| BinaryOp::MATH.get(i))
        .and_then(|&op| eval::binary(op, Scalar::F64(x), Scalar::F64(y)).ok())
        .map_or(f64::NAN, |v| v.to_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_slot_computes_its_op() {
        for (slot, &op) in UnaryOp::MATH.iter().enumerate() {
            for x in [-3.5, -0.25, 0.0, 0.5, 1.0, 7.25] {
                let want = eval::unary(op, Scalar::F64(x)).expect("math op").to_f64();
                let got = (MATH_TABLE.unary)(slot as u32, x);
                assert!(
                    got.to_bits() == want.to_bits(),
                    "{}({x}) = {got} but the oracle says {want}",
                    op.name()
                );
            }
        }
        for (slot, &op) in BinaryOp::MATH.iter().enumerate() {
            for (x, y) in [(2.0, 10.0), (-1.5, 0.5), (0.0, -0.0), (3.0, 4.0)] {
                let want = eval::binary(op, Scalar::F64(x), Scalar::F64(y))
                    .expect("math op")
                    .to_f64();
                let got = (MATH_TABLE.binary)(slot as u32, x, y);
                assert!(
                    got.to_bits() == want.to_bits(),
                    "{}({x}, {y}) = {got} but the oracle says {want}",
                    op.name()
                );
            }
        }
        assert_eq!((MATH_TABLE.unary)(0, 0.0), 1.0);
        assert_eq!((MATH_TABLE.binary)(0, 2.0, 10.0), 1024.0);
        assert!((MATH_TABLE.unary)(UnaryOp::MATH.len() as u32, 1.0).is_nan());
    }
}
