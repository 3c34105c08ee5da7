//! The math table's functions: the oracle's own f64 functions, which
//! [`super::HostLibrary::load`] writes into each loaded kernel's table
//! (`tile_abi::host::MathTable`), so compiled code computes what the
//! interpreter computes, bit for bit.

use tile_abi::host::MathTable;
use tile_ir::{eval, BinaryOp, Scalar, UnaryOp};

/// The table's functions: the oracle's f64 values.
pub(crate) const MATH_TABLE: MathTable = MathTable {
    unary: [exp, exp2, log, log2, sin, cos, tanh, erf],
    pow,
};

/// The oracle's f64 value of `op` at `x`.
fn oracle(op: UnaryOp, x: f64) -> f64 {
    match eval::unary(op, Scalar::F64(x)) {
        Ok(Scalar::F64(v)) => v,
        // `eval` defines every math op on f64 and returns an f64.
        _ => f64::NAN,
    }
}

/// The oracle's f64 `pow`.
extern "C" fn pow(x: f64, y: f64) -> f64 {
    match eval::binary(BinaryOp::Pow, Scalar::F64(x), Scalar::F64(y)) {
        Ok(Scalar::F64(v)) => v,
        // `eval` defines `pow` on f64 and returns an f64.
        _ => f64::NAN,
    }
}

/// Defines each `name` as the C-ABI function of the oracle's `op`.
macro_rules! oracle_functions {
    ($($name:ident => $op:ident),* $(,)?) => {
        $(
            extern "C" fn $name(x: f64) -> f64 {
                oracle(UnaryOp::$op, x)
            }
        )*
    };
}

oracle_functions! {
    exp => Exp,
    exp2 => Exp2,
    log => Log,
    log2 => Log2,
    sin => Sin,
    cos => Cos,
    tanh => Tanh,
    erf => Erf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_abi::host::MATH_OPS;

    #[test]
    fn each_table_slot_computes_its_op() {
        for (op, f) in MATH_OPS.into_iter().zip(MATH_TABLE.unary) {
            for x in [-3.5, -0.25, 0.0, 0.5, 1.0, 7.25] {
                let want = oracle(op, x);
                assert!(
                    f(x).to_bits() == want.to_bits(),
                    "{}({x}) = {} but the oracle says {want}",
                    op.name(),
                    f(x)
                );
            }
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(log2(8.0), 3.0);
        assert_eq!((MATH_TABLE.pow)(2.0, 10.0), 1024.0);
        assert!((MATH_TABLE.pow)(-8.0, 1.0 / 3.0).is_nan());
        assert_eq!((MATH_TABLE.pow)(f64::NAN, 0.0), 1.0);
    }
}
