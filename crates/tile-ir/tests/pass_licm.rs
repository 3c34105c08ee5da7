//! `licm`: pure ops of a `for` body computed from values defined before the
//! loop move in front of it; the kernel computes the same bits.

mod passes_support;
use passes_support::after;
use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::passes::PassManager;
use tile_ir::text::parse_function;

/// Rows of `a` gathered by a loaded index tile, one block of 4 columns per
/// iteration; the row index, its half, the row mask and the column offsets
/// are the same on every iteration.
const GATHER_LOOP: &str = "kernel @k(%a: tensor<f32, 2>, %r: tensor<i32, 1>, %o: tensor<f32, 2>) {
  %0 = constant 0 : i32
  %1 = constant 3 : i32
  %2 = constant 1 : i32
  %3 = constant 4 : i32
  %4 = partition_view %r [8] : view<i32, [8]>
  %5 = load %4[%0] : tile<8xi32>
  %6 = reshape %5 to [8, 1] : tile<8x1xi32>
  %7 = full 0.0 : tile<8x4xf32>
  %8 = for %9 = %0 to %1 step %2 iter(%10 = %7) : tile<8x4xf32> {
    %11 = iota : tile<1x4xi32>
    %12 = mul %9, %3 : i32
    %13 = broadcast %12 to [1, 4] : tile<1x4xi32>
    %14 = add %11, %13 : tile<1x4xi32>
    %15 = full 2 : tile<8x1xi32>
    %16 = div %6, %15 : tile<8x1xi32>
    %17 = full 5 : tile<8x1xi32>
    %18 = cmp lt %16, %17 : tile<8x1xbool>
    %19 = broadcast %18 to [8, 4] : tile<8x4xbool>
    %20 = broadcast %16 to [8, 4] : tile<8x4xi32>
    %21 = broadcast %14 to [8, 4] : tile<8x4xi32>
    %22 = full -1.0 : tile<8x4xf32>
    %23 = gather %a[%20, %21], %19, %22 : tile<8x4xf32>
    %24 = add %10, %23 : tile<8x4xf32>
    yield %24
  }
  %25 = partition_view %o [8, 4] : view<f32, [8, 4]>
  store %8, %25[%0, %0]
}";

#[test]
fn moves_the_invariant_index_and_mask_arithmetic_in_front_of_the_loop() {
    insta::assert_snapshot!(after(&["licm"], GATHER_LOOP), @r"
    kernel @k(%a: tensor<f32, 2>, %r: tensor<i32, 1>, %o: tensor<f32, 2>) {
      %0 = constant 0 : i32
      %1 = constant 3 : i32
      %2 = constant 1 : i32
      %3 = constant 4 : i32
      %4 = partition_view %r [8] : view<i32, [8]>
      %5 = load %4[%0] : tile<8xi32>
      %6 = reshape %5 to [8, 1] : tile<8x1xi32>
      %7 = full 0.0 : tile<8x4xf32>
      %8 = full 2 : tile<8x1xi32>
      %9 = div %6, %8 : tile<8x1xi32>
      %10 = full 5 : tile<8x1xi32>
      %11 = cmp lt %9, %10 : tile<8x1xbool>
      %12 = for %13 = %0 to %1 step %2 iter(%14 = %7) : tile<8x4xf32> {
        %15 = iota : tile<1x4xi32>
        %16 = mul %13, %3 : i32
        %17 = broadcast %16 to [1, 4] : tile<1x4xi32>
        %18 = add %15, %17 : tile<1x4xi32>
        %19 = broadcast %11 to [8, 4] : tile<8x4xbool>
        %20 = broadcast %9 to [8, 4] : tile<8x4xi32>
        %21 = broadcast %18 to [8, 4] : tile<8x4xi32>
        %22 = full -1.0 : tile<8x4xf32>
        %23 = gather %a[%20, %21], %19, %22 : tile<8x4xf32>
        %24 = add %14, %23 : tile<8x4xf32>
        yield %24
      }
      %25 = partition_view %o [8, 4] : view<f32, [8, 4]>
      store %12, %25[%0, %0]
    }
    ");
}

#[test]
fn the_moved_kernel_computes_the_same_bits() {
    let plain = parse_function(GATHER_LOOP).unwrap();
    let mut moved = plain.clone();
    let mut pm = PassManager::new();
    pm.add("licm").unwrap();
    pm.run(&mut moved, |_, _| {}).unwrap();
    assert_ne!(moved, plain);
    let a: Vec<f32> = (0..6 * 12).map(|i| i as f32 * 0.5 - 3.0).collect();
    let rows: Vec<i32> = vec![0, 1, 9, 4, 11, 2, 7, 3];
    let args = vec![
        Arg::Tensor(HostTensor::from_vec(&[6, 12], a).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[8], rows).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[8, 4], vec![0.0f32; 32]).unwrap()),
    ];
    let (mut before, mut after) = (args.clone(), args);
    run(&plain, [1, 1, 1], &mut before).unwrap();
    run(&moved, [1, 1, 1], &mut after).unwrap();
    assert_eq!(before, after);
}

