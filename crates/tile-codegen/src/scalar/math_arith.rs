//! The two arithmetics of the math libraries: the exact library computes in
//! f64 ([`super::math`]), the fast one in f32 ([`super::fast_math`]). The
//! functions written once for both (`inverse_trig`, `hyperbolic`, `roots`)
//! take the arithmetic from their operand's type and call its primitives
//! here: constants, `exp`, `expm1`, `log`, `log1p` and scaling by a power
//! of two.

use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::FloatValue;
use tile_ir::UnaryOp;

/// The arithmetic a math function computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arith {
    /// The exact library's f64.
    F64,
    /// The fast library's f32.
    F32,
}

impl Arith {
    /// The first `f64` or `f32` value of a pair, by arithmetic.
    pub(super) fn pick(self, f64_value: f64, f32_value: f64) -> f64 {
        match self {
            Arith::F64 => f64_value,
            Arith::F32 => f32_value,
        }
    }
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// The arithmetic of `x`'s type.
    pub(super) fn arith_of(&self, x: FloatValue<'ctx>) -> Arith {
        if x.get_type() == self.ctx.f32_type() {
            Arith::F32
        } else {
            Arith::F64
        }
    }

    /// The constant `v` of `x`'s type (rounded to it).
    pub(super) fn k(&self, x: FloatValue<'ctx>, v: f64) -> FloatValue<'ctx> {
        x.get_type().const_float(v)
    }

    /// e^x in `x`'s arithmetic.
    pub(super) fn exp_in(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        match self.arith_of(x) {
            Arith::F64 => self.exp(x),
            Arith::F32 => self.fast_exp(x),
        }
    }

    /// e^x − 1 in `x`'s arithmetic, accurate near 0.
    pub(super) fn expm1_in(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        match self.arith_of(x) {
            Arith::F64 => self.expm1(x),
            Arith::F32 => self.fast_expm1(x),
        }
    }

    /// ln x in `x`'s arithmetic.
    pub(super) fn log_in(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        match self.arith_of(x) {
            Arith::F64 => self.log(x),
            Arith::F32 => self.fast_log(x, false),
        }
    }

    /// A call of the module's `log1p` of `x`'s arithmetic (defined once,
    /// shared by the inverse hyperbolic functions).
    pub(super) fn log1p_in(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        match self.arith_of(x) {
            Arith::F64 => self.transcendental(UnaryOp::Log1p, x),
            Arith::F32 => self.fast_transcendental(UnaryOp::Log1p, x),
        }
    }

    /// `y · 2^k` for an integral `k` (of `y`'s type) in the range of
    /// exponents its arithmetic's functions reach.
    pub(super) fn scale_in(
        &self,
        y: FloatValue<'ctx>,
        k: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        match self.arith_of(y) {
            Arith::F64 => self.scale(y, k),
            Arith::F32 => self.fast_scale(y, k),
        }
    }
}
