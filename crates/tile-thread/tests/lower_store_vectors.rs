//! Epilogue stores in 16-byte vectors: a tensor-core accumulator rounded to
//! f16 after a pipelined K loop is written to shared memory in the pairs
//! its threads hold, read back in 16-byte vectors over the bytes of the
//! dead pipeline stages and stored to global memory in 16-byte vectors;
//! a store whose warp already writes whole sectors (f32 pairs), or whose
//! staging would need new shared memory, keeps the accumulator's layout. Each checked bit for bit against the interpreter
//! in the lockstep emulator, on edges and on rows too short for vectors.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::{Program, ThreadOpKind};

/// A `[bm, bk] × [bk, bn]` f16 matmul with `out`-typed results: its f32
/// accumulator, clamped below at zero (an epilogue in the accumulator's
/// layout), is cast to `out` and stored.
fn matmul(bm: usize, bn: usize, bk: usize, out: DType) -> String {
    format!(
        "kernel @mm(%a: tensor<f16, 2>, %b: tensor<f16, 2>, %c: tensor<{out}, 2>) {{
  %m = program_id 0 : i32
  %n = program_id 1 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %k = dim %a axis 1 : i32
  %bk = constant {bk} : i32
  %k1 = add %k, %bk : i32
  %k2 = sub %k1, %one : i32
  %steps = div %k2, %bk : i32
  %va = partition_view %a [{bm}, {bk}] : view<f16, [{bm}, {bk}]>
  %vb = partition_view %b [{bk}, {bn}] : view<f16, [{bk}, {bn}]>
  %init = full 0.0 : tile<{bm}x{bn}xf32>
  %acc = for %i = %zero to %steps step %one iter(%c0 = %init) : tile<{bm}x{bn}xf32> {{
    %x = load_masked %va[%m, %i] pad(zero) : tile<{bm}x{bk}xf16>
    %y = load_masked %vb[%i, %n] pad(zero) : tile<{bk}x{bn}xf16>
    %d = dot tensor %x, %y, %c0 : tile<{bm}x{bn}xf32>
    yield %d
  }}
  %relu = max %acc, %init : tile<{bm}x{bn}xf32>
  %r = cast %relu to {out} : tile<{bm}x{bn}x{out}>
  %vc = partition_view %c [{bm}, {bn}] : view<{out}, [{bm}, {bn}]>
  store_masked %r, %vc[%m, %n]
}}"
    )
}

/// A tensor of `dtype` and `shape` holding small integers (-2 to 2), so
/// that every sum of products is exact in any order and in f16.
fn integers(dtype: DType, shape: &[usize], seed: usize) -> Arg {
    let n: usize = shape.iter().product();
    let v: Vec<Scalar> = (0..n)
        .map(|i| tile_ir::eval::cast(Scalar::F32(((i * 7 + seed * 13) % 5) as f32 - 2.0), dtype))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &v).unwrap())
}

/// Lowers `text` for `tensor_cores` with `warps` warps and `stages`
/// stages, runs it on `[m, k] × [k, n]` and asserts the result equals the
/// interpreter's bit for bit; returns the program.
fn check(
    text: &str,
    (m, n, k): (usize, usize, usize),
    (bm, bn): (usize, usize),
    (tensor_cores, warps, stages): (TensorCores, u32, u32),
    out: DType,
) -> Program {
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let args = vec![
        integers(DType::F16, &[m, k], 1),
        integers(DType::F16, &[k, n], 2),
        integers(out, &[m, n], 3),
    ];
    let grid = [m.div_ceil(bm) as u32, n.div_ceil(bn) as u32, 1];
    let mut expected = args.clone();
    interp::run(&func, grid, &mut expected).unwrap();
    let options = LowerOptions::warps(warps)
        .with_tensor_cores(tensor_cores)
        .with_stages(stages);
    let program = lower(&func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap_or_else(|e| panic!("{e}\n{program}"));
    let mut actual = args;
    emulate::run(&program, grid, &mut actual).unwrap_or_else(|e| panic!("{e}\n{program}"));
    assert_eq!(actual[2], expected[2], "[{m}, {k}] x [{k}, {n}]");
    program
}

/// The widths of the program's shared accesses (`true`: stores) and of its
/// global stores, as `(kind, width)` counts.
fn widths(program: &Program) -> Vec<(&'static str, u8)> {
    let mut found: Vec<(&'static str, u8)> = program
        .ops
        .iter()
        .filter_map(|(_, op)| match op.kind {
            ThreadOpKind::LoadShared { width, .. } => Some(("ld.shared", width)),
            ThreadOpKind::StoreShared { width, .. } => Some(("st.shared", width)),
            ThreadOpKind::StoreGlobal { width, .. } => Some(("st.global", width)),
            _ => None,
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The shared allocations that own their bytes (aliases excluded).
fn roots(program: &Program) -> usize {
    program
        .shared
        .iter()
        .filter(|(_, a)| a.aliases.is_none())
        .count()
}

#[test]
fn an_f16_epilogue_is_stored_in_16_byte_vectors_through_the_stages_bytes() {
    let text = matmul(64, 64, 32, DType::F16);
    let configs = [
        (TensorCores::MmaSync, 4, 3),
        (TensorCores::MmaSync, 4, 2),
        (TensorCores::Wgmma, 4, 3),
    ];
    for config in configs {
        // Edges in both axes and rows of 8-element multiples (vectors),
        // then rows of 5 mod 8 elements (the element-by-element path).
        for (m, n, k) in [(130, 136, 96), (70, 77, 40)] {
            let program = check(&text, (m, n, k), (64, 64), config, DType::F16);
            let found = widths(&program);
            assert!(found.contains(&("st.global", 8)), "{config:?}: {found:?}");
            assert!(found.contains(&("ld.shared", 8)), "{config:?}: {found:?}");
            // The accumulator's pairs of columns, one 4-byte store each.
            assert!(found.contains(&("st.shared", 2)), "{config:?}: {found:?}");
            // Over the bytes of the stages: A's and B's rings and nothing else.
            assert_eq!(roots(&program), 2, "{config:?}\n{program}");
        }
    }
}

#[test]
fn a_store_that_fills_sectors_or_would_need_new_shared_memory_keeps_the_accumulators_layout() {
    // f32 pairs: a quad writes a whole 32-byte sector of a row.
    let text = matmul(64, 64, 32, DType::F32);
    let config = (TensorCores::MmaSync, 4, 3);
    let program = check(&text, (130, 136, 96), (64, 64), config, DType::F32);
    let found = widths(&program);
    assert!(found.contains(&("st.global", 2)), "{found:?}");
    assert!(
        !found.iter().any(|(kind, _)| *kind == "ld.shared"),
        "{found:?}"
    );
    // Unpipelined, the operands' stagings are 4 KiB, the f16 tile 8 KiB.
    let text = matmul(64, 64, 32, DType::F16);
    let config = (TensorCores::MmaSync, 4, 1);
    let program = check(&text, (130, 136, 96), (64, 64), config, DType::F16);
    let found = widths(&program);
    assert!(found.contains(&("st.global", 2)), "{found:?}");
    assert!(!found.contains(&("ld.shared", 8)), "{found:?}");
}