#[test]
fn leaves_loads_reshapes_permutes_and_ops_in_a_nested_if() {
    let src = "kernel @k(%t: tensor<f32, 2>, %n: i32) {
  %0 = constant 0 : i32
  %1 = constant 4 : i32
  %2 = constant 1 : i32
  %3 = partition_view %t [4, 4] : view<f32, [4, 4]>
  %4 = load %3[%0, %0] : tile<4x4xf32>
  %5 = full 0.0 : tile<4x4xf32>
  %6 = for %7 = %0 to %1 step %2 iter(%8 = %5) : tile<4x4xf32> {
    %9 = load %3[%0, %0] : tile<4x4xf32>
    %10 = permute %4 [1, 0] : tile<4x4xf32>
    %11 = reshape %4 to [16] : tile<16xf32>
    %12 = reshape %11 to [4, 4] : tile<4x4xf32>
    %13 = cmp lt %7, %n : bool
    %14 = if %13 : tile<4x4xf32> {
      %15 = exp %4 : tile<4x4xf32>
      yield %15
    } else {
      yield %4
    }
    %16 = add %9, %10 : tile<4x4xf32>
    %17 = add %16, %12 : tile<4x4xf32>
    %18 = add %17, %14 : tile<4x4xf32>
    %19 = add %8, %18 : tile<4x4xf32>
    yield %19
  }
  store %6, %3[%0, %0]
}";
    assert_eq!(after(&["licm"], src), after(&[], src));
}

#[test]
fn moves_an_inner_loops_invariants_as_far_out_as_they_are_invariant() {
    insta::assert_snapshot!(after(&["licm"],
        "kernel @k(%t: tensor<f32, 2>) {
  %0 = constant 0 : i32
  %1 = constant 4 : i32
  %2 = constant 1 : i32
  %3 = partition_view %t [4, 4] : view<f32, [4, 4]>
  %4 = load %3[%0, %0] : tile<4x4xf32>
  %5 = slice %4 [0:4:1, 0:1:1] : tile<4x1xf32>
  %6 = for %7 = %0 to %1 step %2 iter(%8 = %4) : tile<4x4xf32> {
    %9 = cast %7 to f32 : f32
    %10 = broadcast %9 to [4, 1] : tile<4x1xf32>
    %11 = for %12 = %0 to %1 step %2 iter(%13 = %8) : tile<4x4xf32> {
      %14 = full 2.0 : tile<4x1xf32>
      %15 = mul %5, %14 : tile<4x1xf32>
      %16 = broadcast %15 to [4, 4] : tile<4x4xf32>
      %17 = broadcast %10 to [4, 4] : tile<4x4xf32>
      %18 = add %16, %17 : tile<4x4xf32>
      %19 = add %13, %18 : tile<4x4xf32>
      yield %19
    }
    yield %11
  }
  store %6, %3[%0, %0]
}"
    ), @r"
    kernel @k(%t: tensor<f32, 2>) {
      %0 = constant 0 : i32
      %1 = constant 4 : i32
      %2 = constant 1 : i32
      %3 = partition_view %t [4, 4] : view<f32, [4, 4]>
      %4 = load %3[%0, %0] : tile<4x4xf32>
      %5 = slice %4 [0:4:1, 0:1:1] : tile<4x1xf32>
      %6 = full 2.0 : tile<4x1xf32>
      %7 = mul %5, %6 : tile<4x1xf32>
      %8 = for %9 = %0 to %1 step %2 iter(%10 = %4) : tile<4x4xf32> {
        %11 = cast %9 to f32 : f32
        %12 = broadcast %11 to [4, 1] : tile<4x1xf32>
        %13 = for %14 = %0 to %1 step %2 iter(%15 = %10) : tile<4x4xf32> {
          %16 = broadcast %7 to [4, 4] : tile<4x4xf32>
          %17 = broadcast %12 to [4, 4] : tile<4x4xf32>
          %18 = add %16, %17 : tile<4x4xf32>
          %19 = add %15, %18 : tile<4x4xf32>
          yield %19
        }
        yield %13
      }
      store %8, %3[%0, %0]
    }
    ");
}
