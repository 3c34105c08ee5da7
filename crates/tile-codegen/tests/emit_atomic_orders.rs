//! How the GPU code orders atomics, read off the PTX. LLVM's NVPTX back end
//! emits every `atomicrmw` as PTX's relaxed `atom`, whatever its ordering,
//! so an ordered update is a relaxed one between device-scope fences
//! (PTX's release and acquire patterns): a lock released by an exchange
//! releases what its holder wrote. And an `f32` add under `approx_math` is
//! one hardware `atom.global.add.f32`, not a compare-and-swap loop.

mod emulated;

use emulated::require;
use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::text::parse_function;
use tile_ir::Function;
use tile_thread::lower::{lower, LowerOptions};

/// Each of a warp's 32 threads updates its element of `%t` by `op` under
/// `order`.
fn update(op: &str, dtype: &str, order: &str) -> Function {
    let text = format!(
        "kernel @update(%t: tensor<{dtype}, 1>, %v: tensor<{dtype}, 1>) {{
  %z = constant 0 : i32
  %i = iota : tile<32xi32>
  %vv = partition_view %v [32] : view<{dtype}, [32]>
  %x = load %vv[%z] : tile<32x{dtype}>
  %m = full true : tile<32xbool>
  %o = atomic {op} {order} gpu %t[%i], %x, %m : tile<32x{dtype}>
}}"
    );
    parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The PTX of `func` for sm_80 (one warp), assembled by ptxas.
fn ptx(func: &Function, options: &CodegenOptions) -> String {
    require(Tool::Ptxas);
    let program = lower(func, &LowerOptions::warps(1)).expect("it lowers");
    let out = emit(&program, Target::Nvptx(Sm::Sm80), options).expect("it emits");
    tools::assemble_ptx(&out.assembly, Sm::Sm80).expect("ptxas assembles it");
    out.assembly
}

/// The ops of `ptx` that fence or update memory atomically, in order,
/// without operands; not the compare-and-swaps that claim the status
/// record for a failed check.
fn ordering_ops(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|op| op.starts_with("atom.") || op.starts_with("fence.acq_rel"))
        .filter(|op| *op != "atom.relaxed.sys.global.cas.b32")
        .collect()
}

/// Whether `ops` is `pattern` repeated, at least once.
fn repeats(ops: &[&str], pattern: &[&str]) -> bool {
    !ops.is_empty() && ops.chunks(pattern.len()).all(|chunk| chunk == pattern)
}

#[test]
fn an_ordered_update_on_nvidia_is_a_relaxed_one_between_fences() {
    let (fence, exch) = ("fence.acq_rel.gpu;", "atom.global.exch.b32");
    for (order, pattern) in [
        ("relaxed", vec![exch]),
        ("release", vec![fence, exch]),
        ("acquire", vec![exch, fence]),
        ("acq_rel", vec![fence, exch, fence]),
    ] {
        let code = ptx(&update("xchg", "i32", order), &CodegenOptions::default());
        let ops = ordering_ops(&code);
        assert!(repeats(&ops, &pattern), "{order}: {ops:?}");
    }
}

#[test]
fn an_f32_add_is_one_hardware_atomic_under_approx_math_and_a_loop_otherwise() {
    let func = update("add", "f32", "relaxed");
    let exact = ptx(&func, &CodegenOptions::default());
    assert!(!exact.contains("atom.global.add.f32"), "{exact}");
    assert!(exact.contains(".cas.b32"), "{exact}");
    let approx = CodegenOptions {
        approx_math: true,
        ..CodegenOptions::default()
    };
    let code = ptx(&func, &approx);
    let ops = ordering_ops(&code);
    assert!(repeats(&ops, &["atom.global.add.f32"]), "{ops:?}");
}
