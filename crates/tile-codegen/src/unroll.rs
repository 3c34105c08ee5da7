//! Loop metadata that keeps LLVM from unrolling a loop.
//!
//! * Host code: the host lowering emits every op on tiles as a loop nest
//!   with static trip counts, and `O3` unrolls such nests completely:
//!   attention's host code grew tenfold and took seconds to optimize. Loops
//!   that contain other loops are marked `llvm.loop.unroll.disable`, unless
//!   they are short (at most [`SHORT_TRIPS`] iterations, known statically:
//!   unrolling those is cheap and pays, as in layernorm's two rows);
//!   innermost loops stay unrolled and vectorized as `O3` sees fit.
//! * GPU code: a thread-level program is already unrolled over the
//!   registers of its tiles; its loops are the kernel's own (a matmul's loop
//!   over `K`) and element-by-element fallbacks. None is unrolled: a copy of
//!   a loop body with 64 accumulators costs registers, and an unrolled
//!   fallback's element addresses become loop invariants that LLVM hoists
//!   out of the enclosing loop, where they stay live.

use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMGetMDKindIDInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2, LLVMMetadataAsValue,
    LLVMSetMetadata,
};
use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
use inkwell::values::{AsValueRef, InstructionValue};

/// The most iterations of a loop nest's outer loop that LLVM may still
/// unroll.
pub(crate) const SHORT_TRIPS: u64 = 4;

/// The loop property that marks a thread-level loop holding another one
/// (a persistent kernel's loop over tiles around its K loop), for
/// `loop_sink`.
pub(crate) const OUTER_LOOP: &str = "tile.loop.outer";

/// Attaches `!llvm.loop !{self, !{"llvm.loop.unroll.disable"}}` to
/// `latch`, the branch that closes a loop.
pub(crate) fn disable_unrolling(ctx: &Context, latch: InstructionValue<'_>) {
    loop_properties(ctx, latch, false);
}

/// [`disable_unrolling`], with the property [`OUTER_LOOP`] too where
/// `outer`.
pub(crate) fn loop_properties(ctx: &Context, latch: InstructionValue<'_>, outer: bool) {
    const KIND: &str = "llvm.loop";
    const DISABLE: &str = "llvm.loop.unroll.disable";
    let ctx_ref = ctx.raw();
    // SAFETY: every call gets live handles of `ctx` (the context `latch`
    // belongs to) and pointers with the lengths passed beside them; the
    // temporary node is replaced by the loop ID, which makes the ID refer to
    // itself (as LLVM requires of loop IDs), and is freed by that
    // replacement.
    unsafe {
        let placeholder = LLVMTemporaryMDNode(ctx_ref, std::ptr::null_mut(), 0);
        let property = |text: &str| {
            let mut name = [LLVMMDStringInContext2(
                ctx_ref,
                text.as_ptr().cast(),
                text.len(),
            )];
            LLVMMDNodeInContext2(ctx_ref, name.as_mut_ptr(), 1)
        };
        let mut operands = vec![placeholder, property(DISABLE)];
        if outer {
            operands.push(property(OUTER_LOOP));
        }
        let id = LLVMMDNodeInContext2(ctx_ref, operands.as_mut_ptr(), operands.len());
        LLVMMetadataReplaceAllUsesWith(placeholder, id);
        let kind = LLVMGetMDKindIDInContext(ctx_ref, KIND.as_ptr().cast(), KIND.len() as u32);
        LLVMSetMetadata(latch.as_value_ref(), kind, LLVMMetadataAsValue(ctx_ref, id));
    }
}
