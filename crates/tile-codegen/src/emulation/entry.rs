//! The entry of one emulated GPU thread and the image's manifest: how the
//! kernel's parameters are read from what a driver hands it.
//!
//! On NVPTX, CUDA's `kernelParams` is one pointer per parameter, each to the
//! parameter's bytes. On AMDGPU, the kernarg segment holds the parameters at
//! the offsets the AMDGPU backend gives them: each at the next multiple of
//! its ABI alignment in the *AMDGPU* data layout, sized as allocated there,
//! which is what the code object's metadata lists (`.args[].offset`).

use crate::EmitError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValue, FunctionValue};
use inkwell::{AddressSpace, GlobalVisibility};
use tile_abi::emulation::{
    ArgsAbi, ParamSlot, LAUNCH_SYMBOL, MANIFEST_LEN_SYMBOL, MANIFEST_SYMBOL,
};

/// The `byval` attribute of parameter `i` of `kernel` (a tensor map's
/// `byval([128 x i8])`), if it has one.
fn byval(kernel: FunctionValue<'_>, i: usize) -> Option<Attribute> {
    let kind = Attribute::get_named_enum_kind_id("byval");
    kernel.get_enum_attribute(AttributeLoc::Param(i as u32), kind)
}

/// The alignment parameter `i` of `kernel` declares (1 without one).
fn byval_align(kernel: FunctionValue<'_>, i: usize) -> u32 {
    let kind = Attribute::get_named_enum_kind_id("align");
    kernel
        .get_enum_attribute(AttributeLoc::Param(i as u32), kind)
        .map_or(1, |a| a.get_enum_value() as u32)
}

/// The parameter slots of `kernel` under `abi`; `gpu_data` is the data
/// layout of the GPU target the module was made for. A by-value parameter
/// takes the bytes it points to.
pub(super) fn param_slots(
    kernel: FunctionValue<'_>,
    abi: ArgsAbi,
    gpu_data: &TargetData,
) -> Vec<ParamSlot> {
    let mut offset = 0u64;
    kernel
        .get_type()
        .get_param_types()
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            let of = |t: BasicTypeEnum| {
                (
                    gpu_data.get_abi_size(&t),
                    u64::from(gpu_data.get_abi_alignment(&t)),
                )
            };
            let (size, align) = match byval(kernel, i) {
                Some(attribute) => BasicTypeEnum::try_from(attribute.get_type_value())
                    .ok()
                    .map_or((0, 1), of),
                None => BasicTypeEnum::try_from(*ty).ok().map_or((0, 1), of),
            };
            match abi {
                ArgsAbi::Pointers => ParamSlot {
                    offset: 0,
                    size: size as usize,
                },
                ArgsAbi::Kernarg => {
                    offset = offset.next_multiple_of(align.max(1));
                    let slot = ParamSlot {
                        offset: offset as usize,
                        size: size as usize,
                    };
                    offset += size;
                    slot
                }
            }
        })
        .collect()
}

/// Defines `tile_emu_launch(ptr args)`: reads each parameter of `kernel`
/// from `args` per `abi` and `slots`, and calls it.
pub(super) fn define_launch<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    kernel: FunctionValue<'ctx>,
    abi: ArgsAbi,
    slots: &[ParamSlot],
) -> Result<(), EmitError> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    let (i8t, i64t) = (ctx.i8_type(), ctx.i64_type());
    let launch = module.add_function(
        LAUNCH_SYMBOL,
        ctx.void_type().fn_type(&[ptr.into()], false),
        None,
    );
    let b = ctx.create_builder();
    b.position_at_end(ctx.append_basic_block(launch, "entry"));
    let args = launch
        .get_first_param()
        .ok_or_else(|| EmitError::internal("the launch entry's parameter"))?
        .into_pointer_value();
    let mut values: Vec<BasicMetadataValueEnum> = Vec::new();
    let types = kernel.get_type().get_param_types();
    for (i, (ty, slot)) in types.iter().zip(slots).enumerate() {
        let ty = BasicTypeEnum::try_from(*ty)
            .map_err(|_| EmitError::internal("a kernel parameter of no value type"))?;
        // SAFETY (of the generated code): the driver passes one pointer per
        // parameter, or a kernarg segment holding every slot.
        let at = match abi {
            ArgsAbi::Pointers => {
                let cell = unsafe {
                    b.build_in_bounds_gep(ptr, args, &[i64t.const_int(i as u64, false)], "cell")?
                };
                b.build_load(ptr, cell, "param")?.into_pointer_value()
            }
            ArgsAbi::Kernarg => unsafe {
                b.build_in_bounds_gep(
                    i8t,
                    args,
                    &[i64t.const_int(slot.offset as u64, false)],
                    "param",
                )?
            },
        };
        if let Some(attribute) = byval(kernel, i) {
            // A by-value parameter: its bytes, copied to a slot aligned as
            // the callee's declaration says (the driver's buffer need not
            // be), which the call passes by value.
            let len = match attribute.get_type_value() {
                inkwell::types::AnyTypeEnum::ArrayType(array) => array.len(),
                _ => return Err(EmitError::internal("a by-value parameter not of bytes")),
            };
            let bytes = i8t.array_type(len);
            let slot = b.build_alloca(bytes, "byval")?;
            let align = byval_align(kernel, i);
            slot.as_instruction_value()
                .ok_or_else(|| EmitError::internal("an alloca"))?
                .set_alignment(align)
                .map_err(|e| EmitError::Internal(e.to_string()))?;
            let size = bytes
                .size_of()
                .ok_or_else(|| EmitError::internal("a by-value parameter of no size"))?;
            b.build_memcpy(slot, align, at, 1, size)
                .map_err(|e| EmitError::Internal(e.to_string()))?;
            values.push(slot.into());
            continue;
        }
        let value = b.build_load(ty, at, "arg")?;
        // The driver's buffers need not be aligned for the parameter.
        value
            .as_instruction_value()
            .ok_or_else(|| EmitError::internal("a parameter load"))?
            .set_alignment(1)
            .map_err(|e| EmitError::Internal(e.to_string()))?;
        values.push(value.into());
    }
    let call = b.build_call(kernel, &values, "")?;
    // A by-value argument is passed as the callee's declaration says: the
    // call site must say it too, alignment included, or the host ABI
    // passes a plain pointer or places the copy elsewhere.
    let align_kind = Attribute::get_named_enum_kind_id("align");
    for i in 0..values.len() {
        if let Some(byval) = byval(kernel, i) {
            call.add_attribute(AttributeLoc::Param(i as u32), byval);
            if let Some(align) =
                kernel.get_enum_attribute(AttributeLoc::Param(i as u32), align_kind)
            {
                call.add_attribute(AttributeLoc::Param(i as u32), align);
            }
        }
    }
    b.build_return(None)?;
    Ok(())
}

/// Adds the manifest's text as `tile_emu_manifest` and its length.
pub(super) fn define_manifest<'ctx>(ctx: &'ctx Context, module: &Module<'ctx>, text: &str) {
    let bytes = ctx.const_string(text.as_bytes(), false);
    let global = module.add_global(bytes.get_type(), None, MANIFEST_SYMBOL);
    global.set_initializer(&bytes);
    global.set_constant(true);
    global.set_linkage(Linkage::External);
    global.set_visibility(GlobalVisibility::Protected);
    let i64t = ctx.i64_type();
    let len = module.add_global(i64t, None, MANIFEST_LEN_SYMBOL);
    len.set_initializer(&i64t.const_int(text.len() as u64, false));
    len.set_constant(true);
    len.set_visibility(GlobalVisibility::Protected);
}
