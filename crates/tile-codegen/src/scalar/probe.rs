//! Host probes of the emitter's scalar code: one op of the thread-level
//! program compiled for the host as `extern "C" fn(u64, u64, u64) -> u64` on
//! raw bits, so tests can run the exact LLVM IR the GPU targets receive for
//! that op and compare it with `tile_ir::eval` bit for bit.

use super::{Nans, ScalarEmitter};
use crate::target::{Machine, Target};
use crate::EmitError;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::BasicValueEnum;
use inkwell::OptimizationLevel;
use tile_abi::HostIsa;
use tile_ir::DType;
use tile_thread::program::ThreadOpKind;

/// The name of the probe function in the module of [`scalar_probe`].
pub const PROBE: &str = "probe";

/// A host module defining [`PROBE`]: `op` on operands of `operands` dtypes
/// given as bits in the low bits of up to three `u64`s; the result's bits
/// come back zero-extended. Supported ops: unary, binary, `cmp`, `select`,
/// `fma` and `cast`.
pub fn scalar_probe<'ctx>(
    ctx: &'ctx Context,
    op: &ThreadOpKind,
    operands: &[DType],
) -> Result<Module<'ctx>, EmitError> {
    math_probe(ctx, op, operands, false)
}

/// [`scalar_probe`] with the math library chosen: the fast one
/// ([`crate::CodegenOptions::fast_math`]) when `fast_math`.
pub fn math_probe<'ctx>(
    ctx: &'ctx Context,
    op: &ThreadOpKind,
    operands: &[DType],
    fast_math: bool,
) -> Result<Module<'ctx>, EmitError> {
    let target = Target::Host(probe_isa()?);
    probe_as(ctx, op, operands, fast_math, target)
}

/// [`math_probe`] with the instructions the emitter chooses for `like`
/// (`llvm.minimum`/`llvm.maximum` where [`Target::uses_min_max_intrinsics`], calls
/// of the exact library where [`Target::outlines_exact_math`]), still
/// compiled for the host: so that tests run a GPU target's own LLVM IR for
/// the op.
pub fn probe_as<'ctx>(
    ctx: &'ctx Context,
    op: &ThreadOpKind,
    operands: &[DType],
    fast_math: bool,
    like: Target,
) -> Result<Module<'ctx>, EmitError> {
    let target = Target::Host(probe_isa()?);
    let machine = Machine::new(target, OptimizationLevel::Default)?;
    let module = ctx.create_module("probe");
    machine.configure(&module);
    let mut e = ScalarEmitter::new(ctx, &module, target, fast_math);
    e.ieee_min_max = like.uses_min_max_intrinsics();
    e.outline_exact_math = like.outlines_exact_math();
    let i64t = ctx.i64_type();
    let f = module.add_function(
        PROBE,
        i64t.fn_type(&[i64t.into(), i64t.into(), i64t.into()], false),
        None,
    );
    e.b.position_at_end(ctx.append_basic_block(f, "entry"));
    let mut args = Vec::new();
    for (i, &d) in operands.iter().enumerate() {
        let raw = f
            .get_nth_param(i as u32)
            .ok_or_else(|| EmitError::internal("probe parameter"))?
            .into_int_value();
        let bits =
            e.b.build_int_truncate_or_bit_cast(raw, e.int_type(d.bits().max(1)), "bits")?;
        let bits = if d.is_bool() {
            e.b.build_int_truncate(raw, ctx.bool_type(), "b")?
        } else {
            bits
        };
        args.push(e.b.build_bit_cast(bits, e.reg_type(d), "arg")?);
    }
    let arg = |i: usize| -> Result<BasicValueEnum<'ctx>, EmitError> {
        args.get(i).copied().ok_or_else(|| {
            EmitError::Internal(format!("the probe of `{}` needs operand {i}", op.name()))
        })
    };
    let dtype = |i: usize| -> Result<DType, EmitError> {
        operands.get(i).copied().ok_or_else(|| {
            EmitError::Internal(format!("the probe of `{}` needs operand {i}", op.name()))
        })
    };
    let (result, result_dtype) = match op {
        ThreadOpKind::Unary(u) => (e.unary(*u, dtype(0)?, arg(0)?, Nans::Canonical)?, dtype(0)?),
        ThreadOpKind::Binary(o) => (
            e.binary(*o, dtype(0)?, arg(0)?, arg(1)?, Nans::Canonical)?,
            dtype(0)?,
        ),
        ThreadOpKind::Cmp(p) => (e.compare(*p, dtype(0)?, arg(0)?, arg(1)?)?, DType::Bool),
        ThreadOpKind::Select => (e.select(arg(0)?, arg(1)?, arg(2)?)?, dtype(1)?),
        ThreadOpKind::Fma => (
            e.fma(dtype(0)?, arg(0)?, arg(1)?, arg(2)?, Nans::Canonical)?,
            dtype(0)?,
        ),
        ThreadOpKind::Cast { to } => (e.cast(arg(0)?, dtype(0)?, *to, Nans::Canonical)?, *to),
        ThreadOpKind::Bitcast { to } => (e.bitcast(arg(0)?, dtype(0)?, *to)?, *to),
        other => {
            return Err(EmitError::Unsupported {
                what: format!("a host probe of `{}`", other.name()),
            })
        }
    };
    let bits =
        e.b.build_bit_cast(result, e.int_type(result_dtype.bits().max(1)), "rbits")?;
    let bits = if result_dtype.is_bool() {
        e.b.build_int_z_extend(result.into_int_value(), i64t, "r")?
    } else {
        e.b.build_int_z_extend_or_bit_cast(bits.into_int_value(), i64t, "r")?
    };
    e.b.build_return(Some(&bits))?;
    module.verify().map_err(|m| EmitError::Verify {
        kernel: PROBE.to_string(),
        target,
        message: m.to_string(),
    })?;
    Ok(module)
}

/// The instruction-set level probes are compiled for: the best this CPU
/// runs, so they can be JIT-compiled and run here.
fn probe_isa() -> Result<HostIsa, EmitError> {
    HostIsa::best_here().ok_or_else(|| EmitError::Unsupported {
        what: format!("host probes on this machine ({})", std::env::consts::ARCH),
    })
}
