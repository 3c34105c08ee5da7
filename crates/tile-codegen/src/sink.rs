//! Each pure instruction moved down to just before its first use in its
//! block: on NVPTX the order in which instruction selection writes the PTX
//! (it schedules by source order) and from which ptxas starts; on AMDGPU the
//! order its machine scheduler starts from.
//!
//! The thread-level program computes a tile op for all of a thread's
//! elements before the next op, so a row kernel computes, say, the 32
//! masks of its 32 stores before the first store, and each mask stays live
//! until its store: in registers, as predicates beyond ptxas's few. LLVM's
//! optimizations keep that order, and NVPTX has no pressure-aware
//! scheduler before ptxas. AMDGPU's scheduler tracks pressure but reorders
//! within limits, and from that order it left a K loop's conversions of
//! every element of its operands live at once. Moved next to its use, each
//! value lives a few instructions. Loads, calls (but those marked as
//! touching no memory) and everything else that touches memory or has
//! effects stay where they are, so the loads' early start (their
//! latency hidden behind the arithmetic) is kept; only values no phi reads
//! move, and never across blocks.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::module::Module;
use inkwell::values::{AnyValueEnum, CallSiteValue, InstructionOpcode, InstructionValue};

/// Sinks every pure instruction of `module`'s functions to its first use
/// in its block (see the module doc).
pub(crate) fn sink_to_uses(module: &Module<'_>) {
    let builder = module.get_context().create_builder();
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            sink_block(&builder, block);
        }
    }
}

/// [`sink_to_uses`] for one block: bottom-up, so that an instruction's
/// operands are placed after the instruction itself has moved.
fn sink_block<'ctx>(builder: &Builder<'ctx>, block: BasicBlock<'ctx>) {
    let mut order: Vec<InstructionValue<'ctx>> = block.get_instructions().collect();
    let mut at = order.len();
    while at > 0 {
        at -= 1;
        let instruction = order[at];
        if !moves_freely(instruction) {
            continue;
        }
        let Some(users) = users_in(instruction, block) else {
            continue;
        };
        let Some(first) = order[at + 1..]
            .iter()
            .position(|i| users.contains(i))
            .map(|offset| at + 1 + offset)
        else {
            continue;
        };
        if first == at + 1 {
            continue;
        }
        move_before(builder, instruction, order[first]);
        order.remove(at);
        order.insert(first - 1, instruction);
    }
}

/// Whether `instruction` may be computed anywhere its operands are
/// available and its users after it: pure, or a call that touches no
/// memory.
pub(crate) fn moves_freely(instruction: InstructionValue<'_>) -> bool {
    is_pure(instruction.get_opcode()) || is_memoryless_call(instruction)
}

/// The instructions that use `instruction`, if all are in `block` and none
/// is a phi.
fn users_in<'ctx>(
    instruction: InstructionValue<'ctx>,
    block: BasicBlock<'ctx>,
) -> Option<Vec<InstructionValue<'ctx>>> {
    users_of(instruction).filter(|users| users.iter().all(|u| u.get_parent() == Some(block)))
}

/// The instructions that use `instruction`, if every user is one and none
/// is a phi.
pub(crate) fn users_of(instruction: InstructionValue<'_>) -> Option<Vec<InstructionValue<'_>>> {
    let mut users = Vec::new();
    let mut next = instruction.get_first_use();
    while let Some(u) = next {
        let user = as_instruction(u.get_user())?;
        if user.get_opcode() == InstructionOpcode::Phi {
            return None;
        }
        users.push(user);
        next = u.get_next_use();
    }
    Some(users)
}

/// Moves `instruction` to just before `before`, keeping its name.
pub(crate) fn move_before<'ctx>(
    builder: &Builder<'ctx>,
    instruction: InstructionValue<'ctx>,
    before: InstructionValue<'ctx>,
) {
    let name = instruction
        .get_name()
        .map(|n| n.to_string_lossy().into_owned());
    instruction.remove_from_basic_block();
    builder.position_before(&before);
    builder.insert_instruction(&instruction, name.as_deref());
}

