//! `cse`, followed by `dce` to show what is left.

mod passes_support;
use passes_support::after;

#[test]
fn merges_equal_pure_ops_but_not_loads() {
    insta::assert_snapshot!(after(&["cse", "dce"],
        "kernel @k(%t: tensor<f32, 1>) {
  %0 = program_id 0 : i32
  %1 = program_id 0 : i32
  %2 = partition_view %t [8] : view<f32, [8]>
  %3 = partition_view %t [8] : view<f32, [8]>
  %4 = load %2[%0] : tile<8xf32>
  %5 = load %3[%1] : tile<8xf32>
  %6 = exp %4 : tile<8xf32>
  %7 = exp %4 : tile<8xf32>
  %8 = add %6, %7 : tile<8xf32>
  %9 = add %5, %5 : tile<8xf32>
  %10 = add %8, %9 : tile<8xf32>
  store %10, %3[%1]
}"
    ), @r"
    kernel @k(%t: tensor<f32, 1>) {
      %0 = program_id 0 : i32
      %1 = partition_view %t [8] : view<f32, [8]>
      %2 = load %1[%0] : tile<8xf32>
      %3 = load %1[%0] : tile<8xf32>
      %4 = exp %2 : tile<8xf32>
      %5 = add %4, %4 : tile<8xf32>
      %6 = add %3, %3 : tile<8xf32>
      %7 = add %5, %6 : tile<8xf32>
      store %7, %1[%0]
    }
    ");
}

#[test]
fn respects_scopes_a_value_of_a_loop_body_is_not_reused_after_it() {
    insta::assert_snapshot!(after(&["cse"],
        "kernel @k(%t: tensor<i32, 1>) {
  %0 = constant 0 : i32
  %1 = constant 4 : i32
  %2 = constant 1 : i32
  %3 = partition_view %t [4] : view<i32, [4]>
  %4 = for %5 = %0 to %1 step %2 iter(%6 = %0) : i32 {
    %7 = constant 0 : i32
    %8 = mul %1, %2 : i32
    %9 = add %6, %8 : i32
    yield %9
  }
  %10 = mul %1, %2 : i32
  %11 = add %4, %10 : i32
  %12 = broadcast %11 to [4] : tile<4xi32>
  store %12, %3[%0]
}"
    ), @r"
    kernel @k(%t: tensor<i32, 1>) {
      %0 = constant 0 : i32
      %1 = constant 4 : i32
      %2 = constant 1 : i32
      %3 = partition_view %t [4] : view<i32, [4]>
      %4 = for %5 = %0 to %1 step %2 iter(%6 = %0) : i32 {
        %7 = constant 0 : i32
        %8 = mul %1, %2 : i32
        %9 = add %6, %8 : i32
        yield %9
      }
      %10 = mul %1, %2 : i32
      %11 = add %4, %10 : i32
      %12 = broadcast %11 to [4] : tile<4xi32>
      store %12, %3[%0]
    }
    ");
}
