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
