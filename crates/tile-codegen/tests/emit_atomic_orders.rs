//! How the GPU code orders atomics, read off the PTX. An ordered atomic of
//! a tile is relaxed updates after one release fence a thread and before
//! one acquire fence (PTX's release and acquire patterns), so a lock
//! released by an exchange releases what its holder wrote. LLVM's NVPTX
//! back end emits every `atomicrmw` as PTX's relaxed `atom`, whatever its
//! ordering, so the emitter fences an ordered update of a thread program
//! itself. And an `f32` add under `approx_math` is one hardware
//! `atom.global.add.f32`, not a compare-and-swap loop.

mod emulated;

use emulated::require;
use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::text::parse_function;
use tile_ir::{Function, MemOrder};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::ThreadOpKind;

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

/// The PTX of `func` for sm_80 (one warp), assembled by ptxas; with the
/// orders of its atomic updates set to `orders` where given.
fn ptx(func: &Function, options: &CodegenOptions, orders: Option<MemOrder>) -> String {
    require(Tool::Ptxas);
    let mut program = lower(func, &LowerOptions::warps(1)).expect("it lowers");
    for op in program.ops.values_mut() {
        if let (ThreadOpKind::AtomicGlobal { order, .. }, Some(wanted)) = (&mut op.kind, orders) {
            *order = wanted;
        }
    }
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
fn an_ordered_tile_update_is_relaxed_updates_after_one_release_fence_and_before_one_acquire() {
    let (fence, exch) = ("fence.acq_rel.gpu;", "atom.global.exch.b32");
    for (order, before, after) in [
        ("relaxed", 0, 0),
        ("release", 1, 0),
        ("acquire", 0, 1),
        ("acq_rel", 1, 1),
    ] {
        let code = ptx(
            &update("xchg", "i32", order),
            &CodegenOptions::default(),
            None,
        );
        let ops = ordering_ops(&code);
        let updates = ops.iter().filter(|&&op| op == exch).count();
        let mut want = vec![fence; before];
        want.extend(vec![exch; updates]);
        want.extend(vec![fence; after]);
        assert!(updates > 0 && ops == want, "{order}: {ops:?}");
    }
}

#[test]
fn an_ordered_update_on_nvidia_is_a_relaxed_one_between_fences() {
    let (fence, exch) = ("fence.acq_rel.gpu;", "atom.global.exch.b32");
    let func = update("xchg", "i32", "relaxed");
    for (order, pattern) in [
        (MemOrder::Relaxed, vec![exch]),
        (MemOrder::Release, vec![fence, exch]),
        (MemOrder::Acquire, vec![exch, fence]),
        (MemOrder::AcqRel, vec![fence, exch, fence]),
    ] {
        let code = ptx(&func, &CodegenOptions::default(), Some(order));
        let ops = ordering_ops(&code);
        assert!(repeats(&ops, &pattern), "{order}: {ops:?}");
    }
}

#[test]
fn an_f32_add_is_one_hardware_atomic_under_approx_math_and_a_loop_otherwise() {
    let func = update("add", "f32", "relaxed");
    let exact = ptx(&func, &CodegenOptions::default(), None);
    assert!(!exact.contains("atom.global.add.f32"), "{exact}");
    assert!(exact.contains(".cas.b32"), "{exact}");
    let approx = CodegenOptions {
        approx_math: true,
        ..CodegenOptions::default()
    };
    let code = ptx(&func, &approx, None);
    let ops = ordering_ops(&code);
    assert!(repeats(&ops, &["atom.global.add.f32"]), "{ops:?}");
}
