//! `canonicalize`, followed by `dce` to show what is left.

mod passes_support;
use passes_support::after;

fn canon(src: &str) -> String {
    after(&["canonicalize", "dce"], src)
}

#[test]
fn folds_scalar_arithmetic_casts_and_comparisons() {
    insta::assert_snapshot!(canon(
        "kernel @k(%t: tensor<i32, 1>) {
  %0 = constant 2 : i32
  %1 = constant 3 : i32
  %2 = add %0, %1 : i32
  %3 = cast %2 to f32 : f32
  %4 = cmp lt %0, %1 : bool
  %5 = constant 0 : i32
  %6 = div %2, %5 : i32
  %7 = partition_view %t [4] : view<i32, [4]>
  %8 = select %4, %6, %2 : i32
  %9 = broadcast %8 to [4] : tile<4xi32>
  store %9, %7[%0]
}"
    ), @r"
    kernel @k(%t: tensor<i32, 1>) {
      %0 = constant 2 : i32
      %1 = partition_view %t [4] : view<i32, [4]>
      %2 = full 0 : tile<4xi32>
      store %2, %1[%0]
    }
    ");
}

#[test]
fn folds_splat_tiles_and_movement_of_splats() {
    insta::assert_snapshot!(canon(
        "kernel @k(%t: tensor<f32, 2>) {
  %0 = full 2.0 : tile<4x8xf32>
  %1 = full 3.0 : tile<4x8xf32>
  %2 = mul %0, %1 : tile<4x8xf32>
  %3 = permute %2 [1, 0] : tile<8x4xf32>
  %4 = exp %3 : tile<8x4xf32>
  %5 = program_id 0 : i32
  %6 = partition_view %t [8, 4] : view<f32, [8, 4]>
  store %4, %6[%5, %5]
}"
    ), @r"
    kernel @k(%t: tensor<f32, 2>) {
      %0 = full 403.4288 : tile<8x4xf32>
      %1 = program_id 0 : i32
      %2 = partition_view %t [8, 4] : view<f32, [8, 4]>
      store %0, %2[%1, %1]
    }
    ");
}

#[test]
fn applies_identities_that_hold_bit_for_bit() {
    // Integer arithmetic identities and bit-moving identities (cast to the
    // same dtype, identity permute) apply; float arithmetic ones do not: a
    // float op canonicalizes a NaN operand's payload, so `x * 1.0` is not `x`.
    insta::assert_snapshot!(canon(
        "kernel @k(%t: tensor<f32, 1>, %u: tensor<i32, 1>) {
  %0 = program_id 0 : i32
  %1 = partition_view %t [16] : view<f32, [16]>
  %2 = load %1[%0] : tile<16xf32>
  %3 = full 1.0 : tile<16xf32>
  %4 = mul %3, %2 : tile<16xf32>
  %5 = cast %4 to f32 : tile<16xf32>
  %6 = permute %5 [0] : tile<16xf32>
  store %6, %1[%0]
  %7 = partition_view %u [16] : view<i32, [16]>
  %8 = load %7[%0] : tile<16xi32>
  %9 = full 0 : tile<16xi32>
  %10 = add %8, %9 : tile<16xi32>
  %11 = full 1 : tile<16xi32>
  %12 = mul %11, %10 : tile<16xi32>
  %13 = neg %12 : tile<16xi32>
  %14 = neg %13 : tile<16xi32>
  %15 = sub %14, %14 : tile<16xi32>
  %16 = xor %14, %8 : tile<16xi32>
  %17 = add %15, %16 : tile<16xi32>
  store %17, %7[%0]
}"
    ), @r"
    kernel @k(%t: tensor<f32, 1>, %u: tensor<i32, 1>) {
      %0 = program_id 0 : i32
      %1 = partition_view %t [16] : view<f32, [16]>
      %2 = load %1[%0] : tile<16xf32>
      %3 = full 1.0 : tile<16xf32>
      %4 = mul %3, %2 : tile<16xf32>
      store %4, %1[%0]
      %5 = partition_view %u [16] : view<i32, [16]>
      %6 = full 0 : tile<16xi32>
      store %6, %5[%0]
    }
    ");
}

#[test]
fn inlines_the_taken_branch_and_drops_loops_that_never_run() {
    insta::assert_snapshot!(canon(
        "kernel @k(%t: tensor<f32, 1>) {
  %0 = program_id 0 : i32
  %1 = partition_view %t [4] : view<f32, [4]>
  %2 = constant false : bool
  %3 = if %2 : tile<4xf32> {
    %4 = full 1.0 : tile<4xf32>
    yield %4
  } else {
    %5 = load %1[%0] : tile<4xf32>
    yield %5
  }
  %6 = constant 4 : i32
  %7 = constant 4 : i32
  %8 = constant 1 : i32
  %9 = for %10 = %6 to %7 step %8 iter(%11 = %3) : tile<4xf32> {
    %12 = exp %11 : tile<4xf32>
    store %12, %1[%10]
    yield %12
  }
  store %9, %1[%0]
}"
    ), @r"
    kernel @k(%t: tensor<f32, 1>) {
      %0 = program_id 0 : i32
      %1 = partition_view %t [4] : view<f32, [4]>
      %2 = load %1[%0] : tile<4xf32>
      store %2, %1[%0]
    }
    ");
}
