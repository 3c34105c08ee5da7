//! The text form of the thread-level program as a test interface: every
//! lowered example and generated program prints, parses back and prints the
//! same, and programs written as text run through the emulator.

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{samples, DType, Function};
use tile_testgen::{generate, GenConfig};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::{parse_program, verify};

/// Lowers `func` with `num_warps` warps and checks print → parse → print.
fn round_trips(func: &Function, num_warps: u32) -> bool {
    let Ok(program) = lower(func, &LowerOptions::warps(num_warps)) else {
        return false;
    };
    let text = program.to_string();
    let parsed = parse_program(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", func.name));
    verify(&parsed).unwrap_or_else(|e| panic!("{}: {e}", func.name));
    assert_eq!(parsed.to_string(), text, "{}", func.name);
    true
}

#[test]
fn every_example_program_reads_back_as_printed() {
    let examples = [
        samples::vector_add(256).unwrap(),
        samples::softmax(4, 64).unwrap(),
        samples::layernorm(2, 128).unwrap(),
        samples::matmul(32, 32, 16, DType::F16).unwrap(),
        samples::transpose(32, 32).unwrap(),
    ];
    for func in &examples {
        for warps in [1, 4] {
            assert!(round_trips(func, warps), "{} lowers", func.name);
        }
    }
    // A tensor promised aligned reads back as one.
    let aligned = samples::with_aligned_tensors(samples::softmax(4, 64).unwrap());
    assert!(round_trips(&aligned, 4));
    let text = lower(&aligned, &LowerOptions::warps(4))
        .unwrap()
        .to_string();
    assert!(text.contains("x: tensor<f32, 2, aligned>"), "{text}");
}

#[test]
fn generated_programs_read_back_as_printed() {
    let config = GenConfig::default();
    let lowered = (0..150)
        .filter(|&seed| round_trips(&generate(seed, &config).func, 2))
        .count();
    assert!(lowered >= 100, "only {lowered} of 150 programs lowered");
}

/// Each thread writes its id to shared memory and reads its neighbour's,
/// with or without a barrier between.
fn neighbours(barrier: bool) -> String {
    format!(
        "kernel neighbours warps 1 (out: tensor<i32, 1>)
shared @s0: i32[32]
{{
  %0 = thread_id : i32
  %1 = const true : bool
  st.shared @s0[%0], %0 mask(%1)
  {}
  %2 = const 1 : i32
  %3 = add %0, %2 : i32
  %4 = const 32 : i32
  %5 = rem %3, %4 : i32
  %6 = ld.shared @s0[%5] : i32
  %7 = cast %0 to i64 : i64
  st.global.v1 out[%7], %6 mask(%1)
}}
",
        if barrier { "barrier" } else { "" }
    )
}

#[test]
fn a_program_written_as_text_runs_and_a_missing_barrier_is_a_race() {
    let out = || {
        vec![Arg::Tensor(
            HostTensor::from_vec(&[32], vec![0i32; 32]).unwrap(),
        )]
    };
    let program = parse_program(&neighbours(true)).unwrap();
    verify(&program).unwrap();
    let mut args = out();
    emulate::run(&program, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(t) = &args[0] else {
        unreachable!("the argument is a tensor")
    };
    let want: Vec<i32> = (0..32).map(|t| (t + 1) % 32).collect();
    assert_eq!(t.to_vec::<i32>().unwrap(), want);

    let racy = parse_program(&neighbours(false)).unwrap();
    let error = emulate::run(&racy, [1, 1, 1], &mut out()).unwrap_err();
    assert!(
        error.to_string().contains("shared-memory race on @s0"),
        "{error}"
    );
}

/// Each thread writes its four values `4t .. 4t + 3` as one vector and
/// reads its neighbour's vector from index `at(t)`.
fn vectors(at: &str) -> String {
    format!(
        "kernel vectors warps 1 (out: tensor<i32, 1>)
shared @s0: i32[128]
{{
  %0 = thread_id : i32
  %1 = const true : bool
  %2 = const 4 : i32
  %3 = mul %0, %2 : i32
  %4 = const 1 : i32
  %5 = add %3, %4 : i32
  %6 = const 2 : i32
  %7 = add %3, %6 : i32
  %8 = const 3 : i32
  %9 = add %3, %8 : i32
  st.shared.v4 @s0[%3], %3, %5, %7, %9 mask(%1)
  barrier
  %10 = add %0, %4 : i32
  %11 = const 32 : i32
  %12 = rem %10, %11 : i32
  %13 = {at} : i32
  %14, %15, %16, %17 = ld.shared.v4 @s0[%13] : i32
  %18 = cast %3 to i64 : i64
  %19 = cast %5 to i64 : i64
  %20 = cast %7 to i64 : i64
  %21 = cast %9 to i64 : i64
  st.global.v1 out[%18], %14 mask(%1)
  st.global.v1 out[%19], %15 mask(%1)
  st.global.v1 out[%20], %16 mask(%1)
  st.global.v1 out[%21], %17 mask(%1)
}}
"
    )
}

#[test]
fn shared_vectors_move_consecutive_elements_and_must_be_aligned() {
    let out = || {
        vec![Arg::Tensor(
            HostTensor::from_vec(&[128], vec![0i32; 128]).unwrap(),
        )]
    };
    let text = vectors("mul %12, %2");
    let program = parse_program(&text).unwrap();
    assert_eq!(program.to_string(), text);
    verify(&program).unwrap();
    let mut args = out();
    emulate::run(&program, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(t) = &args[0] else {
        unreachable!("the argument is a tensor")
    };
    let want: Vec<i32> = (0..128).map(|i| (i + 4) % 128).collect();
    assert_eq!(t.to_vec::<i32>().unwrap(), want);
    // A vector from the neighbour's second element: misaligned.
    let misaligned = parse_program(&vectors("add %5, %2")).unwrap();
    verify(&misaligned).unwrap();
    let error = emulate::run(&misaligned, [1, 1, 1], &mut out()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("a shared vector of 4 elements at index 5, not a multiple of 4"),
        "{error}"
    );
}

const SAMPLE: &str = "kernel k warps 1 (x: tensor<f32, 1>, n: i32)
shared @s0: f32[64]
{
  %0 = thread_id : i32
  %1 = const 1 : i32
  %2 = param n : i32
  %3 = cast %0 to i64 : i64
  %4 = cmp lt %0, %2 : bool
  %5 = const -inf : f32
  // checked: the index is below `n`
  %6 = ld.global.v1 x[%3] mask(%4) other(%5) : f32
  st.shared @s0[%0], %6 mask(%4)
  barrier
  %7 = ld.shared @s0[%0] : f32
  %8 = shfl.bfly %7, %1 width 32 : f32
  check.bounds %4 [%3] \"%2 = load %0, %1 \\\"x\\\"\"
  %9 = for %10 = %1 to %2 step %1 iter(%11 = %8) : f32 {
    %12 = add %11, %7 : f32
    yield %12
  }
  %13 = if %4 : f32 {
    yield %9
  } else {
    yield %5
  }
  st.global.v1 x[%3], %13 mask(%4)
}
";

#[test]
fn print_parse_print_is_the_identity() {
    let program = parse_program(SAMPLE).unwrap();
    assert_eq!(program.to_string(), SAMPLE);
    verify(&program).unwrap();
}

#[test]
fn errors_name_the_place_and_what_was_expected() {
    let error = |src: &str| parse_program(src).unwrap_err().to_string();
    let head = "kernel k warps 1 ()\n{\n";
    assert_eq!(
        error(&format!("{head}  %0 = add %1, %1 : i32\n}}\n")),
        "3:12: `%1` is not defined"
    );
    assert_eq!(
        error(&format!(
            "{head}  %0 = thread_id : i32\n  %0 = thread_id : i32\n}}\n"
        )),
        "4:3: `%0` is defined twice"
    );
    assert_eq!(
        error(&format!("{head}  %0 = frob : i32\n}}\n")),
        "3:8: unknown op `frob`"
    );
    // An instruction's name is read whole, RDNA 4's dotted ones too.
    assert_eq!(
        error(&format!("{head}  %0 = mma.wmma12.16x16x8.f16 : f32\n}}\n")),
        "3:12: unknown mma `wmma12.16x16x8.f16`"
    );
    assert_eq!(
        error(&format!("{head}  %0 = mma.frob : f32\n}}\n")),
        "3:12: unknown mma `frob`"
    );
    assert_eq!(
        error(&format!("{head}  %0 = const 300 : i8\n}}\n")),
        "3:14: constant 300 is out of range for i8"
    );
    assert_eq!(
        error(&format!("{head}  %0 = thread_id\n}}\n")),
        "3:17: expected `:` and the result's dtype, found end of line"
    );
    assert_eq!(
        error(&format!("{head}  %0 = ld.shared @s1[%0] : f32\n}}\n")),
        "3:18: no shared allocation `@s1`"
    );
    assert_eq!(
        error(&format!("{head}  barrier\n")),
        "2:1: this `{` is never closed"
    );
    assert_eq!(
        error(&format!(
            "{head}  %0 = const 0 : i32\n  wgmma.m64n64k16.f16.sw16 @s0[%0], @s0[%0], %0\n}}\n"
        )),
        "4:23: unknown wgmma suffix `sw16`: `bk` (a K-major B), then `sw64` or `sw32`"
    );
    assert_eq!(
        error(&format!(
            "{head}  %0 = const 0 : i32
  wgmma.m64n64k16.f16.sw64.bk @s0[%0], @s0[%0], %0
}}
"
        )),
        "4:27: expected a shared allocation `@s<n>`, found `.`"
    );
    // FP8 steps 32 `k` and has no MN-major B.
    let wgmma = |name: &str| {
        error(&format!(
            "{head}  %0 = const 0 : i32\n  wgmma.{name} @s0[%0], @s0[%0], %0\n}}\n"
        ))
    };
    assert_eq!(
        wgmma("m64n64k32.f8e4m3"),
        "4:9: a wgmma of f8e4m3 reads B K-major only: `m64n64k32.f8e4m3.bk`"
    );
    assert_eq!(
        wgmma("m64n64k16.f8e5m2.bk"),
        "4:9: unknown wgmma `m64n64k16.f8e5m2`"
    );
}
