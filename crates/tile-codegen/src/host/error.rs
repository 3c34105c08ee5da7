//! The errors of the host back end.

use crate::emit::EmitError;
use tile_ir::interp::InterpError;
use tile_ir::verify::VerifyError;

/// Why a kernel could not be compiled for the host or failed while running.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The kernel uses an op (or an op on a dtype) the host back end does not
    /// generate yet.
    #[error("the host back end does not support {what} yet")]
    Unsupported {
        /// The op, as `lview_tile` or `` `cmp lt` on bool ``.
        what: String,
    },
    /// The kernel does not pass the tile-IR verifier.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// The launch breaks the interpreter's rules: argument count, dtypes,
    /// ranks, extents or grid.
    #[error(transparent)]
    Launch(#[from] InterpError),
    /// A tensor argument whose strides may send two elements to one address
    /// (the interpreter reports such an access; the host refuses the tensor).
    #[error("argument {index} (`{param}`): extents {extents:?} with strides {strides:?} may alias; the host back end needs tensors whose elements have distinct addresses")]
    Aliasing {
        /// The argument's position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// The tensor's extents.
        extents: Vec<usize>,
        /// The tensor's strides, in elements.
        strides: Vec<isize>,
    },
    /// An op failed in a program instance (the first in the interpreter's
    /// order that failed).
    #[error("program ({}, {}, {}): `{op}`: {fault}", program[0], program[1], program[2])]
    Op {
        /// The program instance.
        program: [u32; 3],
        /// The op, as `tile_ir::ValueNames::describe_op` writes it.
        op: String,
        /// What failed.
        fault: HostFault,
    },
    /// LLVM failed to build, verify, optimize or JIT-compile the module.
    #[error(transparent)]
    Emit(#[from] EmitError),
    /// The compiled code returned a status it cannot return (a back-end bug).
    #[error("internal error in the host back end: {0}")]
    Internal(String),
}

impl HostError {
    pub(super) fn internal(message: impl Into<String>) -> HostError {
        HostError::Internal(message.into())
    }
}

impl From<inkwell::builder::BuilderError> for HostError {
    fn from(e: inkwell::builder::BuilderError) -> Self {
        HostError::Emit(e.into())
    }
}

/// What failed in a program instance; the faults of the interpreter's
/// `Fault` that compiled code checks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostFault {
    /// A partition index outside the view's index space (masked or not).
    #[error("partition index {index:?} is outside the view's index space")]
    IndexSpace {
        /// The partition index (its first four axes).
        index: Vec<i64>,
    },
    /// An unmasked access to a partition partially outside the tensor.
    #[error("partition {index:?} is partially outside the tensor (use the masked form)")]
    PartialPartition {
        /// The partition index (its first four axes).
        index: Vec<i64>,
    },
    /// An unmasked layout-view access that reaches outside the tensor's
    /// element space.
    #[error("the layout view at base {base} reaches outside the tensor's element space (use the masked form)")]
    LViewOutside {
        /// The view's base offset.
        base: i64,
    },
    /// A `for` whose step is not positive.
    #[error("the step {step} of a loop is not positive")]
    NonPositiveStep {
        /// The step.
        step: i64,
    },
    /// A `for` that would run more iterations than the interpreter's limit.
    #[error("the loop would run {iterations} iterations, more than the limit of {limit}")]
    IterationLimit {
        /// The iterations the loop would run.
        iterations: i64,
        /// The limit (`tile_ir::interp::Options::max_loop_iterations`).
        limit: u64,
    },
}
