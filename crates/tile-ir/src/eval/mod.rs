//! The exact scalar semantics of every elementwise op and cast.
//!
//! These pure functions define what the interpreter computes and what the
//! constant folder may fold; every other execution path (the LLVM CPU path,
//! the GPU lockstep emulator) must reproduce them bit for bit. The rules are
//! tabulated in `docs/semantics.md`; in short:
//!
//! - every float result is the exact (or, for transcendentals, the `libm`
//!   f64) value rounded **once** to the result dtype, to nearest, ties to even;
//! - every float result that is a NaN is the dtype's canonical quiet NaN
//!   ([`canonical_nan`]), so NaN payloads never depend on the path;
//! - integers wrap, and division, remainder and shifts are total.
//!
//! The functions never panic: an ill-typed combination (an `exp` of an
//! integer, a shift of floats, operands of two dtypes) is an [`EvalError`].

mod atomic;
mod binary;
mod cast;
mod compare;
mod round;
mod unary;

pub use atomic::atomic;
pub use binary::{binary, fma, math2_f64};
pub use cast::{bitcast, cast};
pub use compare::{compare, select};
pub use round::{canonical_nan, round_f64};
pub use unary::{math_f64, round_tf32, unary};

use crate::dtype::DType;

/// An ill-typed application of an elementwise op.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// The operands of a multi-operand op have different dtypes.
    #[error("`{op}` needs operands of one dtype, found {found}")]
    Mismatch {
        /// The op's text name.
        op: &'static str,
        /// The operand dtypes, comma-separated.
        found: String,
    },
    /// The op is not defined on the operands' dtype.
    #[error("`{op}` is not defined on {dtype}")]
    Unsupported {
        /// The op's text name.
        op: &'static str,
        /// The offending dtype.
        dtype: DType,
    },
}

/// Checks that all of `dtypes` are equal and returns the common one.
fn same_dtype(op: &'static str, dtypes: &[DType]) -> Result<DType, EvalError> {
    match dtypes.split_first() {
        Some((&first, rest)) if rest.iter().all(|&d| d == first) => Ok(first),
        _ => {
            let found = dtypes
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ");
            Err(EvalError::Mismatch { op, found })
        }
    }
}
