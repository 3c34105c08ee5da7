//! The shared objects of the host back end: every instruction-set level of
//! this architecture compiles every sample, needs nothing from the loader
//! but C library functions, uses only its level's instructions, and
//! computes the interpreter's results.

mod common;

use common::{bytes, load, tensor, zeros};
use tile_codegen::host;
use tile_codegen::tools;
use tile_codegen::CodegenOptions;
use tile_ir::interp::{self, Arg};
use tile_ir::{samples, DType, Function};
use tile_runtime::cpu::HostIsa;
use tile_runtime::LaunchArg;

/// Each sample with a launch that leaves partial edge tiles.
fn cases() -> Vec<(Function, [u32; 3], Vec<Arg>)> {
    vec![
        (
            samples::vector_add(64).unwrap(),
            [3, 1, 1],
            vec![tensor(1, &[150]), tensor(2, &[150]), zeros(&[150])],
        ),
        (
            samples::softmax(4, 32).unwrap(),
            [3, 1, 1],
            vec![tensor(3, &[10, 30]), zeros(&[10, 30])],
        ),
        (
            samples::transpose(8, 16).unwrap(),
            [3, 2, 1],
            vec![tensor(4, &[20, 21]), zeros(&[21, 20])],
        ),
        (
            samples::matmul(16, 16, 8, DType::F32).unwrap(),
            [2, 2, 1],
            vec![tensor(5, &[30, 20]), tensor(6, &[20, 25]), zeros(&[30, 25])],
        ),
        (
            rounding(),
            [3, 1, 1],
            vec![tensor(7, &[150]), zeros(&[150])],
        ),
    ]
}

/// `out = round(8x) + round_ties_even(8x)`: C's `round`, which no x86-64
/// level has as an instruction, and `roundeven`, which baseline x86-64
/// lacks.
fn rounding() -> Function {
    tile_ir::text::parse_function(
        "kernel @rounding(%x: tensor<f32, 1>, %out: tensor<f32, 1>) {
  %pid = program_id 0 : i32
  %vx = partition_view %x [64] : view<f32, [64]>
  %t = load_masked %vx[%pid] pad(zero) : tile<64xf32>
  %eight = full 8.0 : tile<64xf32>
  %s = mul %t, %eight : tile<64xf32>
  %a = round %s : tile<64xf32>
  %b = round_ties_even %s : tile<64xf32>
  %r = add %a, %b : tile<64xf32>
  %vo = partition_view %out [64] : view<f32, [64]>
  store_masked %r, %vo[%pid]
}",
    )
    .unwrap()
}

#[test]
fn shared_objects_need_only_c_library_functions() {
    let allowed = host::C_LIBRARY_IMPORTS;
    for (func, _, _) in cases() {
        for isa in HostIsa::for_this_architecture() {
            let image = host::compile(&func, isa, &CodegenOptions::default())
                .unwrap_or_else(|e| panic!("{isa}: {e}"));
            let undefined = tools::undefined_dynamic_symbols(image.shared_object())
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                undefined.iter().all(|s| allowed.contains(&s.as_str())),
                "{} ({isa}) needs {undefined:?}",
                func.name
            );
        }
    }
}

#[test]
fn each_level_uses_only_its_own_instructions() {
    let (func, _, _) = &cases()[3];
    for isa in HostIsa::for_this_architecture() {
        let image = host::compile(func, isa, &CodegenOptions::default()).unwrap();
        let listing = tools::disassemble(image.shared_object()).unwrap();
        assert!(listing.contains("<tile_host_kernel>:"), "{isa}: no kernel");
        let avx = listing.contains("%ymm");
        match isa {
            HostIsa::X86_64V3 => assert!(avx, "the x86-64-v3 matmul uses no 256-bit vectors"),
            HostIsa::X86_64 => assert!(!avx, "baseline x86-64 code uses AVX"),
            HostIsa::Aarch64 => assert!(listing.contains("fmla"), "no NEON fma"),
        }
    }
}

#[test]
fn every_level_that_runs_here_equals_the_interpreter() {
    for (func, grid, args) in cases() {
        let mut expected = args.clone();
        interp::run(&func, grid, &mut expected).unwrap();
        for isa in HostIsa::for_this_architecture() {
            if !isa.runs_here() {
                eprintln!("skipped: this CPU does not run {isa} code");
                continue;
            }
            let image = host::compile(&func, isa, &CodegenOptions::default()).unwrap();
            let library = load(&image, &func).unwrap();
            assert_eq!(library.isa(), isa);
            let mut actual = args.clone();
            let mut launch: Vec<_> = actual.iter_mut().map(LaunchArg::from).collect();
            library
                .run(grid, &mut launch)
                .unwrap_or_else(|e| panic!("{isa}: {e}"));
            assert!(
                bytes(&actual) == bytes(&expected),
                "{} ({isa}) differs from the interpreter",
                func.name
            );
        }
    }
}

#[test]
fn outer_loops_of_long_nests_are_not_unrolled() {
    let isa = HostIsa::for_this_architecture()[0];
    let marked = |func: Function| {
        host::compile(&func, isa, &CodegenOptions::default())
            .unwrap()
            .llvm_ir()
            .contains("!\"llvm.loop.unroll.disable\"")
    };
    // Tiles of 8 rows: the row loops of the nests are not unrolled.
    assert!(marked(samples::transpose(8, 16).unwrap()));
    // One-axis tiles have no nests: LLVM decides.
    assert!(!marked(samples::vector_add(64).unwrap()));
}
