//! Checks of every access to global and shared memory: before each load,
//! store, atomic read-modify-write and compare-exchange through a pointer
//! of address space 1 (global) or 3 (shared), a call of the runtime's
//! [`RuntimeCall::Access`] with the address, the bytes, the instruction's alignment
//! and whether it writes or is atomic. The runtime refuses an access
//! outside every allocation, or misaligned (as hardware refuses a
//! misaligned `ld.v4`), and tracks shared memory and, between blocks,
//! global memory for races; a refused access never happens.
//!
//! After every atomic access of global memory, a call of [`RuntimeCall::Atomic`]
//! with its address, order and scope and whether it wrote (a
//! compare-and-swap: whether it swapped); after every `fence`, one of
//! [`RuntimeCall::Fence`]: the runtime's happens-before follows them. The scope is
//! the instruction's `syncscope` (`block`, `workgroup`, `wavefront`,
//! `singlethread` are the block's; none, `device`, `agent` and `one-as`
//! variants the device's), read from the printed instruction: LLVM's C API
//! gives a scope's number, not its name.

use crate::EmitError;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::llvm_sys::core::LLVMGetCmpXchgSuccessOrdering;
use inkwell::module::Module;
use inkwell::targets::TargetData;
use inkwell::types::{AnyTypeEnum, BasicTypeEnum};
use inkwell::values::{
    AnyValue, AsValueRef, BasicMetadataValueEnum, BasicValueEnum, FunctionValue, InstructionOpcode,
    InstructionValue, IntValue,
};
use inkwell::{AddressSpace, AtomicOrdering};
use tile_abi::emulation::{Access, Ordering, RuntimeCall, RUNTIME_SYMBOL};
use tile_ir::{MemOrder, MemScope};

/// LLVM's address space of global memory on both GPU targets.
const GLOBAL: u16 = 1;
/// LLVM's address space of shared memory (LDS) on both GPU targets.
const SHARED: u16 = 3;

/// Inserts the checks into every defined function of `module` but the
/// runtime calls themselves (`tile_emu.*`).
pub(super) fn instrument<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    data: &TargetData,
) -> Result<(), EmitError> {
    let b = ctx.create_builder();
    for f in module.get_functions() {
        let name = f.get_name().to_string_lossy().into_owned();
        if f.count_basic_blocks() == 0 || name.starts_with("tile_emu.") {
            continue;
        }
        instrument_function(ctx, module, &b, data, f)?;
    }
    Ok(())
}

fn instrument_function<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    b: &Builder<'ctx>,
    data: &TargetData,
    f: FunctionValue<'ctx>,
) -> Result<(), EmitError> {
    for block in f.get_basic_blocks() {
        let mut next = block.get_first_instruction();
        while let Some(inst) = next {
            next = inst.get_next_instruction();
            let after = inst.get_next_instruction();
            if let Some(access) = access_of(&inst, data)? {
                let pointer = access.pointer;
                let atomic_global =
                    access.flags & (Access::ATOMIC | Access::SHARED) == Access::ATOMIC;
                b.position_before(&inst);
                call_check(ctx, module, b, access)?;
                if let (true, Some(after)) = (atomic_global, after) {
                    b.position_before(&after);
                    let i64t = ctx.i64_type();
                    let address = b.build_ptr_to_int(pointer, i64t, "address")?;
                    let flags = i64t.const_int(ordering_of(&inst), false);
                    let wrote = wrote(ctx, b, &inst)?;
                    let zero = i64t.const_zero();
                    call_runtime(
                        ctx,
                        module,
                        b,
                        RuntimeCall::Atomic,
                        [address, flags, wrote, zero],
                    )?;
                }
            } else if let (InstructionOpcode::Fence, Some(after)) = (inst.get_opcode(), after) {
                b.position_before(&after);
                let i64t = ctx.i64_type();
                let flags = i64t.const_int(ordering_of(&inst), false);
                let zero = i64t.const_zero();
                call_runtime(
                    ctx,
                    module,
                    b,
                    RuntimeCall::Fence,
                    [flags, zero, zero, zero],
                )?;
            }
        }
    }
    Ok(())
}

/// A memory access of an instruction.
struct MemoryAccess<'ctx> {
    pointer: inkwell::values::PointerValue<'ctx>,
    bytes: u64,
    align: u32,
    flags: u64,
}

/// The access `inst` makes to global or shared memory, if any.
fn access_of<'ctx>(
    inst: &InstructionValue<'ctx>,
    data: &TargetData,
) -> Result<Option<MemoryAccess<'ctx>>, EmitError> {
    // An atomic load or store (the first read of a compare-and-swap loop)
    // is an atomic access: it races with no other atomic.
    let atomic = |inst: &InstructionValue<'ctx>| {
        let ordering = inst
            .get_atomic_ordering()
            .unwrap_or(AtomicOrdering::NotAtomic);
        if ordering == AtomicOrdering::NotAtomic {
            0
        } else {
            Access::ATOMIC
        }
    };
    let (pointer_at, value_type, flags) = match inst.get_opcode() {
        InstructionOpcode::Load => (0, basic(inst.get_type())?, atomic(inst)),
        InstructionOpcode::Store => (1, operand_type(inst, 0)?, Access::STORE | atomic(inst)),
        InstructionOpcode::AtomicRMW => (0, operand_type(inst, 1)?, Access::ATOMIC | Access::STORE),
        InstructionOpcode::AtomicCmpXchg => {
            (0, operand_type(inst, 1)?, Access::ATOMIC | Access::STORE)
        }
        _ => return Ok(None),
    };
    let Some(pointer) = inst
        .get_operand(pointer_at)
        .and_then(|o| o.value())
        .filter(|v| v.is_pointer_value())
        .map(|v| v.into_pointer_value())
    else {
        return Ok(None);
    };
    let space = pointer.get_type().get_address_space();
    let flags = if space == AddressSpace::from(GLOBAL) {
        flags
    } else if space == AddressSpace::from(SHARED) {
        flags | Access::SHARED
    } else {
        return Ok(None);
    };
    let bytes = data.get_store_size(&value_type);
    let align = if flags & Access::ATOMIC != 0 {
        // Atomics need their natural alignment.
        bytes as u32
    } else {
        inst.get_alignment().unwrap_or(1).max(1)
    };
    Ok(Some(MemoryAccess {
        pointer,
        bytes,
        align,
        flags,
    }))
}

