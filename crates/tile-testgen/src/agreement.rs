//! How results of a GPU path are judged against the interpreter's: what
//! the differential suite on the emulation target (tile-codegen's
//! `emulate_differential.rs`) and the GPU bundle's check of the generated
//! programs on a device (`examples/generated_check.rs`) share.
//!
//! The GPU targets compute with the exact math library (docs/backends.md):
//! its f64 results are within [`F64_ULPS`] ulps of the oracle's (erf's
//! bound; the others' are 2 to 4), and f32 and narrower results are the
//! oracle's except within a few f64 ulps of a rounding boundary, where they
//! may be an ulp off. Those are the bounds accepted: 8 ulps in an f64
//! result for each call of the math library with an f64 result in the
//! kernel (each call's error is carried by the next: `exp2(cos(x)) /
//! y · cosh(…)` is three calls), 1 in a narrower float, none in an
//! integer or a bool. Every
//! element of every tensor argument is compared, in logical order (the
//! elements a kernel never stores included: they must keep their input).

use std::fmt;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{DType, Function, OpKind, Scalar};

/// The ulps an f64 result of one call of the math library may differ by:
/// the largest bound of the f64 math library (docs/backends.md).
pub const F64_ULPS: u64 = 8;

/// The ulps an f64 result of `func` may differ by: [`F64_ULPS`] for each
/// call of the math library with an f64 result (at least one).
pub fn f64_ulps(func: &Function) -> u64 {
    let mut calls = 0;
    func.walk(&mut |id| {
        let op = func.op(id);
        let math = match op.kind {
            OpKind::Unary(u) => u.is_math(),
            OpKind::Binary(b) => b.is_math(),
            _ => false,
        };
        let f64_result = op
            .results
            .first()
            .is_some_and(|&r| func.ty(r).dtype() == DType::F64);
        calls += u64::from(math && f64_result);
    });
    F64_ULPS * calls.max(1)
}

/// The ulps a result of float `dtype` may differ by, `f64_ulps` for f64
/// (none for an integer or a bool).
pub fn ulps_allowed(dtype: DType, f64_ulps: u64) -> u64 {
    match dtype {
        DType::F64 => f64_ulps,
        d if d.is_float() => 1,
        _ => 0,
    }
}

/// The warps per program and the software-pipeline stages the GPU
/// differential suite compiles seed `seed` with: 1, 2 or 4 warps in turn,
/// and 2 stages with 2 warps, 3 otherwise (so both pipeline depths meet
/// every block size).
pub fn warps_and_stages(seed: u64) -> (u32, u32) {
    let warps = [1, 2, 4][(seed % 3) as usize];
    let stages = if warps == 2 { 2 } else { 3 };
    (warps, stages)
}

/// How a GPU path's arguments after a run compare with the interpreter's.
#[derive(Clone, Debug, PartialEq)]
pub enum Agreement {
    /// Every element has the interpreter's bits.
    Identical,
    /// Some float differs, within its bound ([`ulps_allowed`]).
    WithinBounds,
    /// The first element that differs by more, or an argument that does
    /// not even have the interpreter's shape.
    Apart(Difference),
}

/// Where a GPU path's result leaves the interpreter's by more than the
/// bounds.
#[derive(Clone, Debug, PartialEq)]
pub enum Difference {
    /// An element of a tensor argument.
    Element {
        /// The argument (the kernel's parameter position).
        arg: usize,
        /// The element's index, outermost axis first.
        index: Vec<usize>,
        /// Its dtype.
        dtype: DType,
        /// The GPU path's value.
        actual: Scalar,
        /// The interpreter's value.
        expected: Scalar,
        /// The ulps it may differ by.
        allowed: u64,
    },
    /// An argument whose kind, dtype or shape is not the interpreter's.
    Shape {
        /// The argument.
        arg: usize,
        /// What the GPU path's is.
        actual: String,
        /// What the interpreter's is.
        expected: String,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Element {
                arg,
                index,
                dtype,
                actual,
                expected,
                allowed,
            } => write!(
                f,
                "argument {arg} ({dtype}) at {index:?}: {actual} (bits {:#x}) against the interpreter's {expected} (bits {:#x}), more than {allowed} ulps apart",
                actual.to_bits(),
                expected.to_bits(),
            ),
            Difference::Shape {
                arg,
                actual,
                expected,
            } => write!(
                f,
                "argument {arg} is {actual}, the interpreter's is {expected}"
            ),
        }
    }
}

/// Compares `actual`, the arguments after a GPU path ran, with `expected`,
/// the interpreter's: every element of every tensor argument (and of every
/// tensor of an array), in logical order, within the bounds ([`ulps_allowed`], f64 results within
/// `f64_ulps`: [`f64_ulps`] of the kernel).
pub fn agreement(actual: &[Arg], expected: &[Arg], f64_ulps: u64) -> Agreement {
    let mut near = false;
    for (arg, (a, e)) in actual.iter().zip(expected).enumerate() {
        let pairs: Vec<(&HostTensor, &HostTensor)> = match (a, e) {
            (Arg::Tensor(a), Arg::Tensor(e)) => vec![(a, e)],
            (Arg::Tensors(a), Arg::Tensors(e)) if a.len() == e.len() => a.iter().zip(e).collect(),
            (Arg::Scalar(_), Arg::Scalar(_)) => continue,
            _ => {
                return Agreement::Apart(Difference::Shape {
                    arg,
                    actual: describe(a),
                    expected: describe(e),
                })
            }
        };
        for (a, e) in pairs {
            if a.dtype() != e.dtype() || a.shape() != e.shape() {
                return Agreement::Apart(Difference::Shape {
                    arg,
                    actual: describe(&Arg::Tensor(a.clone())),
                    expected: describe(&Arg::Tensor(e.clone())),
                });
            }
            let dtype = a.dtype();
            let bound = ulps_allowed(dtype, f64_ulps);
            for (k, (x, y)) in a.to_scalars().iter().zip(&e.to_scalars()).enumerate() {
                let (xb, yb) = (x.to_bits(), y.to_bits());
                if xb == yb {
                    continue;
                }
                if bound > 0 && ulps(dtype.bits(), xb, yb) <= bound {
                    near = true;
                } else {
                    return Agreement::Apart(Difference::Element {
                        arg,
                        index: unflatten(k, a.shape()),
                        dtype,
                        actual: *x,
                        expected: *y,
                        allowed: bound,
                    });
                }
            }
        }
    }
    if near {
        Agreement::WithinBounds
    } else {
        Agreement::Identical
    }
}

