//! A loop's own pipeline stages (`for … stages(n)`) override the kernel's
//! `num_stages` for that loop, where the target has `cp.async`: `stages(3)`
//! copies two iterations ahead in a kernel lowered with one stage, and
//! `stages(1)` pipelines nothing in one lowered with three; the results
//! are the interpreter's either way.

use tile_ir::interp;
use tile_ir::text::parse_function;
use tile_ir::{eval, DType, Function, Scalar};
use tile_testgen::inputs::zeros;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::{Program, ThreadOpKind};

/// `c = a × b` (f16, 32×32 tiles, K blocks of 16), its K loop with
/// `clause` after its carried values.
fn matmul(clause: &str) -> Function {
    parse_function(&format!(
        r#"kernel @matmul(%a: tensor<f16, 2>, %b: tensor<f16, 2>, %c: tensor<f32, 2>) {{
  %pm = program_id 0 : i32
  %pn = program_id 1 : i32
  %zero = constant 0 : i32
  %va = partition_view %a [32, 16] : view<f16, [32, 16]>
  %vb = partition_view %b [16, 32] : view<f16, [16, 32]>
  %vc = partition_view %c [32, 32] : view<f32, [32, 32]>
  %k = dim %a axis 1 : i32
  %bk = constant 16 : i32
  %kt = div %k, %bk : i32
  %one = constant 1 : i32
  %init = full 0.0 : tile<32x32xf32>
  %acc = for %kk = %zero to %kt step %one iter(%s = %init){clause} : tile<32x32xf32> {{
    %ta = load_masked %va[%pm, %kk] pad(zero) : tile<32x16xf16>
    %tb = load_masked %vb[%kk, %pn] pad(zero) : tile<16x32xf16>
    %d = dot tensor %ta, %tb, %s : tile<32x32xf32>
    yield %d
  }}
  store_masked %acc, %vc[%pm, %pn]
}}"#
    ))
    .unwrap()
}

/// The `cp.async` copies of `func` lowered with `stages` for the kernel,
/// after checking its results against the interpreter's.
fn copies(func: &Function, stages: u32) -> usize {
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(stages);
    let program = lower(func, &options).unwrap();
    check(func, &program, [64, 64, 64], [2, 2, 1]);
    program
        .ops
        .iter()
        .filter(|(_, op)| matches!(op.kind, ThreadOpKind::CopyAsync { .. }))
        .count()
}

/// `program`, lowered from the matmul `func`, verified (the barrier rule
/// included) and run by the lockstep emulator on `m × k` and `k × n`
/// operands of small integers (every product and sum exact, in any
/// order): its `c` is the interpreter's.
fn check(func: &Function, program: &Program, [m, k, n]: [usize; 3], grid: [u32; 3]) {
    tile_thread::program::verify(program).unwrap();
    let small = |rows: usize, cols: usize, seed: usize| {
        let scalars: Vec<Scalar> = (0..rows * cols)
            .map(|i| eval::cast(Scalar::I32(((i * 7 + seed) % 9) as i32 - 4), DType::F16))
            .collect();
        interp::Arg::Tensor(
            interp::HostTensor::from_scalars(DType::F16, &[rows, cols], &scalars).unwrap(),
        )
    };
    let args = vec![small(m, k, 1), small(k, n, 2), zeros(&[m, n])];
    let (mut got, mut want) = (args.clone(), args);
    emulate::run(program, grid, &mut got).unwrap();
    interp::run(func, grid, &mut want).unwrap();
    assert_eq!(format!("{:?}", got[2]), format!("{:?}", want[2]));
}

#[test]
fn a_loops_stages_override_the_kernels() {
    let (plain, three, one) = (matmul(""), matmul(" stages(3)"), matmul(" stages(1)"));
    let unpipelined = copies(&plain, 1);
    assert!(unpipelined > 0);
    assert_eq!(copies(&plain, 3), 3 * unpipelined);
    assert_eq!(copies(&three, 1), 3 * unpipelined);
    assert_eq!(copies(&one, 3), unpipelined);
    assert!(three.to_string().contains(" stages(3) : tile<32x32xf32> {"));
}

#[test]
fn a_loops_stages_are_checked() {
    let e = tile_ir::verify::verify(&matmul(" stages(9)")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "verifier: in kernel `matmul`, op `%11 = for %2, %8, %9, %10`: a loop's stages are 1 to 8, found 9"
    );
}

/// The `f16` elements of `func`'s shared allocations lowered for
/// `cores` with `stages` (the operands' rings; aliases counted once).
fn f16_shared(func: &Function, cores: TensorCores, warps: u32, stages: u32) -> usize {
    let options = LowerOptions::warps(warps)
        .with_tensor_cores(cores)
        .with_stages(stages);
    let program = lower(func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    program
        .shared
        .iter()
        .filter(|(_, s)| s.dtype == DType::F16 && s.aliases.is_none())
        .map(|(_, s)| s.len)
        .sum()
}

/// Where `mma.sync` loads its fragments into registers, or each `wgmma`
/// product waits for its own group, iteration `i` frees its stage by its
/// end, so from 3 stages on the ring holds one buffer fewer than the
/// stages (the copies for `i + S − 1` go into `i`'s buffer after the
/// body).
#[test]
fn rings_freed_within_the_body_hold_one_buffer_fewer() {
    let plain = matmul("");
    // One stage of A (32×16) and B (16×32).
    let stage = 2 * 32 * 16;
    for (stages, buffers) in [(2, 2), (3, 2), (4, 3)] {
        assert_eq!(
            f16_shared(&plain, TensorCores::MmaSync, 4, stages),
            buffers * stage,
            "{stages} stages"
        );
        assert_eq!(copies(&plain, stages), stages as usize * copies(&plain, 1));
    }
    // `wgmma`: 8 iterations of K through rings of 2 and 3 buffers.
    let wide = tile_ir::samples::matmul(128, 128, 64, DType::F16).unwrap();
    for (stages, buffers) in [(2, 2), (3, 2), (4, 3)] {
        let options = LowerOptions::warps(8)
            .with_tensor_cores(TensorCores::Wgmma)
            .with_stages(stages);
        let program = lower(&wide, &options).unwrap();
        check(&wide, &program, [128, 512, 128], [1, 1, 1]);
        assert_eq!(
            f16_shared(&wide, TensorCores::Wgmma, 8, stages),
            buffers * 2 * 128 * 64,
            "{stages} stages"
        );
    }
}