fn basic(ty: AnyTypeEnum<'_>) -> Result<BasicTypeEnum<'_>, EmitError> {
    BasicTypeEnum::try_from(ty).map_err(|_| EmitError::internal("a memory access of no value type"))
}

fn operand_type<'ctx>(
    inst: &InstructionValue<'ctx>,
    at: u32,
) -> Result<BasicTypeEnum<'ctx>, EmitError> {
    inst.get_operand(at)
        .and_then(|o| o.value())
        .map(|v| v.get_type())
        .ok_or_else(|| EmitError::internal("a memory access without its value"))
}

/// The [`Ordering`] operand of an atomic instruction or a fence: its order
/// (sequential consistency as `acq_rel`, the strongest tile's model has)
/// and its `syncscope`.
fn ordering_of(inst: &InstructionValue<'_>) -> u64 {
    let ordering = if inst.get_opcode() == InstructionOpcode::AtomicCmpXchg {
        // SAFETY: `inst` is a live cmpxchg instruction.
        unsafe { LLVMGetCmpXchgSuccessOrdering(inst.as_value_ref()) }.into()
    } else {
        inst.get_atomic_ordering()
            .unwrap_or(AtomicOrdering::Monotonic)
    };
    let order = match ordering {
        AtomicOrdering::Acquire => MemOrder::Acquire,
        AtomicOrdering::Release => MemOrder::Release,
        AtomicOrdering::AcquireRelease | AtomicOrdering::SequentiallyConsistent => MemOrder::AcqRel,
        _ => MemOrder::Relaxed,
    };
    let text = inst.print_to_string().to_string();
    let block = ["\"block", "\"workgroup", "\"wavefront", "\"singlethread"];
    let scope = if block
        .iter()
        .any(|s| text.contains(&format!("syncscope({s}")))
    {
        MemScope::Cta
    } else {
        MemScope::Gpu
    };
    Ordering::encode(order, scope)
}

/// Whether atomic `inst` wrote, as an `i64` after it: 1 for an update or a
/// store, 0 for a load, a compare-and-swap's success bit.
fn wrote<'ctx>(
    ctx: &'ctx Context,
    b: &Builder<'ctx>,
    inst: &InstructionValue<'ctx>,
) -> Result<IntValue<'ctx>, EmitError> {
    let i64t = ctx.i64_type();
    match inst.get_opcode() {
        InstructionOpcode::AtomicCmpXchg => {
            let pair = BasicValueEnum::try_from(inst.as_any_value_enum())
                .map_err(|_| EmitError::internal("a cmpxchg of no value"))?
                .into_struct_value();
            let swapped = b.build_extract_value(pair, 1, "swapped")?.into_int_value();
            Ok(b.build_int_z_extend(swapped, i64t, "wrote")?)
        }
        InstructionOpcode::Load => Ok(i64t.const_zero()),
        _ => Ok(i64t.const_int(1, false)),
    }
}

/// `runtime(Access, address, bytes, align, flags)` before the builder's
/// position.
fn call_check<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    b: &Builder<'ctx>,
    access: MemoryAccess<'ctx>,
) -> Result<(), EmitError> {
    let i64t = ctx.i64_type();
    let address = b.build_ptr_to_int(access.pointer, i64t, "address")?;
    let operands = [
        address,
        i64t.const_int(access.bytes, false),
        i64t.const_int(u64::from(access.align), false),
        i64t.const_int(access.flags, false),
    ];
    call_runtime(ctx, module, b, RuntimeCall::Access, operands)
}

/// `runtime(op, a, b, c, d)` at the builder's position.
fn call_runtime<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    b: &Builder<'ctx>,
    op: RuntimeCall,
    operands: [IntValue<'ctx>; 4],
) -> Result<(), EmitError> {
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let ptr = ctx.ptr_type(inkwell::AddressSpace::default());
    let runtime = module
        .get_global(RUNTIME_SYMBOL)
        .ok_or_else(|| EmitError::internal("the emulation runtime's pointer is missing"))?;
    let f = b
        .build_load(ptr, runtime.as_pointer_value(), "runtime")?
        .into_pointer_value();
    let [a, bb, c, d] = operands;
    let args: [BasicMetadataValueEnum; 5] = [
        i32t.const_int(op as u64, false).into(),
        a.into(),
        bb.into(),
        c.into(),
        d.into(),
    ];
    let ty = i64t.fn_type(
        &[
            i32t.into(),
            i64t.into(),
            i64t.into(),
            i64t.into(),
            i64t.into(),
        ],
        false,
    );
    b.build_indirect_call(ty, f, &args, "runtime.call")?;
    Ok(())
}
