//! An `atomic add` of a tile whose old values nobody reads is a relaxed
//! reduction a thread's consecutive elements at a time: under
//! `approx_math` on sm_90 and later one `red.relaxed.gpu.global.add.v4.f32`
//! for four `f32` (PTX 8.1), where the tensor is contiguous and aligned for
//! it and every mask holds; elsewhere each element's own atomic add, the
//! hardware's under `approx_math` and an exact compare-and-swap loop
//! without. Both forms run on the emulation target against the
//! interpreter, programs adding into the same elements.

mod emulated;

use emulated::{image, launch, lowered_module, padded, require};
use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::interp::{self, Arg};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function};
use tile_thread::lower::{lower, LowerOptions};

/// Every program adds its 8 × 64 block of `%x` into the same block of
/// `%acc` (rows below `%acc`'s extent), the indices built as a view's
/// `atomic_add` builds them.
fn add_block() -> Function {
    let text = "kernel @add_block(%x: tensor<f32, 2>, %acc: tensor<f32, 2>) {
  %p = program_id 0 : i32
  %z = constant 0 : i32
  %vx = partition_view %x [8, 64] : view<f32, [8, 64]>
  %t = load %vx[%p, %z] : tile<8x64xf32>
  %ri = iota : tile<8xi32>
  %rr = reshape %ri to [8, 1] : tile<8x1xi32>
  %rows = broadcast %rr to [8, 64] : tile<8x64xi32>
  %ci = iota : tile<64xi32>
  %cr = reshape %ci to [1, 64] : tile<1x64xi32>
  %cols = broadcast %cr to [8, 64] : tile<8x64xi32>
  %n = dim %acc axis 0 : i32
  %nb = broadcast %n to [8, 64] : tile<8x64xi32>
  %inside = cmp lt %rows, %nb : tile<8x64xbool>
  %old = atomic add relaxed gpu %acc[%rows, %cols], %t, %inside : tile<8x64xf32>
}";
    parse_function(text).expect("the kernel parses")
}

/// Options with `approx_math` as given.
fn options(approx_math: bool) -> CodegenOptions {
    CodegenOptions {
        approx_math,
        ..CodegenOptions::default()
    }
}

/// The PTX of `add_block` for `sm` with 2 warps, assembled by ptxas.
fn ptx(sm: Sm, approx_math: bool) -> String {
    require(Tool::Ptxas);
    let program = lower(&add_block(), &LowerOptions::warps(2)).expect("it lowers");
    let out = emit(&program, Target::Nvptx(sm), &options(approx_math)).expect("it emits");
    tools::assemble_ptx(&out.assembly, sm).expect("ptxas assembles it");
    out.assembly
}

#[test]
fn sm_90a_adds_four_f32_at_once_under_approx_math() {
    let code = ptx(Sm::Sm90a, true);
    // Two groups of four a thread (8 × 64 over 64 threads).
    assert_eq!(
        code.matches("red.relaxed.gpu.global.add.v4.f32").count(),
        2,
        "{code}"
    );
    assert!(code.contains(".version 8.1"), "{code}");
    // sm_80: the hardware's scalar add, no vector.
    let approx = ptx(Sm::Sm80, true);
    assert!(approx.contains("atom.global.add.f32"), "{approx}");
    assert!(!approx.contains("global.add.v"), "{approx}");
    // Exact: a compare-and-swap loop an element, beside the status
    // record's.
    let exact = ptx(Sm::Sm90a, false);
    let cas = "atom.relaxed.sys.global.cas.b32";
    assert!(
        !exact.contains("global.add.v") && !exact.contains("add.f32"),
        "{exact}"
    );
    assert!(
        exact.matches(cas).count() > approx.matches(cas).count(),
        "{exact}"
    );
}

/// `%x` for `programs` programs and `%acc` of `rows` rows, `pitch` floats
/// apart (small integers: sums exact in any order).
fn args(programs: usize, rows: usize, pitch: usize) -> Vec<Arg> {
    let x = padded(DType::F32, (8 * programs, 64), (64, 0), |i| {
        ((i * 7) % 9) as f64 - 4.0
    });
    let acc = padded(DType::F32, (rows, 64), (pitch, 0), |i| (i % 5) as f64);
    vec![Arg::Tensor(x), Arg::Tensor(acc)]
}

#[test]
fn vector_and_element_adds_agree_with_the_interpreter() {
    let func = add_block();
    let lowering = LowerOptions::warps(2);
    for (sm, instruction) in [
        (Sm::Sm90a, "global.add.v4.f32"),
        (Sm::Sm80, "atomicrmw fadd"),
    ] {
        let module =
            lowered_module(&func, Target::Nvptx(sm), &lowering, &options(true)).expect("it emits");
        assert!(module.llvm_ir_opt.contains(instruction), "{sm}");
        let kernel = image(&module).expect("it loads");
        // Rows 64 floats apart: vectors. 66 apart: each element's own add;
        // and 6 rows, so that the last two of every block are masked off.
        for (rows, pitch) in [(8, 64), (8, 66), (6, 64)] {
            let grid = [3, 1, 1];
            let mut want = args(3, rows, pitch);
            interp::run(&func, grid, &mut want).expect("it interprets");
            let mut got = args(3, rows, pitch);
            launch(&kernel, grid, 2, &mut got).expect("it runs");
            assert_eq!(got, want, "{sm}: rows {rows}, pitch {pitch}");
        }
    }
}
