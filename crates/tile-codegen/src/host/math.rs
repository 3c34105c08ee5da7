//! The math functions of host code are the oracle's own.
//!
//! The scalar emitter calls `tile.math.<op>.f64` for the functions of the
//! math library (`UnaryOp::MATH`, `BinaryOp::MATH`), and defines it from
//! LLVM arithmetic for the GPUs (within a few f64 ulps of the oracle,
//! docs/backends.md). On the host that would be a needless approximation:
//! the module declares these functions before any code is emitted (so the
//! emitter calls the declarations), and then defines each as a call of the
//! exported table `tile_host_math` with the function's slot, which the
//! runtime fills with the oracle's functions (`tile_ir::eval`, the `libm`
//! crate's f64 value) when it loads the code. Every dtype's result is the
//! interpreter's, bit for bit, and the shared object needs no math library.
//! `exp` is the exception: it is defined in LLVM IR by `super::exp`, a
//! bit-exact replica of the oracle's that LLVM inlines and vectorizes.

use super::error::HostError;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::BasicMetadataValueEnum;
use inkwell::AddressSpace;
use tile_abi::host::{MATH_TABLE_SLOTS, MATH_TABLE_SYMBOL};
use tile_ir::{BinaryOp, UnaryOp};

/// Each function of the table: the name the scalar emitter gives it, its
/// number of f64 parameters, the table entry of that arity and its slot
/// there.
fn functions() -> impl Iterator<Item = (String, usize, usize)> {
    let unary = UnaryOp::MATH
        .iter()
        .enumerate()
        .map(|(slot, op)| (format!("tile.math.{}.f64", op.name()), 1, slot));
    let binary = BinaryOp::MATH
        .iter()
        .enumerate()
        .map(|(slot, op)| (format!("tile.math.{}.f64", op.name()), 2, slot));
    unary.chain(binary)
}

/// Declares every math function in `module`, before any code is emitted,
/// so that the emitter calls the declarations instead of defining them.
pub(super) fn declare<'ctx>(ctx: &'ctx Context, module: &Module<'ctx>) {
    let f64t = ctx.f64_type();
    for (name, arity, _) in functions() {
        module.add_function(
            &name,
            f64t.fn_type(&vec![f64t.into(); arity], false),
            Some(Linkage::External),
        );
    }
}

/// Adds the exported, zeroed table and defines every declared math function
/// as an internal call of the table's entry of its arity with its slot.
pub(super) fn define<'ctx>(ctx: &'ctx Context, module: &Module<'ctx>) -> Result<(), HostError> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    let table_type = ptr.array_type(MATH_TABLE_SLOTS as u32);
    let table = module.add_global(table_type, None, MATH_TABLE_SYMBOL);
    table.set_initializer(&table_type.const_zero());
    let (f64t, i32t, i64t) = (ctx.f64_type(), ctx.i32_type(), ctx.i64_type());
    let b = ctx.create_builder();
    let exp = format!("tile.math.{}.f64", UnaryOp::Exp.name());
    for (name, arity, slot) in functions() {
        let Some(f) = module.get_function(&name) else {
            continue;
        };
        if name == exp {
            // A replica of the oracle's function that LLVM can vectorize.
            super::exp::define(ctx, f)?;
            continue;
        }
        f.set_linkage(Linkage::Internal);
        b.position_at_end(ctx.append_basic_block(f, "entry"));
        // Entry 0 of the table takes one operand, entry 1 two.
        let entry = i64t.const_int(arity as u64 - 1, false);
        // SAFETY (of the emitted code, not of this call): the index is in
        // bounds of the table's type.
        let at = unsafe {
            b.build_in_bounds_gep(
                table_type,
                table.as_pointer_value(),
                &[i64t.const_zero(), entry],
                "entry",
            )
        }?;
        let target = b.build_load(ptr, at, "function")?.into_pointer_value();
        let mut args = vec![i32t.const_int(slot as u64, false).into()];
        args.extend(f.get_param_iter().map(BasicMetadataValueEnum::from));
        let mut params: Vec<BasicMetadataTypeEnum> = vec![i32t.into()];
        params.extend(std::iter::repeat_n(
            BasicMetadataTypeEnum::from(f64t),
            arity,
        ));
        let call = b.build_indirect_call(f64t.fn_type(&params, false), target, &args, &name)?;
        let value = call
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| HostError::internal("a math function returned nothing"))?;
        b.build_return(Some(&value))?;
    }
    Ok(())
}
