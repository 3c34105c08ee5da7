//! The atomic update of one element, with exactly the semantics of
//! `tile_ir::eval::atomic`, shared by the GPU emitter and the host back end.
//!
//! Integer updates are LLVM's `atomicrmw` (`add`, `and`, `or`, `xor`,
//! `xchg`, signed or unsigned `max`/`min`) and `cmpxchg` (`cas`), which
//! compute what the interpreter does. Float `xchg` and `cas` are those on the
//! bits. Float `add`, `max` and `min` are a compare-and-swap loop around the
//! scalar emitter's own op, so that their rounding, NaNs (canonical) and
//! `-0 < +0` are the interpreter's on every target; a hardware float add
//! would differ in NaN payloads, and NVIDIA's flushes subnormals. Under
//! `approx_math` on a GPU (results that depend on the device), an `f32`
//! `add` is LLVM's `atomicrmw fadd`: one `atom.global.add.f32` on NVIDIA,
//! where contended updates (a split product's, attention's `dq`) would
//! otherwise retry; AMDGPU's LLVM expands it to a loop of its own, as the
//! memory may be fine-grained.
//!
//! LLVM's NVPTX back end emits every `atomicrmw` as a relaxed `atom`,
//! whatever its ordering, so there an ordered one is a relaxed one between
//! device-scope fences ([`ScalarEmitter::ordered`]).

use super::{Nans, ScalarEmitter};
use crate::EmitError;
use inkwell::llvm_sys::core::{LLVMBuildAtomicRMW, LLVMBuildFenceSyncScope, LLVMGetSyncScopeID};
use inkwell::llvm_sys::LLVMAtomicRMWBinOp;
use inkwell::values::{AsValueRef, BasicValue, BasicValueEnum, FloatValue, IntValue, PointerValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp};
use tile_ir::{AtomicOp, BinaryOp, DType, MemOrder};

