//! Running single ops of the emitter on the host (shared by the scalar and
//! fast-math tests).

use inkwell::context::Context;
use inkwell::execution_engine::JitFunction;
use inkwell::OptimizationLevel;
use tile_codegen::emit::probe::{math_probe, PROBE};
use tile_codegen::emit::EmitError;
use tile_codegen::thread::ThreadOpKind;
use tile_ir::DType;

type Probe = unsafe extern "C" fn(u64, u64, u64) -> u64;

/// Runs `op` on each input triple through a JIT-compiled probe with the
/// exact or the fast math library; `None` when the emitter rejects the op.
pub fn run_probe(
    op: &ThreadOpKind,
    dtypes: &[DType],
    inputs: &[[u64; 3]],
    fast_math: bool,
) -> Option<Vec<u64>> {
    let ctx = Context::create();
    let module = match math_probe(&ctx, op, dtypes, fast_math) {
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
