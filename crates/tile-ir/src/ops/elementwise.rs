//! The elementwise operations of one and of two operands, and which of them
//! the math library computes.

use std::fmt;

/// Elementwise operations of one operand.
///
/// The math-library functions ([`UnaryOp::MATH`]) are defined on floats as
/// an `f64` function of the exactly widened operand, rounded once to the
/// dtype (`crate::eval::unary` says which).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `neg`: `-x` (wrapping for integers).
    Neg,
    /// `not`: logical not of `bool`, bitwise not of integers.
    Not,
    /// `exp`: e^x.
    Exp,
    /// `exp2`: 2^x.
    Exp2,
    /// `log`: natural logarithm.
    Log,
    /// `log2`: base-2 logarithm.
    Log2,
    /// `sqrt`: square root.
    Sqrt,
    /// `rsqrt`: 1 / sqrt(x).
    Rsqrt,
    /// `sin`: sine (radians).
    Sin,
    /// `cos`: cosine (radians).
    Cos,
    /// `tanh`: hyperbolic tangent.
    Tanh,
    /// `erf`: the error function.
    Erf,
    /// `abs`: absolute value (wrapping for the most negative integer).
    Abs,
    /// `floor`: rounds toward negative infinity.
    Floor,
    /// `ceil`: rounds toward positive infinity.
    Ceil,
    /// `round_tf32`: an `f32` rounded to TF32, the tensor cores' 19-bit
    /// float (10 fraction bits): to nearest, ties away from zero (PTX
    /// `cvt.rna.tf32.f32`), the low 13 bits of the result zero; infinities
    /// stay, a NaN is the canonical NaN. What a `tf32` dot does to its
    /// operands.
    RoundTf32,
    /// `tan`: tangent (radians).
    Tan,
    /// `asin`: arcsine, in [-π/2, π/2]; NaN outside [-1, 1].
    Asin,
    /// `acos`: arccosine, in [0, π]; NaN outside [-1, 1].
    Acos,
    /// `atan`: arctangent, in [-π/2, π/2].
    Atan,
    /// `sinh`: hyperbolic sine.
    Sinh,
    /// `cosh`: hyperbolic cosine.
    Cosh,
    /// `asinh`: inverse hyperbolic sine.
    Asinh,
    /// `acosh`: inverse hyperbolic cosine; NaN below 1.
    Acosh,
    /// `atanh`: inverse hyperbolic tangent; ±∞ at ±1, NaN beyond.
    Atanh,
    /// `sigmoid`: the logistic function 1 / (1 + e^(−x)).
    Sigmoid,
    /// `log1p`: ln(1 + x), accurate near 0.
    Log1p,
    /// `expm1`: e^x − 1, accurate near 0.
    Expm1,
    /// `erfc`: the complementary error function 1 − erf(x), accurate where
    /// it is small.
    Erfc,
    /// `cbrt`: the real cube root (negative for a negative operand).
    Cbrt,
    /// `round`: to the nearest integer, halfway cases away from zero (C's
    /// `round`, CUDA's `roundf`).
    Round,
    /// `round_ties_even`: to the nearest integer, halfway cases to the even
    /// one (C's `rint` in the default mode, `torch.round`).
    RoundTiesEven,
}

impl UnaryOp {
    /// The functions of the math library, in the order of the host's math
    /// table (`tile_abi::host`): defined on floats only, computed by the
    /// oracle with `libm`'s `f64` function (or, for `sigmoid`, the `f64`
    /// formula of `crate::eval::unary`), and by the GPU back ends with
    /// their own math libraries within documented bounds of it.
    pub const MATH: &'static [UnaryOp] = &[
        UnaryOp::Exp,
        UnaryOp::Exp2,
        UnaryOp::Log,
        UnaryOp::Log2,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tanh,
        UnaryOp::Erf,
        UnaryOp::Tan,
        UnaryOp::Asin,
        UnaryOp::Acos,
        UnaryOp::Atan,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Asinh,
        UnaryOp::Acosh,
        UnaryOp::Atanh,
        UnaryOp::Sigmoid,
        UnaryOp::Log1p,
        UnaryOp::Expm1,
        UnaryOp::Erfc,
        UnaryOp::Cbrt,
    ];

    /// Whether this is a function of the math library ([`Self::MATH`]).
    pub fn is_math(self) -> bool {
        Self::MATH.contains(&self)
    }
}

