//! Checks of every access to global and shared memory: before each load,
//! store, atomic read-modify-write and compare-exchange through a pointer
//! of address space 1 (global) or 3 (shared), a call of the runtime's
//! [`Op::Access`] with the address, the bytes, the instruction's alignment
//! and whether it writes or is atomic. The runtime refuses an access
//! outside every allocation, or misaligned (as hardware refuses a
//! misaligned `ld.v4`), and tracks shared memory and, between blocks,
//! global memory for races; a refused access never happens.

use crate::EmitError;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::targets::TargetData;
use inkwell::types::{AnyTypeEnum, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, InstructionOpcode, InstructionValue};
use inkwell::{AddressSpace, AtomicOrdering};
use tile_abi::emulation::{Access, Op, RUNTIME_SYMBOL};

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
            if let Some(access) = access_of(&inst, data)? {
                b.position_before(&inst);
                call_check(ctx, module, b, access)?;
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

/// `runtime(Access, address, bytes, align, flags)` before the builder's
/// position.
fn call_check<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    b: &Builder<'ctx>,
    access: MemoryAccess<'ctx>,
) -> Result<(), EmitError> {
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let ptr = ctx.ptr_type(inkwell::AddressSpace::default());
    let runtime = module
        .get_global(RUNTIME_SYMBOL)
        .ok_or_else(|| EmitError::internal("the emulation runtime's pointer is missing"))?;
    let f = b
        .build_load(ptr, runtime.as_pointer_value(), "runtime")?
        .into_pointer_value();
    let address = b.build_ptr_to_int(access.pointer, i64t, "address")?;
    let args: [BasicMetadataValueEnum; 5] = [
        i32t.const_int(Op::Access as u64, false).into(),
        address.into(),
        i64t.const_int(access.bytes, false).into(),
        i64t.const_int(u64::from(access.align), false).into(),
        i64t.const_int(access.flags, false).into(),
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
    b.build_indirect_call(ty, f, &args, "check")?;
    Ok(())
}
