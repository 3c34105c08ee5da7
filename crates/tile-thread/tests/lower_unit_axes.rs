//! Axes of extent 1 inserted or removed cost nothing: a weight row
//! broadcast from `[N]` to `[1, N]` (a LayerNorm's `w`), and a row result
//! reshaped from `[1, 1]` to `[1]` to be stored (its `rstd`), keep their
//! registers instead of going through shared memory.

use tile_ir::interp;
use tile_ir::text::parse_function;
use tile_testgen::inputs::tensor;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// `y = x · -w` row by row, and each row's maximum stored as `s[row]`.
const SCALED_ROWS: &str = "kernel @scaled_rows(%x: tensor<f32, 2>, %w: tensor<f32, 1>, %y: tensor<f32, 2>, %s: tensor<f32, 1>) {
  %0 = program_id 0 : i32
  %1 = partition_view %x [1, 256] : view<f32, [1, 256]>
  %2 = constant 0 : i32
  %3 = load_masked %1[%0, %2] pad(zero) : tile<1x256xf32>
  %4 = partition_view %w [256] : view<f32, [256]>
  %5 = load_masked %4[%2] pad(zero) : tile<256xf32>
  %12 = neg %5 : tile<256xf32>
  %6 = broadcast %12 to [1, 256] : tile<1x256xf32>
  %7 = mul %3, %6 : tile<1x256xf32>
  %8 = reduce max %7 axis 1 keepdim : tile<1x1xf32>
  %9 = reshape %8 to [1] : tile<1xf32>
  %10 = partition_view %s [1] : view<f32, [1]>
  store_masked %9, %10[%0]
  %11 = partition_view %y [1, 256] : view<f32, [1, 256]>
  store_masked %7, %11[%0, %2]
}";

#[test]
fn unit_axes_keep_their_registers() {
    let func = parse_function(SCALED_ROWS).expect("the kernel parses");
    let program = lower(&func, &LowerOptions::warps(2)).expect("it lowers");
    tile_thread::program::verify(&program).expect("it verifies");
    // Only the maximum's two warp totals meet in shared memory.
    let elements: usize = program.shared.iter().map(|(_, a)| a.len).sum();
    assert_eq!(elements, 2, "{program}");
    let args = vec![
        tensor(1, &[5, 200]),
        tensor(2, &[200]),
        tensor(3, &[5, 200]),
        tensor(4, &[5]),
    ];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(&program, [5, 1, 1], &mut emulated).expect("it runs");
    interp::run(&func, [5, 1, 1], &mut reference).expect("it interprets");
    assert_eq!(emulated, reference);
}

/// A tensor-core product minus a row of statistics loaded `[1, 64]` and
/// viewed `[64, 1]` (attention's backward pass subtracts the log-sum-exp
/// of each query so).
const ROWS_OFF_A_PRODUCT: &str = "kernel @rows_off_a_product(%a: tensor<f16, 2>, %b: tensor<f16, 2>, %l: tensor<f32, 2>, %o: tensor<f32, 2>) {
  %z = constant 0 : i32
  %va = partition_view %a [64, 32] : view<f16, [64, 32]>
  %vb = partition_view %b [32, 64] : view<f16, [32, 64]>
  %x = load %va[%z, %z] : tile<64x32xf16>
  %y = load %vb[%z, %z] : tile<32x64xf16>
  %c = full 0.0 : tile<64x64xf32>
  %d = dot tensor %x, %y, %c : tile<64x64xf32>
  %vl = partition_view %l [1, 64] : view<f32, [1, 64]>
  %r = load %vl[%z, %z] : tile<1x64xf32>
  %rc = reshape %r to [64, 1] : tile<64x1xf32>
  %rb = broadcast %rc to [64, 64] : tile<64x64xf32>
  %s = sub %d, %rb : tile<64x64xf32>
  %vo = partition_view %o [64, 64] : view<f32, [64, 64]>
  store %s, %vo[%z, %z]
}";

/// `-2..=2` in `dtype`, a pattern of `seed`: every order of a product's
/// sums is exact.
fn small_ints(dtype: tile_ir::DType, shape: &[usize], seed: usize) -> tile_ir::interp::Arg {
    use tile_ir::interp::{Arg, HostTensor};
    let n = shape.iter().product::<usize>();
    let data: Vec<tile_ir::Scalar> = (0..n)
        .map(|i| {
            tile_ir::eval::cast(
                tile_ir::Scalar::F64(((i * 7 + seed) % 5) as f64 - 2.0),
                dtype,
            )
        })
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &data).unwrap())
}

#[test]
fn a_row_viewed_as_a_column_is_loaded_where_the_product_holds_its_rows() {
    use tile_ir::DType;
    use tile_thread::lower::TensorCores;
    let func = parse_function(ROWS_OFF_A_PRODUCT).expect("the kernel parses");
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(&func, &options).expect("it lowers");
    tile_thread::program::verify(&program).expect("it verifies");
    // Only the product's operands are staged: the row is read straight
    // into the accumulator's rows, not staged and gathered twice.
    let elements: usize = program.shared.iter().map(|(_, a)| a.len).sum();
    assert_eq!(elements, 64 * 32 + 32 * 64, "{program}");
    let args = vec![
        small_ints(DType::F16, &[64, 32], 1),
        small_ints(DType::F16, &[32, 64], 2),
        small_ints(DType::F32, &[1, 64], 3),
        small_ints(DType::F32, &[64, 64], 0),
    ];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(&program, [1, 1, 1], &mut emulated).expect("it runs");
    interp::run(&func, [1, 1, 1], &mut reference).expect("it interprets");
    assert_eq!(emulated, reference);
}
