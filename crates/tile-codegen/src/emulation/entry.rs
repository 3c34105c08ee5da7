//! The entry of one emulated GPU thread and the image's manifest: how the
//! kernel's parameters are read from what a driver hands it.
//!
//! On NVPTX, CUDA's `kernelParams` is one pointer per parameter, each to the
//! parameter's bytes. On AMDGPU, the kernarg segment holds the parameters at
//! the offsets the AMDGPU backend gives them: each at the next multiple of
//! its ABI alignment in the *AMDGPU* data layout, sized as allocated there,
//! which is what the code object's metadata lists (`.args[].offset`).

use crate::EmitError;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValue, FunctionValue};
use inkwell::{AddressSpace, GlobalVisibility};
use tile_abi::emulation::{
    ArgsAbi, ParamSlot, LAUNCH_SYMBOL, MANIFEST_LEN_SYMBOL, MANIFEST_SYMBOL,
};

/// The parameter slots of `kernel` under `abi`; `gpu_data` is the data
/// layout of the GPU target the module was made for.
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
        .map(|ty| {
            let ty = BasicTypeEnum::try_from(*ty).ok();
            let (size, align) = ty.map_or((0, 1), |t| {
                (
                    gpu_data.get_abi_size(&t),
                    u64::from(gpu_data.get_abi_alignment(&t)),
                )
            });
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
        let value = b.build_load(ty, at, "arg")?;
        // The driver's buffers need not be aligned for the parameter.
        value
            .as_instruction_value()
            .ok_or_else(|| EmitError::internal("a parameter load"))?
            .set_alignment(1)
            .map_err(|e| EmitError::Internal(e.to_string()))?;
        values.push(value.into());
    }
    b.build_call(kernel, &values, "")?;
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
