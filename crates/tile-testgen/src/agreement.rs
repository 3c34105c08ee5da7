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
//! result, 1 in a narrower float, none in an integer or a bool. Every
//! element of every tensor argument is compared, in logical order (the
//! elements a kernel never stores included: they must keep their input).

use std::fmt;
use tile_ir::interp::Arg;
use tile_ir::{DType, Scalar};

/// The ulps an f64 result may differ by: the largest bound of the f64 math
/// library (docs/backends.md).
pub const F64_ULPS: u64 = 8;

/// The ulps a result of float `dtype` may differ by (none for an integer
/// or a bool).
pub fn ulps_allowed(dtype: DType) -> u64 {
    match dtype {
        DType::F64 => F64_ULPS,
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
            } => write!(
                f,
                "argument {arg} ({dtype}) at {index:?}: {actual} (bits {:#x}) against the interpreter's {expected} (bits {:#x}), more than {} ulps apart",
                actual.to_bits(),
                expected.to_bits(),
                ulps_allowed(*dtype)
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
/// the interpreter's: every element of every tensor argument, in logical
/// order, within the bounds ([`ulps_allowed`]).
pub fn agreement(actual: &[Arg], expected: &[Arg]) -> Agreement {
    let mut near = false;
    for (arg, (a, e)) in actual.iter().zip(expected).enumerate() {
        let (a, e) = match (a, e) {
            (Arg::Tensor(a), Arg::Tensor(e)) => (a, e),
            (Arg::Scalar(_), Arg::Scalar(_)) => continue,
            _ => {
                return Agreement::Apart(Difference::Shape {
                    arg,
                    actual: describe(a),
                    expected: describe(e),
                })
            }
        };
        if a.dtype() != e.dtype() || a.shape() != e.shape() {
            return Agreement::Apart(Difference::Shape {
                arg,
                actual: describe(&Arg::Tensor(a.clone())),
                expected: describe(&Arg::Tensor(e.clone())),
            });
        }
        let dtype = a.dtype();
        let bound = ulps_allowed(dtype);
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
                });
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
            agreement(&[f32s(&[one])], &[f32s(&[one])]),
            Agreement::Identical
        );
        assert_eq!(
            agreement(&[f32s(&[next])], &[f32s(&[one])]),
            Agreement::WithinBounds
        );
        match agreement(&[f32s(&[0.0, two_off])], &[f32s(&[0.0, one])]) {
            Agreement::Apart(d) => assert!(d.to_string().contains("at [1]"), "{d}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn integers_must_be_exact_and_shapes_equal() {
        let ints = |v: Vec<i32>| Arg::Tensor(HostTensor::from_vec(&[2, 1], v).unwrap());
        assert!(matches!(
            agreement(&[ints(vec![1, 3])], &[ints(vec![1, 2])]),
            Agreement::Apart(Difference::Element { ref index, .. }) if index == &[1, 0]
        ));
        assert!(matches!(
            agreement(&[f32s(&[1.0, 2.0])], &[ints(vec![1, 2])]),
            Agreement::Apart(Difference::Shape { .. })
        ));
    }

    #[test]
    fn ulps_straddle_zero() {
        assert_eq!(ulps(32, (-0.0f32).to_bits().into(), 0), 0);
        let tiny = 1u64;
        let minus_tiny = u64::from((-f32::from_bits(1)).to_bits());
        assert_eq!(ulps(32, tiny, minus_tiny), 2);
    }
}
