//! The errors of the host back end.

use crate::emit::EmitError;
use crate::tools::ToolError;
use tile_ir::interp::InterpError;
use tile_ir::verify::VerifyError;
use tile_runtime::cpu::{LoadError, RunError};

/// Why a kernel could not be compiled for the host, loaded, or run.
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
    /// LLVM failed to build, verify, optimize or compile the module.
    #[error(transparent)]
    Emit(#[from] EmitError),
    /// `ld.lld` failed to link the shared object.
    #[error(transparent)]
    Link(#[from] ToolError),
    /// The shared object could not be loaded into this process.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The compiled code refused the arguments or failed in a program
    /// instance.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The host back end could not finish its own work (a back-end bug).
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
