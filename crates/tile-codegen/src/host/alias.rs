//! Alias scopes: the frame and the tensors never overlap, and LLVM is told
//! so.
//!
//! Tensor base pointers come out of the packet as integers, so LLVM cannot
//! prove them apart from the frame (a `noalias` parameter): a copy between a
//! tensor row and a tile, fully unrolled, stays one scalar load and store per
//! element, because each store to the frame might change the next tensor
//! element. Every frame access is therefore in the scope `frame` and every
//! tensor access in the scope `tensors`, each marked as not aliasing the
//! other (`!alias.scope` / `!noalias`); the loop vectorizer then needs no
//! run-time overlap checks either. Nothing is claimed between two tensors.

use super::error::HostError;
use inkwell::context::Context;
use inkwell::values::{InstructionValue, MetadataValue};

/// The memory an access touches.
#[derive(Clone, Copy)]
pub(super) enum Memory {
    /// The worker's scratch frame.
    Frame,
    /// A tensor argument.
    Tensor,
}

/// The scope lists of the two kinds of memory.
pub(super) struct AliasScopes<'ctx> {
    alias_scope: u32,
    noalias: u32,
    frame: MetadataValue<'ctx>,
    tensors: MetadataValue<'ctx>,
}

impl<'ctx> AliasScopes<'ctx> {
    /// The scopes, in one domain of their own.
    pub(super) fn new(ctx: &'ctx Context) -> Self {
        let domain = ctx.metadata_node(&[ctx.metadata_string("tile.host").into()]);
        let scope = |name: &str| {
            let scope = ctx.metadata_node(&[ctx.metadata_string(name).into(), domain.into()]);
            ctx.metadata_node(&[scope.into()])
        };
        AliasScopes {
            alias_scope: ctx.get_kind_id("alias.scope"),
            noalias: ctx.get_kind_id("noalias"),
            frame: scope("tile.host.frame"),
            tensors: scope("tile.host.tensors"),
        }
    }

    /// Marks `access` (a load or store) as touching `memory` only.
    pub(super) fn mark(
        &self,
        access: InstructionValue<'ctx>,
        memory: Memory,
    ) -> Result<(), HostError> {
        let (own, other) = match memory {
            Memory::Frame => (self.frame, self.tensors),
            Memory::Tensor => (self.tensors, self.frame),
        };
        access
            .set_metadata(own, self.alias_scope)
            .and_then(|()| access.set_metadata(other, self.noalias))
            .map_err(|e| HostError::internal(format!("marking an access's alias scope: {e}")))
    }
}
