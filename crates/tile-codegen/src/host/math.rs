//! The math functions of host code are the oracle's own.
//!
//! The scalar emitter calls `tile.math.<op>.f64` for `exp`, `exp2`, `log`,
//! `log2`, `sin`, `cos`, `tanh` and `erf`, and defines it from LLVM
//! arithmetic for the GPUs (within a few f64 ulps of the oracle,
//! docs/backends.md). On the host the definition would be a needless
//! approximation: the module only declares these functions, and the JIT
//! binds each declaration to the oracle's function (`tile_ir::eval`, the
//! `libm` crate's f64 value), so every dtype's result is the interpreter's
//! bit for bit, huge `sin`/`cos` arguments included.

use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::{Linkage, Module};
use tile_ir::{eval, Scalar, UnaryOp};

/// A math function as the JIT calls it.
type MathFn = extern "C" fn(f64) -> f64;

/// The math-library ops and the host function of each.
const FUNCTIONS: [(UnaryOp, MathFn); 8] = [
    (UnaryOp::Exp, exp),
    (UnaryOp::Exp2, exp2),
    (UnaryOp::Log, log),
    (UnaryOp::Log2, log2),
    (UnaryOp::Sin, sin),
    (UnaryOp::Cos, cos),
    (UnaryOp::Tanh, tanh),
    (UnaryOp::Erf, erf),
];

/// The name the scalar emitter gives the f64 function of `op`.
fn name(op: UnaryOp) -> String {
    format!("tile.math.{}.f64", op.name())
}

/// Declares every math function in `module`, before any code is emitted,
/// so that the emitter calls the declarations instead of defining them.
pub(super) fn declare<'ctx>(ctx: &'ctx Context, module: &Module<'ctx>) {
    let f64t = ctx.f64_type();
    for (op, _) in FUNCTIONS {
        module.add_function(
            &name(op),
            f64t.fn_type(&[f64t.into()], false),
            Some(Linkage::External),
        );
    }
}

/// Binds the declarations that remain in `module` (optimization drops the
/// unused ones) to the host functions, before the engine compiles anything.
pub(super) fn bind<'ctx>(engine: &ExecutionEngine<'ctx>, module: &Module<'ctx>) {
    for (op, f) in FUNCTIONS {
        if let Some(declared) = module.get_function(&name(op)) {
            engine.add_global_mapping(&declared, f as usize);
        }
    }
}

/// The oracle's f64 value of `op` at `x`.
fn oracle(op: UnaryOp, x: f64) -> f64 {
    match eval::unary(op, Scalar::F64(x)) {
        Ok(Scalar::F64(v)) => v,
        // `eval` defines every math op on f64 and returns an f64.
        _ => f64::NAN,
    }
}

extern "C" fn exp(x: f64) -> f64 {
    oracle(UnaryOp::Exp, x)
}

extern "C" fn exp2(x: f64) -> f64 {
    oracle(UnaryOp::Exp2, x)
}

extern "C" fn log(x: f64) -> f64 {
    oracle(UnaryOp::Log, x)
}

extern "C" fn log2(x: f64) -> f64 {
    oracle(UnaryOp::Log2, x)
}

extern "C" fn sin(x: f64) -> f64 {
    oracle(UnaryOp::Sin, x)
}

extern "C" fn cos(x: f64) -> f64 {
    oracle(UnaryOp::Cos, x)
}

extern "C" fn tanh(x: f64) -> f64 {
    oracle(UnaryOp::Tanh, x)
}

extern "C" fn erf(x: f64) -> f64 {
    oracle(UnaryOp::Erf, x)
}