/// The distance in ulps of two floats of `bits` bits, given by their bits
/// (`-0.0` and `0.0` are 0 apart).
pub fn ulps(bits: u32, a: u64, b: u64) -> u64 {
    let key = |x: u64| -> i128 {
        let magnitude = i128::from(x & ((1u64 << (bits - 1)) - 1));
        if (x >> (bits - 1)) & 1 == 1 {
            -magnitude
        } else {
            magnitude
        }
    };
    (key(a) - key(b)).unsigned_abs() as u64
}

/// The index of element `k` in row-major order of `shape`.
fn unflatten(mut k: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (i, &extent) in index.iter_mut().zip(shape).rev() {
        *i = k % extent.max(1);
        k /= extent.max(1);
    }
    index
}

/// An argument's kind, dtype and shape, for messages.
fn describe(arg: &Arg) -> String {
    match arg {
        Arg::Scalar(s) => format!("a scalar {}", s.dtype()),
        Arg::Tensor(t) => format!("a {} tensor of shape {:?}", t.dtype(), t.shape()),
        Arg::Tensors(ts) => format!("an array of {} tensors", ts.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::interp::HostTensor;

    fn f32s(values: &[f32]) -> Arg {
        Arg::Tensor(HostTensor::from_vec(&[values.len()], values.to_vec()).unwrap())
    }

    #[test]
    fn an_ulp_in_f32_is_within_bounds_and_two_are_not() {
        let one = 1.0f32;
        let next = f32::from_bits(one.to_bits() + 1);
        let two_off = f32::from_bits(one.to_bits() + 2);
        assert_eq!(
            agreement(&[f32s(&[one])], &[f32s(&[one])], F64_ULPS),
            Agreement::Identical
        );
        assert_eq!(
            agreement(&[f32s(&[next])], &[f32s(&[one])], F64_ULPS),
            Agreement::WithinBounds
        );
        match agreement(&[f32s(&[0.0, two_off])], &[f32s(&[0.0, one])], F64_ULPS) {
            Agreement::Apart(d) => assert!(d.to_string().contains("at [1]"), "{d}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn integers_must_be_exact_and_shapes_equal() {
        let ints = |v: Vec<i32>| Arg::Tensor(HostTensor::from_vec(&[2, 1], v).unwrap());
        assert!(matches!(
            agreement(&[ints(vec![1, 3])], &[ints(vec![1, 2])], F64_ULPS),
            Agreement::Apart(Difference::Element { ref index, .. }) if index == &[1, 0]
        ));
        assert!(matches!(
            agreement(&[f32s(&[1.0, 2.0])], &[ints(vec![1, 2])], F64_ULPS),
            Agreement::Apart(Difference::Shape { .. })
        ));
    }

    /// An f64 result may be 8 ulps off for each f64 call of the math
    /// library in the kernel.
    #[test]
    fn f64_bounds_grow_with_the_math_library_calls() {
        let f64s = |v: f64| Arg::Tensor(HostTensor::from_vec(&[1], vec![v]).unwrap());
        let off = |ulps: u64| f64::from_bits(1.0f64.to_bits() + ulps);
        let kernel = |body: &str| {
            tile_ir::text::parse_function(&format!(
                "kernel @k(%x: tensor<f64, 1>) {{\n  %z = constant 0 : i32\n  %v = partition_view %x [4] : view<f64, [4]>\n  %t = load %v[%z] : tile<4xf64>\n{body}  store %r, %v[%z]\n}}"
            ))
            .unwrap()
        };
        let none = kernel("  %r = add %t, %t : tile<4xf64>\n");
        let two = kernel("  %c = cos %t : tile<4xf64>\n  %r = exp2 %c : tile<4xf64>\n");
        assert_eq!((f64_ulps(&none), f64_ulps(&two)), (F64_ULPS, 2 * F64_ULPS));
        let twelve = agreement(&[f64s(off(12))], &[f64s(1.0)], f64_ulps(&two));
        assert_eq!(twelve, Agreement::WithinBounds);
        match agreement(&[f64s(off(12))], &[f64s(1.0)], f64_ulps(&none)) {
            Agreement::Apart(d) => assert!(d.to_string().contains("more than 8 ulps"), "{d}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ulps_straddle_zero() {
        assert_eq!(ulps(32, (-0.0f32).to_bits().into(), 0), 0);
        let tiny = 1u64;
        let minus_tiny = u64::from((-f32::from_bits(1)).to_bits());
        assert_eq!(ulps(32, tiny, minus_tiny), 2);
    }
}
