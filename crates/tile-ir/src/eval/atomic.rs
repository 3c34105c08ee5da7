//! The value an atomic update writes.

use super::{binary, EvalError};
use crate::ops::{AtomicOp, BinaryOp};
use crate::scalar::Scalar;

/// The value `op` writes over `old`: `add`, `max`, `min`, `and`, `or` and
/// `xor` as the elementwise op of that name ([`binary`]: wrapping integers,
/// floats rounded once, NaN-propagating `max`/`min`), `xchg` the value,
/// `cas` the value if `old` equals `cmp` bit for bit and `old` otherwise.
/// `cmp` is required for `cas` and ignored by the others.
pub fn atomic(
    op: AtomicOp,
    old: Scalar,
    value: Scalar,
    cmp: Option<Scalar>,
) -> Result<Scalar, EvalError> {
    if !op.supports(old.dtype()) {
        return Err(EvalError::Unsupported {
            op: op.name(),
            dtype: old.dtype(),
        });
    }
    let elementwise = |b: BinaryOp| binary(b, old, value);
    match op {
        AtomicOp::Add => elementwise(BinaryOp::Add),
        AtomicOp::Max => elementwise(BinaryOp::Max),
        AtomicOp::Min => elementwise(BinaryOp::Min),
        AtomicOp::And => elementwise(BinaryOp::And),
        AtomicOp::Or => elementwise(BinaryOp::Or),
        AtomicOp::Xor => elementwise(BinaryOp::Xor),
        AtomicOp::Xchg | AtomicOp::Cas => {
            let compared = if op == AtomicOp::Cas {
                let cmp = cmp.ok_or(EvalError::Unsupported {
                    op: "cas without a compared value",
                    dtype: old.dtype(),
                })?;
                super::same_dtype(op.name(), &[old.dtype(), value.dtype(), cmp.dtype()])?;
                Some(cmp)
            } else {
                super::same_dtype(op.name(), &[old.dtype(), value.dtype()])?;
                None
            };
            let swap = compared.is_none_or(|cmp| cmp.to_bits() == old.to_bits());
            Ok(if swap { value } else { old })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn updates_follow_the_elementwise_ops_and_cas_compares_bits() {
        let f = Scalar::F32;
        assert_eq!(atomic(AtomicOp::Add, f(1.5), f(2.0), None), Ok(f(3.5)));
        assert_eq!(
            atomic(AtomicOp::Add, Scalar::I32(i32::MAX), Scalar::I32(1), None),
            Ok(Scalar::I32(i32::MIN))
        );
        assert!(atomic(AtomicOp::Max, f(1.0), f(f32::NAN), None)
            .unwrap()
            .is_nan());
        assert_eq!(atomic(AtomicOp::Min, f(-0.0), f(0.0), None), Ok(f(-0.0)));
        assert_eq!(
            atomic(
                AtomicOp::Xor,
                Scalar::U32(0b1100),
                Scalar::U32(0b1010),
                None
            ),
            Ok(Scalar::U32(0b0110))
        );
        assert_eq!(atomic(AtomicOp::Xchg, f(1.0), f(7.0), None), Ok(f(7.0)));
        // `cas` compares bits: -0 is not +0, and a NaN matches itself.
        assert_eq!(
            atomic(AtomicOp::Cas, f(-0.0), f(5.0), Some(f(0.0))),
            Ok(f(-0.0))
        );
        assert_eq!(
            atomic(AtomicOp::Cas, f(2.0), f(5.0), Some(f(2.0))),
            Ok(f(5.0))
        );
        let nan = f(f32::NAN);
        assert_eq!(atomic(AtomicOp::Cas, nan, f(5.0), Some(nan)), Ok(f(5.0)));
    }

    #[test]
    fn unsupported_dtypes_and_a_missing_compare_are_errors() {
        let bits = |x: u16| Scalar::from_bits(DType::F16, u64::from(x));
        assert!(atomic(AtomicOp::Add, bits(0x3c00), bits(0x3c00), None).is_ok());
        assert!(atomic(AtomicOp::Max, bits(0x3c00), bits(0x3c00), None).is_err());
        assert!(atomic(AtomicOp::And, Scalar::F32(1.0), Scalar::F32(1.0), None).is_err());
        assert!(atomic(AtomicOp::Add, Scalar::I8(1), Scalar::I8(1), None).is_err());
        assert!(atomic(AtomicOp::Cas, Scalar::I32(1), Scalar::I32(2), None).is_err());
    }
}