/// The instruction a user value is.
pub(crate) fn as_instruction(user: AnyValueEnum<'_>) -> Option<InstructionValue<'_>> {
    match user {
        AnyValueEnum::InstructionValue(i) => Some(i),
        AnyValueEnum::IntValue(v) => v.as_instruction(),
        AnyValueEnum::FloatValue(v) => v.as_instruction(),
        AnyValueEnum::PointerValue(v) => v.as_instruction(),
        AnyValueEnum::StructValue(v) => v.as_instruction(),
        AnyValueEnum::VectorValue(v) => v.as_instruction(),
        AnyValueEnum::ArrayValue(v) => v.as_instruction(),
        AnyValueEnum::PhiValue(v) => Some(v.as_instruction()),
        _ => None,
    }
}

/// Whether `instruction` is a call that reads and writes no memory
/// (`memory(none)`, as the GPU emitter marks its conversions and
/// optimization barriers of inline PTX).
fn is_memoryless_call(instruction: InstructionValue<'_>) -> bool {
    if instruction.get_opcode() != InstructionOpcode::Call {
        return false;
    }
    let Ok(call) = CallSiteValue::try_from(instruction) else {
        return false;
    };
    let memory = Attribute::get_named_enum_kind_id("memory");
    call.get_enum_attribute(AttributeLoc::Function, memory)
        .is_some_and(|a| a.get_enum_value() == 0)
}

/// Whether an instruction of `opcode` computes from its operands alone:
/// no memory, no effects, no control flow.
fn is_pure(opcode: InstructionOpcode) -> bool {
    use InstructionOpcode as O;
    matches!(
        opcode,
        O::Add
            | O::Sub
            | O::Mul
            | O::And
            | O::Or
            | O::Xor
            | O::Shl
            | O::LShr
            | O::AShr
            | O::FAdd
            | O::FSub
            | O::FMul
            | O::FDiv
            | O::FRem
            | O::FNeg
            | O::ICmp
            | O::FCmp
            | O::Select
            | O::GetElementPtr
            | O::Trunc
            | O::ZExt
            | O::SExt
            | O::FPTrunc
            | O::FPExt
            | O::FPToUI
            | O::FPToSI
            | O::UIToFP
            | O::SIToFP
            | O::PtrToInt
            | O::IntToPtr
            | O::BitCast
            | O::AddrSpaceCast
            | O::ExtractElement
            | O::InsertElement
            | O::ShuffleVector
            | O::ExtractValue
            | O::InsertValue
            | O::Freeze
    )
}

/// The blocks of `@f` in the module `ir` after `pass`, each as its name
/// and the names of its named instructions (the passes' tests).
#[cfg(test)]
pub(crate) fn named_blocks_after(ir: &str, pass: fn(&Module<'_>)) -> Vec<(String, Vec<String>)> {
    let ctx = inkwell::context::Context::create();
    let buffer =
        inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "m");
    let module = ctx.create_module_from_ir(buffer).unwrap();
    pass(&module);
    module.verify().unwrap();
    let f = module.get_function("f").unwrap();
    f.get_basic_blocks()
        .into_iter()
        .map(|b| {
            let names = b
                .get_instructions()
                .filter_map(|i| i.get_name().map(|n| n.to_string_lossy().into_owned()))
                .filter(|n| !n.is_empty())
                .collect();
            (b.get_name().to_string_lossy().into_owned(), names)
        })
        .collect()
}

/// The named instructions of the block `name` among `blocks` (as
/// [`named_blocks_after`] gives them).
#[cfg(test)]
pub(crate) fn block_named(blocks: &[(String, Vec<String>)], name: &str) -> Vec<String> {
    let found = blocks.iter().find(|(block, _)| block == name);
    found.map(|(_, names)| names.clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// The instructions of `@f`'s blocks after sinking, one per line.
    fn sunk(ir: &str) -> Vec<String> {
        let ctx = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "m");
        let module = ctx.create_module_from_ir(buffer).unwrap();
        sink_to_uses(&module);
        module.verify().unwrap();
        let f = module.get_function("f").unwrap();
        f.get_basic_blocks()
            .into_iter()
            .flat_map(|b| b.get_instructions())
            .map(|i| i.to_string().trim_matches('"').trim().to_string())
            .collect()
    }

    /// Arithmetic moves to its first use, operands before it; a load stays
    /// where it was, and so does a value a phi reads.
    #[test]
    fn pure_instructions_move_to_their_first_use() {
        let ir = "define void @f(i32 %x, i32 %y, ptr %p, ptr %q) {
entry:
  %a = add i32 %x, 1
  %b = mul i32 %y, 3
  %c = add i32 %b, 7
  %l = load i32, ptr %q
  %d = add i32 %x, 2
  store i32 %c, ptr %p
  store i32 %a, ptr %p
  store i32 %l, ptr %p
  br label %next
next:
  %phi = phi i32 [ %d, %entry ]
  store i32 %phi, ptr %p
  ret void
}
";
        assert_eq!(
            sunk(ir),
            [
                "%l = load i32, ptr %q, align 4",
                "%d = add i32 %x, 2",
                "%b = mul i32 %y, 3",
                "%c = add i32 %b, 7",
                "store i32 %c, ptr %p, align 4",
                "%a = add i32 %x, 1",
                "store i32 %a, ptr %p, align 4",
                "store i32 %l, ptr %p, align 4",
                "br label %next",
                "%phi = phi i32 [ %d, %entry ]",
                "store i32 %phi, ptr %p, align 4",
                "ret void",
            ]
        );
    }
}
