//! `eval` is total and agrees with the typing rules: on random values of
//! every dtype it never panics, and it accepts exactly the op/dtype pairs
//! that `rules::infer` accepts (so a verified kernel never hits an
//! `EvalError`, and the constant folder never has to guess).

use rand::{rngs::SmallRng, Rng, SeedableRng};
use tile_ir::eval::{binary, canonical_nan, cast, compare, fma, select, unary};
use tile_ir::{rules, BinaryOp, CmpPred, DType, OpKind, Scalar, Type, UnaryOp};

fn accepted(kind: OpKind, dtype: DType, arity: usize) -> bool {
    let ty = Type::Scalar(dtype);
    let operands = vec![&ty; arity];
    rules::infer(&kind, &operands).is_ok()
}

fn random(rng: &mut SmallRng, dtype: DType) -> Scalar {
    // Mix raw bit patterns (NaNs, infinities, subnormals) with small values.
    if rng.gen_bool(0.5) {
        Scalar::from_bits(dtype, rng.gen())
    } else {
        cast(Scalar::I32(rng.gen_range(-70..70)), dtype)
    }
}

#[test]
fn unary_ops_accept_exactly_the_typed_dtypes() {
    let mut rng = SmallRng::seed_from_u64(80);
    for &op in UnaryOp::ALL {
        for dtype in DType::ALL {
            let typed = accepted(OpKind::Unary(op), dtype, 1);
            for _ in 0..200 {
                let x = random(&mut rng, dtype);
                let result = unary(op, x);
                assert_eq!(result.is_ok(), typed, "{op} {x:?}");
                if let Ok(r) = result {
                    assert_eq!(r.dtype(), dtype);
                    if r.is_nan() {
                        assert_eq!(Some(r), canonical_nan(dtype), "{op} {x:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn binary_ops_accept_exactly_the_typed_dtypes() {
    let mut rng = SmallRng::seed_from_u64(81);
    for &op in BinaryOp::ALL {
        for dtype in DType::ALL {
            let typed = accepted(OpKind::Binary(op), dtype, 2);
            for _ in 0..200 {
                let (a, b) = (random(&mut rng, dtype), random(&mut rng, dtype));
                let result = binary(op, a, b);
                assert_eq!(result.is_ok(), typed, "{a:?} {op} {b:?}");
                if let Ok(r) = result {
                    assert_eq!(r.dtype(), dtype);
                    if r.is_nan() && !matches!(op, BinaryOp::Min | BinaryOp::Max) {
                        assert_eq!(Some(r), canonical_nan(dtype), "{a:?} {op} {b:?}");
                    }
                }
            }
            // Operands of two dtypes are always rejected.
            let other = if dtype == DType::I32 {
                DType::I64
            } else {
                DType::I32
            };
            assert!(binary(op, Scalar::zero(dtype), Scalar::zero(other)).is_err());
        }
    }
}

#[test]
fn comparisons_fma_and_select_accept_exactly_the_typed_dtypes() {
    let mut rng = SmallRng::seed_from_u64(82);
    for dtype in DType::ALL {
        for &pred in CmpPred::ALL {
            let typed = accepted(OpKind::Cmp(pred), dtype, 2);
            let (a, b) = (random(&mut rng, dtype), random(&mut rng, dtype));
            assert_eq!(compare(pred, a, b).is_ok(), typed, "{pred} {dtype}");
        }
        let typed = accepted(OpKind::Fma, dtype, 3);
        for _ in 0..200 {
            let (a, b, c) = (
                random(&mut rng, dtype),
                random(&mut rng, dtype),
                random(&mut rng, dtype),
            );
            assert_eq!(fma(a, b, c).is_ok(), typed, "fma {dtype}");
        }
        let (a, b) = (random(&mut rng, dtype), random(&mut rng, dtype));
        assert_eq!(select(Scalar::Bool(true), a, b), Ok(a));
        assert_eq!(select(Scalar::Bool(false), a, b), Ok(b));
    }
}
