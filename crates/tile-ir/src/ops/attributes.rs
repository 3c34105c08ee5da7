//! The attributes of ops other than atomics' and elementwise ops': the
//! predicates of comparisons, the kinds of reductions, arg-reductions and
//! scans, a `dot`'s precision and a masked load's padding, with their text
//! names (`text_names!`, which the other attribute modules use too).

use crate::dtype::DType;
use crate::eval::{canonical_nan, round_f64};
use crate::f8::F8E5M2;
use crate::scalar::Scalar;
use std::fmt;

/// Comparison predicates. On floats every comparison with a NaN is false,
/// except `ne`, which is true.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpPred {
    /// `eq`: equal.
    Eq,
    /// `ne`: not equal.
    Ne,
    /// `lt`: less than.
    Lt,
    /// `le`: less than or equal.
    Le,
    /// `gt`: greater than.
    Gt,
    /// `ge`: greater than or equal.
    Ge,
}

/// The combining operation of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    /// `sum`.
    Sum,
    /// `prod`.
    Prod,
    /// `max` (NaN-propagating).
    Max,
    /// `min` (NaN-propagating).
    Min,
}

/// Which extreme an arg-reduction finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// `argmax`: the first index of the maximum (a NaN counts as the maximum).
    ArgMax,
    /// `argmin`: the first index of the minimum (a NaN counts as the minimum).
    ArgMin,
}

/// The combining operation of a scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `cumsum`: inclusive prefix sum.
    CumSum,
    /// `cumprod`: inclusive prefix product.
    CumProd,
}

/// How a `dot` may sum its products (`docs/semantics.md`, "dot").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DotPrecision {
    /// `ieee`: each element is the in-order chain `acc = fma(a[m, k], b[k,
    /// n], acc)` for `k` ascending from `c[m, n]`, one rounding per step:
    /// bit for bit the same result on every device.
    Ieee,
    /// `tensor`: the products are exact and accumulate in `f32`, but the
    /// device may sum them in any order and grouping (a tensor core's step
    /// adds several products at once), within the bound of
    /// [`DotPrecision::error_bound`]. The default for `f16`, `bf16` and FP8
    /// operands.
    Tensor,
    /// `tf32`, for `f32` operands only: each operand rounded to TF32
    /// ([`UnaryOp::RoundTf32`](super::UnaryOp::RoundTf32)), then as `tensor` (the products of TF32
    /// values are exact in `f32`). Faster than `ieee` on tensor cores, less
    /// accurate: the rounding drops 13 bits of each operand.
    Tf32,
}

impl DotPrecision {
    /// The default precision of a `dot` of `a` and `b`: `tensor` for 16-bit
    /// and FP8 floats, whose products are exact in the `f32` accumulator;
    /// `ieee` for everything else.
    pub fn default_for(a: DType, b: DType) -> DotPrecision {
        let narrow = |d: DType| matches!(d, DType::F16 | DType::BF16) || d.is_f8();
        if narrow(a) && narrow(b) {
            DotPrecision::Tensor
        } else {
            DotPrecision::Ieee
        }
    }

    /// The most a `tensor` dot's element may differ from the `ieee` one:
    /// `2 · γ(K) · (|c| + Σ_k |a[m, k] · b[k, n]|)` with `γ(K) = K·u / (1 −
    /// K·u)` and `u = 2⁻²³`. Each of the `K` additions of either order rounds
    /// (or truncates, as tensor cores may) within `2⁻²³` of its result, whose
    /// magnitude is at most the sum of magnitudes (Higham, *Accuracy and
    /// Stability of Numerical Algorithms*, §4.2); the two results are each
    /// within `γ(K)` of the exact sum. `abs_sum` is the sum of magnitudes;
    /// an `ieee` dot's bound is 0. A `tf32` dot has the same bound against
    /// the `ieee` chain of its rounded operands (magnitudes of those).
    pub fn error_bound(self, k: usize, abs_sum: f64) -> f64 {
        match self {
            DotPrecision::Ieee => 0.0,
            DotPrecision::Tensor | DotPrecision::Tf32 => {
                let ku = k as f64 * f64::powi(2.0, -23);
                2.0 * ku / (1.0 - ku) * abs_sum
            }
        }
    }
}