/// LLVM's ordering of a memory order, for an update and for the read of a
/// failed compare-and-swap (no stronger, and never a release).
fn orderings(order: MemOrder) -> (AtomicOrdering, AtomicOrdering) {
    match order {
        MemOrder::Relaxed => (AtomicOrdering::Monotonic, AtomicOrdering::Monotonic),
        MemOrder::Acquire => (AtomicOrdering::Acquire, AtomicOrdering::Acquire),
        MemOrder::Release => (AtomicOrdering::Release, AtomicOrdering::Monotonic),
        MemOrder::AcqRel => (AtomicOrdering::AcquireRelease, AtomicOrdering::Acquire),
        // The verifier keeps `seq_cst` to fences.
        MemOrder::SeqCst => (
            AtomicOrdering::SequentiallyConsistent,
            AtomicOrdering::SequentiallyConsistent,
        ),
    }
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Updates the element of `dtype` at `ptr` (naturally aligned) by `op`
    /// with `value` (and `cmp` for `cas`), in register types; returns the
    /// old value.
    pub(crate) fn atomic(
        &self,
        op: AtomicOp,
        order: MemOrder,
        dtype: DType,
        ptr: PointerValue<'ctx>,
        value: BasicValueEnum<'ctx>,
        cmp: Option<BasicValueEnum<'ctx>>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        if !op.supports(dtype) {
            return Err(EmitError::Unsupported {
                what: format!("atomic {op} on {dtype}"),
            });
        }
        let (success, failure) = orderings(order);
        let bits = self.int_type(dtype.bits());
        let to_bits = |v: BasicValueEnum<'ctx>| -> Result<IntValue<'ctx>, EmitError> {
            Ok(self.b.build_bit_cast(v, bits, "bits")?.into_int_value())
        };
        let from_bits = |v: IntValue<'ctx>| -> Result<BasicValueEnum<'ctx>, EmitError> {
            Ok(self.b.build_bit_cast(v, self.reg_type(dtype), "value")?)
        };
        let native = |rmw: AtomicRMWBinOp| -> Result<BasicValueEnum<'ctx>, EmitError> {
            let bits = to_bits(value)?;
            let old = self.ordered(order, |ordering| {
                Ok(self.b.build_atomicrmw(rmw, ptr, bits, ordering)?)
            })?;
            from_bits(old)
        };
        let signed = dtype.is_signed_int();
        match op {
            AtomicOp::Xchg => native(AtomicRMWBinOp::Xchg),
            AtomicOp::Cas => {
                let cmp =
                    cmp.ok_or_else(|| EmitError::Internal("cas without a compared value".into()))?;
                let pair =
                    self.b
                        .build_cmpxchg(ptr, to_bits(cmp)?, to_bits(value)?, success, failure)?;
                let old = self.b.build_extract_value(pair, 0, "old")?.into_int_value();
                from_bits(old)
            }
            AtomicOp::Add if dtype == DType::F32 && self.hardware_math.is_some() => {
                self.hardware_add(ptr, value, order)
            }
            _ if dtype.is_float() => self.cas_loop(op, order, dtype, ptr, value),
            AtomicOp::Add => native(AtomicRMWBinOp::Add),
            AtomicOp::And => native(AtomicRMWBinOp::And),
            AtomicOp::Or => native(AtomicRMWBinOp::Or),
            AtomicOp::Xor => native(AtomicRMWBinOp::Xor),
            AtomicOp::Max if signed => native(AtomicRMWBinOp::Max),
            AtomicOp::Max => native(AtomicRMWBinOp::UMax),
            AtomicOp::Min if signed => native(AtomicRMWBinOp::Min),
            AtomicOp::Min => native(AtomicRMWBinOp::UMin),
        }
    }

    /// An `f32` add as the target's own atomic float add (LLVM's
    /// `atomicrmw fadd`, which inkwell does not build); returns the old
    /// value.
    fn hardware_add(
        &self,
        ptr: PointerValue<'ctx>,
        value: BasicValueEnum<'ctx>,
        order: MemOrder,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let BasicValueEnum::FloatValue(value) = value else {
            return Err(EmitError::Internal("an f32 add of a non-float".into()));
        };
        self.positioned()?;
        let old = self.ordered(order, |ordering| {
            // SAFETY: the builder is positioned in a block (checked above),
            // and `ptr` and `value` (an `f32`, the type the pointer is
            // accessed as) are live values of its context; the result is an
            // `f32`.
            Ok(unsafe {
                FloatValue::new(LLVMBuildAtomicRMW(
                    self.b.as_mut_ptr(),
                    LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFAdd,
                    ptr.as_value_ref(),
                    value.as_value_ref(),
                    ordering.into(),
                    0,
                ))
            })
        })?;
        Ok(old.as_basic_value_enum())
    }

    /// Builds a read-modify-write with `build` under `order`: given the
    /// order's own LLVM ordering, or, where the target's LLVM back end
    /// would drop it ([`ScalarEmitter::fenced_atomics`]), given `monotonic`
    /// between a device-scope release fence (if `order` releases) and an
    /// acquire one (if it acquires), PTX's release and acquire patterns.
    fn ordered<T>(
        &self,
        order: MemOrder,
        build: impl FnOnce(AtomicOrdering) -> Result<T, EmitError>,
    ) -> Result<T, EmitError> {
        if !self.fenced_atomics {
            return build(orderings(order).0);
        }
        if order.releases() {
            self.device_fence(AtomicOrdering::Release)?;
        }
        let done = build(AtomicOrdering::Monotonic)?;
        if order.acquires() {
            self.device_fence(AtomicOrdering::Acquire)?;
        }
        Ok(done)
    }

    /// `fence syncscope("device") <ordering>` (PTX `fence.acq_rel.gpu`).
    fn device_fence(&self, ordering: AtomicOrdering) -> Result<(), EmitError> {
        self.positioned()?;
        let scope = c"device";
        // SAFETY: the context and builder are live and the builder is
        // positioned in a block (checked above); the name is a NUL-terminated
        // string of the length given, and a fence has no operands.
        unsafe {
            let id = LLVMGetSyncScopeID(self.ctx.raw(), scope.as_ptr(), scope.count_bytes());
            LLVMBuildFenceSyncScope(self.b.as_mut_ptr(), ordering.into(), id, c"".as_ptr());
        }
        Ok(())
    }

    /// An error unless the builder is positioned in a block.
    fn positioned(&self) -> Result<(), EmitError> {
        match self.b.get_insert_block() {
            Some(_) => Ok(()),
            None => Err(EmitError::Internal("an atomic outside a block".into())),
        }
    }

    /// A float `add`, `max` or `min` as a compare-and-swap loop: read the
    /// element, compute the update with the scalar op, and swap it in if
    /// the element still holds what was read; else again from what it
    /// holds.
    fn cas_loop(
        &self,
        op: AtomicOp,
        order: MemOrder,
        dtype: DType,
        ptr: PointerValue<'ctx>,
        value: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let binary = match op {
            AtomicOp::Add => BinaryOp::Add,
            AtomicOp::Max => BinaryOp::Max,
            AtomicOp::Min => BinaryOp::Min,
            other => return Err(EmitError::Internal(format!("a loop for atomic {other}"))),
        };
        let (success, failure) = orderings(order);
        let b = &self.b;
        let bits = self.int_type(dtype.bits());
        let entry = b
            .get_insert_block()
            .ok_or_else(|| EmitError::Internal("an atomic outside a block".into()))?;
        let f = entry
            .get_parent()
            .ok_or_else(|| EmitError::Internal("an atomic outside a function".into()))?;
        let first = b.build_load(bits, ptr, "first")?;
        let first_inst = first
            .as_instruction_value()
            .ok_or_else(|| EmitError::Internal("a load that is not an instruction".into()))?;
        first_inst
            .set_atomic_ordering(AtomicOrdering::Monotonic)
            .and_then(|()| first_inst.set_alignment(dtype.size_bytes() as u32))
            .map_err(|e| EmitError::Internal(format!("an atomic load: {e}")))?;
        let retry = self.ctx.append_basic_block(f, "atomic.retry");
        let done = self.ctx.append_basic_block(f, "atomic.done");
        b.build_unconditional_branch(retry)?;
        b.position_at_end(retry);
        let seen = b.build_phi(bits, "seen")?;
        seen.add_incoming(&[(&first, entry)]);
        let old_bits = seen.as_basic_value().into_int_value();
        let old = b.build_bit_cast(old_bits, self.reg_type(dtype), "old")?;
        let new = self.binary(binary, dtype, old, value, Nans::Canonical)?;
        let new_bits = b.build_bit_cast(new, bits, "new")?.into_int_value();
        let pair = b.build_cmpxchg(ptr, old_bits, new_bits, success, failure)?;
        let found = b.build_extract_value(pair, 0, "found")?.into_int_value();
        let swapped = b.build_extract_value(pair, 1, "swapped")?.into_int_value();
        let latch = b
            .get_insert_block()
            .ok_or_else(|| EmitError::Internal("an atomic outside a block".into()))?;
        seen.add_incoming(&[(&found, latch)]);
        b.build_conditional_branch(swapped, done, retry)?;
        b.position_at_end(done);
        Ok(old)
    }
}
