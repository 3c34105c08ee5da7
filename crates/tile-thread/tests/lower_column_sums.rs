//! Tiles reduced along an outer axis put their warps across the kept axes
//! (`layout_assign/reduced.rs`): the warps of a block of partial rows summed
//! into columns each hold whole columns, so the sum needs no shared memory,
//! where warps along the rows would combine their shares through it.

use tile_ir::interp;
use tile_ir::interp::Arg;
use tile_ir::text::parse_function;
use tile_ir::DType;
use tile_testgen::inputs::{tensor, tensor_of};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::Program;

/// `out[c] = Σ_r x[r, c]` over the first `m` rows, 32 × 128 blocks at a
/// time (Triton's layer-norm `dW`/`dB` reduction, on integers).
const COLUMN_SUMS: &str = "kernel @column_sums(%x: tensor<i32, 2>, %out: tensor<i32, 1>, %m: i32) {
  %p = program_id 0 : i32
  %z = constant 0 : i32
  %one = constant 1 : i32
  %bm = constant 32 : i32
  %w = dim %x axis 1 : i32
  %vx = partition_view %x [32, 128] : view<i32, [32, 128]>
  %full = full 0 : tile<32x128xi32>
  %m31 = add %m, %bm : i32
  %m32 = sub %m31, %one : i32
  %blocks = div %m32, %bm : i32
  %sum = for %i = %z to %blocks step %one iter(%acc = %full) : tile<32x128xi32> {
    %t = load_masked %vx[%i, %p] pad(zero) : tile<32x128xi32>
    %next = add %acc, %t : tile<32x128xi32>
    yield %next
  }
  %cols = reduce sum %sum axis 0 : tile<128xi32>
  %vo = partition_view %out [128] : view<i32, [128]>
  store_masked %cols, %vo[%p]
}";

/// `out[r, c] = x[r, c] − max_r x[r, c]` for a block of 64 × 32: the
/// column maxima broadcast back over their rows.
const MINUS_COLUMN_MAX: &str =
    "kernel @minus_column_max(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {
  %p = program_id 0 : i32
  %z = constant 0 : i32
  %vx = partition_view %x [64, 32] : view<f32, [64, 32]>
  %t = load_masked %vx[%z, %p] pad(zero) : tile<64x32xf32>
  %top = reduce max %t axis 0 keepdim : tile<1x32xf32>
  %b = broadcast %top to [64, 32] : tile<64x32xf32>
  %d = sub %t, %b : tile<64x32xf32>
  %vo = partition_view %out [64, 32] : view<f32, [64, 32]>
  store_masked %d, %vo[%z, %p]
}";

/// The elements of the shared buffers of `program`.
fn staged(program: &Program) -> usize {
    program.shared.iter().map(|(_, a)| a.len).sum()
}

/// `source` lowered with `options`, verified.
fn lowered(source: &str, options: &LowerOptions) -> Program {
    let func = parse_function(source).expect("the kernel parses");
    let program = lower(&func, options).expect("it lowers");
    tile_thread::program::verify(&program).expect("it verifies");
    program
}

/// Runs `program` on the lockstep emulator and `source` on the interpreter
/// over `grid` and asserts that they leave the same tensors.
fn runs_as_interpreted(source: &str, program: &Program, grid: [u32; 3], args: Vec<Arg>) {
    let func = parse_function(source).expect("the kernel parses");
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(program, grid, &mut emulated).expect("it runs");
    interp::run(&func, grid, &mut reference).expect("it interprets");
    assert_eq!(emulated, reference);
}

/// 70 rows (a partial third block) of 200 columns (a partial second
/// program), summed over their first `m` rows.
fn column_sum_args(m: i32) -> Vec<Arg> {
    vec![
        tensor_of(1, &[70, 200], DType::I32),
        tensor_of(2, &[200], DType::I32),
        Arg::Scalar(tile_ir::Scalar::I32(m)),
    ]
}

#[test]
fn a_carried_column_sum_stays_in_its_warps() {
    for options in [
        LowerOptions::warps(4),
        LowerOptions::warps(4).with_tensor_cores(TensorCores::Mfma),
    ] {
        let program = lowered(COLUMN_SUMS, &options);
        assert_eq!(staged(&program), 0, "{program}");
        for m in [70, 33] {
            runs_as_interpreted(COLUMN_SUMS, &program, [2, 1, 1], column_sum_args(m));
        }
    }
}

#[test]
fn column_maxima_broadcast_back_without_shared_memory() {
    let program = lowered(MINUS_COLUMN_MAX, &LowerOptions::warps(4));
    assert_eq!(staged(&program), 0, "{program}");
    runs_as_interpreted(
        MINUS_COLUMN_MAX,
        &program,
        [3, 1, 1],
        vec![tensor(3, &[50, 90]), tensor(4, &[50, 90])],
    );
}
