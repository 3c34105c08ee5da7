//! The errors of the host back end.

use crate::tools::ToolError;
use crate::EmitError;
use tile_ir::verify::VerifyError;

/// Why a kernel could not be compiled for the host.
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
    /// LLVM failed to build, verify, optimize or compile the module.
    #[error(transparent)]
    Emit(#[from] EmitError),
    /// lld failed to link the shared object.
    #[error(transparent)]
    Link(#[from] ToolError),
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
