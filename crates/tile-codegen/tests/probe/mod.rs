//! Running single ops of the emitter on the host (shared by the scalar and
//! fast-math tests).

use inkwell::context::Context;
use inkwell::execution_engine::JitFunction;
use inkwell::module::Module;
use inkwell::OptimizationLevel;
use tile_codegen::gpu::emit;
use tile_codegen::scalar::probe::{math_probe, probe_as, PROBE};
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, EmitError};
use tile_codegen::{Gfx, Sm, Target};
use tile_ir::{DType, UnaryOp};
use tile_thread::program::{Program, ThreadOpKind};

type Probe = unsafe extern "C" fn(u64, u64, u64) -> u64;

/// Runs `op` on each input triple through a JIT-compiled probe with the
/// exact or the fast math library; `None` when the emitter rejects the op.
pub fn run_probe(
    op: &ThreadOpKind,
    dtypes: &[DType],
    inputs: &[[u64; 3]],
    fast_math: bool,
) -> Option<Vec<u64>> {
    run_probe_with(op, dtypes, inputs, |ctx| {
        math_probe(ctx, op, dtypes, fast_math)
    })
}

/// [`run_probe`] with the exact library and the instructions the emitter
/// chooses for `like` (`probe_as`).
#[allow(dead_code)] // only emit_scalar.rs uses it
pub fn run_probe_as(
    op: &ThreadOpKind,
    dtypes: &[DType],
    inputs: &[[u64; 3]],
    like: Target,
) -> Option<Vec<u64>> {
    run_probe_with(op, dtypes, inputs, |ctx| {
        probe_as(ctx, op, dtypes, false, like)
    })
}

/// Runs the probe module `build` makes on each input triple.
fn run_probe_with(
    op: &ThreadOpKind,
    dtypes: &[DType],
    inputs: &[[u64; 3]],
    build: impl for<'c> FnOnce(&'c Context) -> Result<Module<'c>, EmitError>,
) -> Option<Vec<u64>> {
    let ctx = Context::create();
    let module = match build(&ctx) {
        Ok(m) => m,
        Err(EmitError::Unsupported { .. }) => return None,
        Err(e) => panic!("{} on {dtypes:?}: {e}", op.name()),
    };
    let engine = module
        .create_jit_execution_engine(OptimizationLevel::Default)
        .expect("a JIT for the host");
    // SAFETY: `probe` is defined by `math_probe` with exactly this
    // signature, and the engine outlives every call below.
    let f: JitFunction<Probe> = unsafe { engine.get_function(PROBE) }.expect("the probe function");
    // SAFETY: the probe reads its three integer arguments and returns one;
    // it touches no memory.
    Some(
        inputs
            .iter()
            .map(|a| unsafe { f.call(a[0], a[1], a[2]) })
            .collect(),
    )
}

/// The accuracy bound of the exact library's `op` for f64 results, in ulps
/// (docs/backends.md): the largest error measured on the dense samples of
/// tests/emit_math.rs. Every narrower dtype is within 1 ulp.
#[allow(dead_code)] // emit_fast_math.rs does not use it
pub fn f64_bound(op: UnaryOp) -> u64 {
    match op {
        UnaryOp::Erf | UnaryOp::Erfc => 8,
        UnaryOp::Tanh
        | UnaryOp::Log2
        | UnaryOp::Tan
        | UnaryOp::Asinh
        | UnaryOp::Acosh
        | UnaryOp::Atanh
        | UnaryOp::Log1p => 4,
        _ => 2,
    }
}

/// The distance in units of the last place between two floats of `dtype`
/// (0 for identical bits; large across signs).
pub fn ulps(dtype: DType, a: u64, b: u64) -> u64 {
    let w = dtype.bits();
    let key = |x: u64| -> i128 {
        let sign = x >> (w - 1) & 1;
        let mag = i128::from(x & ((1u64 << (w - 1)) - 1));
        if sign == 1 {
            -mag
        } else {
            mag
        }
    };
    (key(a) - key(b)).unsigned_abs() as u64
}

/// The GPU code of `program` (whose math is `what`) with and without
/// `fast_math`: the exact library computes in f64, the fast one has no f64
/// instruction; both PTX files assemble (when ptxas is installed) and both
/// AMDGPU objects link.
#[allow(dead_code)] // emit_scalar.rs does not use it
pub fn check_fast_math_gpu_code(program: &Program, what: &str) {
    let fast = CodegenOptions {
        fast_math: true,
        ..CodegenOptions::default()
    };
    let f64_ops = |ptx: &str| ptx.lines().filter(|l| l.contains(".f64")).count();
    let exact = emit(program, Target::Nvptx(Sm::Sm80), &CodegenOptions::default()).unwrap();
    let quick = emit(program, Target::Nvptx(Sm::Sm80), &fast).unwrap();
    assert!(
        f64_ops(&exact.assembly) > 0,
        "the exact {what} computes in f64"
    );
    assert_eq!(f64_ops(&quick.assembly), 0, "{}", quick.assembly);
    if Tool::Ptxas.find().is_ok() {
        for ptx in [&exact.assembly, &quick.assembly] {
            tools::assemble_ptx(ptx, Sm::Sm80).unwrap_or_else(|e| panic!("{e}"));
        }
    } else {
        println!("ptxas not found: PTX not assembled (run scripts/setup.sh)");
    }
    for options in [CodegenOptions::default(), fast] {
        let amd = emit(program, Target::Amdgpu(Gfx::Gfx90a), &options).unwrap();
        assert!(amd.code_object.is_some(), "linked by ld.lld");
    }
}