/// Elementwise operations of two operands of one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `add`: `a + b` (wrapping for integers).
    Add,
    /// `sub`: `a - b` (wrapping for integers).
    Sub,
    /// `mul`: `a * b` (wrapping for integers).
    Mul,
    /// `div`: `a / b` (integers: truncating; see `docs/ir.md` for `x / 0`).
    Div,
    /// `rem`: remainder with the sign of `a` (C's `%`, `fmod` for floats).
    Rem,
    /// `min`: the smaller operand (NaN if either is NaN).
    Min,
    /// `max`: the larger operand (NaN if either is NaN).
    Max,
    /// `pow`: `a` raised to the power `b`, floats only, with the special
    /// values of C99 `pow` (`pow(x, ±0) = 1`, `pow(1, y) = 1` even for a
    /// NaN, a negative base to a non-integer power is NaN).
    Pow,
    /// `and`: logical and of `bool`, bitwise and of integers.
    And,
    /// `or`: logical or of `bool`, bitwise or of integers.
    Or,
    /// `xor`: logical xor of `bool`, bitwise xor of integers.
    Xor,
    /// `shl`: shift left of integers; amounts at or beyond the width give 0.
    Shl,
    /// `shr`: shift right (arithmetic for signed integers, logical for
    /// unsigned); amounts at or beyond the width shift all bits out.
    Shr,
    /// `atan2`: the angle of the point (`b`, `a`) (`a` is the ordinate, as
    /// in C's `atan2(y, x)`), in [−π, π], floats only, with C99's special
    /// values (signed zeros and infinities).
    Atan2,
    /// `hypot`: √(a² + b²) without overflow or underflow on the way,
    /// floats only; ∞ if either is infinite, even with a NaN.
    Hypot,
}

impl BinaryOp {
    /// The functions of two operands of the math library, in the order of
    /// the host's math table (`tile_abi::host`), after [`UnaryOp::MATH`].
    pub const MATH: &'static [BinaryOp] = &[BinaryOp::Pow, BinaryOp::Atan2, BinaryOp::Hypot];

    /// Whether this is a function of the math library ([`Self::MATH`]).
    pub fn is_math(self) -> bool {
        Self::MATH.contains(&self)
    }
}

text_names!(UnaryOp "unary op" {
    Neg => "neg", Not => "not", Exp => "exp", Exp2 => "exp2", Log => "log", Log2 => "log2",
    Sqrt => "sqrt", Rsqrt => "rsqrt", Sin => "sin", Cos => "cos", Tanh => "tanh", Erf => "erf",
    Abs => "abs", Floor => "floor", Ceil => "ceil", RoundTf32 => "round_tf32", Tan => "tan",
    Asin => "asin", Acos => "acos", Atan => "atan", Sinh => "sinh", Cosh => "cosh",
    Asinh => "asinh", Acosh => "acosh", Atanh => "atanh", Sigmoid => "sigmoid",
    Log1p => "log1p", Expm1 => "expm1", Erfc => "erfc", Cbrt => "cbrt", Round => "round",
    RoundTiesEven => "round_ties_even",
});
text_names!(BinaryOp "binary op" {
    Add => "add", Sub => "sub", Mul => "mul", Div => "div", Rem => "rem", Min => "min",
    Max => "max", Pow => "pow", And => "and", Or => "or", Xor => "xor", Shl => "shl", Shr => "shr",
    Atan2 => "atan2", Hypot => "hypot",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_math_lists_hold_each_function_once() {
        for (i, op) in UnaryOp::MATH.iter().enumerate() {
            assert!(!UnaryOp::MATH[..i].contains(op), "{op} twice");
        }
        for (i, op) in BinaryOp::MATH.iter().enumerate() {
            assert!(!BinaryOp::MATH[..i].contains(op), "{op} twice");
        }
        let exact = [
            UnaryOp::Neg,
            UnaryOp::Not,
            UnaryOp::Abs,
            UnaryOp::Sqrt,
            UnaryOp::Rsqrt,
            UnaryOp::Floor,
            UnaryOp::Ceil,
            UnaryOp::RoundTf32,
            UnaryOp::Round,
            UnaryOp::RoundTiesEven,
        ];
        assert_eq!(UnaryOp::MATH.len() + exact.len(), UnaryOp::ALL.len());
        assert!(exact.iter().all(|op| !op.is_math()));
    }
}
