//! `dce` alone.

mod passes_support;
use passes_support::after;

#[test]
fn removes_unused_pure_ops_and_loops_without_stores_but_keeps_effects() {
    insta::assert_snapshot!(after(&["dce"],
        "kernel @k(%t: tensor<f32, 1>) {
  %0 = program_id 0 : i32
  %1 = partition_view %t [8] : view<f32, [8]>
  %2 = load %1[%0] : tile<8xf32>
  %3 = exp %2 : tile<8xf32>
  %4 = log %3 : tile<8xf32>
  %5 = constant 0 : i32
  %6 = constant 2 : i32
  %7 = constant 1 : i32
  %8 = for %9 = %5 to %6 step %7 iter(%10 = %2) : tile<8xf32> {
    %11 = exp %10 : tile<8xf32>
    yield %11
  }
  for %12 = %5 to %6 step %7 {
    %13 = sqrt %2 : tile<8xf32>
    store %13, %1[%12]
    yield
  }
}"
    ), @r"
    kernel @k(%t: tensor<f32, 1>) {
      %0 = program_id 0 : i32
      %1 = partition_view %t [8] : view<f32, [8]>
      %2 = load %1[%0] : tile<8xf32>
      %3 = constant 0 : i32
      %4 = constant 2 : i32
      %5 = constant 1 : i32
      for %6 = %3 to %4 step %5 {
        %7 = sqrt %2 : tile<8xf32>
        store %7, %1[%6]
        yield
      }
    }
    ");
}

#[test]
fn keeps_loops_and_ifs_that_only_assert_or_print() {
    insta::assert_snapshot!(after(&["dce"],
        r#"kernel @k(%n: i32) {
  %0 = program_id 0 : i32
  %1 = constant 0 : i32
  %2 = constant 1 : i32
  for %3 = %1 to %n step %2 {
    print 0 "step {}" %3
    yield
  }
  %4 = cmp lt %0, %n : bool
  if %4 {
    %5 = cmp gt %0, %1 : bool
    assert 0 "program {}" %5, %0
    yield
  } else {
    yield
  }
  for %6 = %1 to %n step %2 {
    %7 = add %6, %2 : i32
    yield
  }
}"#
    ), @r#"
    kernel @k(%n: i32) {
      %0 = program_id 0 : i32
      %1 = constant 0 : i32
      %2 = constant 1 : i32
      for %3 = %1 to %n step %2 {
        print 0 "step {}" %3
        yield
      }
      %4 = cmp lt %0, %n : bool
      if %4 {
        %5 = cmp gt %0, %1 : bool
        assert 0 "program {}" %5, %0
        yield
      } else {
        yield
      }
    }
    "#);
}