/// The value of elements of a masked load that fall outside the tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Padding {
    /// `zero`: the dtype's zero (any dtype).
    Zero,
    /// `nan`: a quiet NaN (float dtypes).
    Nan,
    /// `posinf`: +infinity (float dtypes that have it).
    PosInf,
    /// `neginf`: -infinity (float dtypes that have it).
    NegInf,
    /// `value <c>`: a constant of the view's dtype.
    Value(Scalar),
}

impl Padding {
    /// The value of the elements a masked load of `dtype` reads outside the
    /// tensor, or `None` when this padding does not exist in `dtype` (`nan`
    /// of an integer or of FP4/FP6, an infinity of `f8e4m3` or of an MX
    /// format, a constant of another dtype;
    /// the verifier reports those, `rules::check_padding`).
    pub fn value(self, dtype: DType) -> Option<Scalar> {
        let infinity = |negative: bool| match dtype {
            DType::F8E5M2 => Some(Scalar::F8E5M2(F8E5M2::from_bits(if negative {
                0xfc
            } else {
                0x7c
            }))),
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => round_f64(
                if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                },
                dtype,
            ),
            _ => None,
        };
        match self {
            Padding::Zero => Some(Scalar::zero(dtype)),
            Padding::Nan => canonical_nan(dtype).filter(|v| v.is_nan()),
            Padding::PosInf => infinity(false),
            Padding::NegInf => infinity(true),
            Padding::Value(v) => Some(v).filter(|v| v.dtype() == dtype),
        }
    }
}

macro_rules! text_names {
    ($ty:ident $what:literal { $($variant:ident => $text:literal),* $(,)? }) => {
        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),*];

            /// The name of this variant in the text form.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $text),*
                }
            }

            /// The variant with the given text name.
            pub fn from_name(name: &str) -> Option<$ty> {
                Self::ALL.iter().copied().find(|v| v.name() == name)
            }
        }

        impl $crate::ops::TextName for $ty {
            const WHAT: &'static str = $what;
            const ALL: &'static [$ty] = <$ty>::ALL;

            fn text(self) -> &'static str {
                self.name()
            }

            fn from_text(name: &str) -> Option<$ty> {
                <$ty>::from_name(name)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// An attribute written by name in the text form.
pub trait TextName: Copy + fmt::Display + 'static {
    /// What a value is called in errors ("memory order").
    const WHAT: &'static str;
    /// Every value, in declaration order.
    const ALL: &'static [Self];

    /// The value's name.
    fn text(self) -> &'static str;

    /// The value named `name`.
    fn from_text(name: &str) -> Option<Self>;
}

/// One axis of a `slice`: the indices `start, start + step, ...` below
/// `stop`, written `start:stop:step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceRange {
    /// The first index taken.
    pub start: usize,
    /// The exclusive end.
    pub stop: usize,
    /// The step, at least 1.
    pub step: usize,
}

impl fmt::Display for SliceRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.start, self.stop, self.step)
    }
}

text_names!(CmpPred "comparison predicate" { Eq => "eq", Ne => "ne", Lt => "lt", Le => "le", Gt => "gt", Ge => "ge" });
text_names!(ReduceKind "reduction" { Sum => "sum", Prod => "prod", Max => "max", Min => "min" });
text_names!(ArgKind "arg-reduction" { ArgMax => "argmax", ArgMin => "argmin" });
text_names!(ScanKind "scan" { CumSum => "cumsum", CumProd => "cumprod" });
text_names!(DotPrecision "dot precision" { Ieee => "ieee", Tensor => "tensor", Tf32 => "tf32" });
