//! The error of LLVM code generation, for every target.

use crate::target::{Target, TargetError};
use crate::tools::ToolError;
use inkwell::builder::BuilderError;

/// Why a program could not be emitted.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The program uses something this emitter does not generate.
    #[error("the LLVM emitter does not support {what}")]
    Unsupported {
        /// What is missing.
        what: String,
    },
    /// A thread-level program asked of a host target (the host runs tile IR
    /// through its own back end).
    #[error("`{target}` is not a GPU target; thread-level programs are emitted for sm_* and gfx* targets")]
    NotGpu {
        /// The target asked for.
        target: Target,
    },
    /// LLVM's IR builder refused an instruction (an emitter bug).
    #[error("LLVM's IR builder failed: {0}")]
    Builder(String),
    /// The LLVM verifier rejected the module (an emitter bug).
    #[error("the LLVM verifier rejected kernel `{kernel}` for {target}: {message}")]
    Verify {
        /// The kernel.
        kernel: String,
        /// The target.
        target: Target,
        /// LLVM's message.
        message: String,
    },
    /// LLVM's backend reported an error (caught by `diagnostics.rs`, where
    /// LLVM would otherwise exit the process).
    #[error("LLVM rejected kernel `{kernel}` for {target}: {message}")]
    Backend {
        /// The kernel.
        kernel: String,
        /// The target.
        target: Target,
        /// LLVM's messages.
        message: String,
    },
    /// LLVM's optimization pipeline failed.
    #[error("LLVM's optimization pipeline failed for {target}: {message}")]
    Optimize {
        /// The target.
        target: Target,
        /// LLVM's message.
        message: String,
    },
    /// Setting up the target or generating code failed.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The assembler or lld (both in this process) failed to assemble or
    /// link the AMDGPU code object.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A malformed program or an emitter bug.
    #[error("internal error in the LLVM emitter: {0}")]
    Internal(String),
}

impl EmitError {
    pub(crate) fn internal(message: &str) -> EmitError {
        EmitError::Internal(message.to_string())
    }
}

impl From<BuilderError> for EmitError {
    fn from(e: BuilderError) -> Self {
        EmitError::Builder(e.to_string())
    }
}
