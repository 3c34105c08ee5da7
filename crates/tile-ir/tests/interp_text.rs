//! Kernels written in the text form, run by the interpreter: control flow
//! nested in loops, and every op kind in one kernel.

use tile_ir::interp::{run, Arg, HostTensor, InterpError};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Scalar};

/// 40 Collatz steps from `%start`, carrying the value and the running sum.
const COLLATZ: &str = "
kernel @collatz(%out: tensor<i64, 1>, %start: i64) {
  %zero = constant 0 : i64
  %one = constant 1 : i64
  %two = constant 2 : i64
  %three = constant 3 : i64
  %steps = constant 40 : i64
  %x, %sum = for %i = %zero to %steps step %one iter(%v = %start, %s = %zero) : i64, i64 {
    %r = rem %v, %two : i64
    %even = cmp eq %r, %zero : bool
    %next = if %even : i64 {
      %h = div %v, %two : i64
      yield %h
    } else {
      %t = mul %v, %three : i64
      %u = add %t, %one : i64
      yield %u
    }
    %s2 = add %s, %next : i64
    yield %next, %s2
  }
  %a = broadcast %x to [1] : tile<1xi64>
  %b = broadcast %sum to [1] : tile<1xi64>
  %c = cat %a, %b axis 0 : tile<2xi64>
  %view = partition_view %out [2] : view<i64, [2]>
  store %c, %view[%zero]
}";

#[test]
fn a_text_kernel_with_an_if_inside_a_loop() {
    let func = parse_function(COLLATZ).unwrap();
    verify::verify(&func).unwrap();
    for start in [1i64, 6, 27, 97] {
        let mut args = vec![
            Arg::Tensor(HostTensor::zeros(DType::I64, &[2])),
            Arg::Scalar(Scalar::I64(start)),
        ];
        run(&func, [1, 1, 1], &mut args).unwrap();
        let (mut v, mut sum) = (start, 0);
        for _ in 0..40 {
            v = if v % 2 == 0 { v / 2 } else { 3 * v + 1 };
            sum += v;
        }
        let Arg::Tensor(out) = &args[0] else {
            unreachable!()
        };
        assert_eq!(out.to_vec::<i64>().unwrap(), vec![v, sum], "start {start}");
    }
}

/// Every op kind once (after the text-form tests' kernel of the same name).
const EVERY_OP: &str = "
kernel @every_op(%x: tensor<f32, 2>, %n: i32, %flag: bool) {
  %0 = program_id 0 : i32
  %1 = num_programs 1 : i32
  %2 = constant 1.5 : f32
  %3 = iota : tile<4x8xf32>
  %4 = iota : tile<16xi32>
  %5 = exp %3 : tile<4x8xf32>
  %6 = add %3, %5 : tile<4x8xf32>
  %7 = cmp lt %3, %5 : tile<4x8xbool>
  %8 = select %7, %3, %5 : tile<4x8xf32>
  %9 = fma %3, %3, %3 : tile<4x8xf32>
  %10 = cast %3 to f16 : tile<4x8xf16>
  %11 = broadcast %2 to [4, 8] : tile<4x8xf32>
  %12 = reshape %3 to [32] : tile<32xf32>
  %13 = permute %3 [1, 0] : tile<8x4xf32>
  %14 = full 2.0 : tile<4x1xf32>
  %15 = expand %14 to [4, 8] : tile<4x8xf32>
  %16 = flip %3 [0, 1] : tile<4x8xf32>
  %17 = slice %3 [0:4:1, 2:8:2] : tile<4x3xf32>
  %18 = pad %3 low [1, 0] high [0, 2] value 0.0 : tile<5x10xf32>
  %19 = cat %3, %3 axis 0 : tile<8x8xf32>
  %20 = reduce sum %3 axis 1 : tile<4xf32>
  %21 = reduce max %3 axis 1 keepdim : tile<4x1xf32>
  %22 = arg argmax %13 axis 0 : tile<4xi32>
  %23 = scan cumsum %3 axis 1 : tile<4x8xf32>
  %24 = full 1.0 : tile<8x8xf32>
  %25 = dot ieee %3, %24, %6 : tile<4x8xf32>
  %26 = dim %x axis 0 : i32
  %27 = partition_view %x [4, 8] : view<f32, [4, 8]>
  %28 = load %27[%0, %1] : tile<4x8xf32>
  %29 = load_masked %27[%0, %1] pad(nan) : tile<4x8xf32>
  store %25, %27[%0, %1]
  store_masked %6, %27[%0, %0]
  %30 = constant 0 : i32
  %31 = constant 4 : i32
  %32 = constant 1 : i32
  %33, %34 = for %35 = %30 to %31 step %32 iter(%36 = %3, %37 = %2) : tile<4x8xf32>, f32 {
    %38 = add %36, %36 : tile<4x8xf32>
    yield %38, %37
  }
  for %39 = %30 to %n step %32 {
    yield
  }
  %40 = if %flag : f32 {
    yield %2
  } else {
    yield %34
  }
}";

#[test]
fn every_op_kind_runs() {
    let func = parse_function(EVERY_OP).unwrap();
    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 16])),
        Arg::Scalar(Scalar::I32(3)),
        Arg::Scalar(Scalar::Bool(true)),
    ];
    run(&func, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(x) = &args[0] else {
        unreachable!()
    };
    let got = x.to_vec::<f32>().unwrap();
    // Partition (0, 0) holds iota + exp(iota); partition (0, 1) holds
    // iota · ones + that, summed over k in order.
    for (r, c) in [(0usize, 0usize), (1, 3), (3, 7)] {
        let i = (r * 8 + c) as f32;
        let e = (f64::from(i).exp()) as f32;
        assert_eq!(got[r * 16 + c], i + e, "[{r}, {c}]");
        let mut acc = i + e;
        for k in 0..8 {
            acc = ((r * 8 + k) as f32).mul_add(1.0, acc);
        }
        assert_eq!(got[r * 16 + 8 + c], acc, "[{r}, {}]", 8 + c);
    }
    // A second program along y reaches partition (0, 2): outside the space.
    let err = run(&func, [1, 2, 1], &mut args).unwrap_err();
    let InterpError::Op { program, op, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*program, [0, 0, 0]);
    assert_eq!(op, "`%28 = load %27, %0, %1` (a view of `x`)");
}

/// A `tf32` dot rounds each operand to TF32 before the chain: `(1 + 2⁻¹¹)²`
/// is `(1 + 2⁻¹⁰)²` there, not the `ieee` dot's `1 + 2⁻¹⁰ + 2⁻²²`.
#[test]
fn a_tf32_dot_rounds_its_operands() {
    let kernel = |precision: &str| {
        format!(
            "kernel @d(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %v = partition_view %x [1, 1] : view<f32, [1, 1]>
  %a = load %v[%zero, %zero] : tile<1x1xf32>
  %c = full 0.0 : tile<1x1xf32>
  %d = dot {precision} %a, %a, %c : tile<1x1xf32>
  %o = partition_view %out [1, 1] : view<f32, [1, 1]>
  store %d, %o[%zero, %zero]
}}"
        )
    };
    let x = 1.0 + 2f32.powi(-11);
    let run_with = |precision: &str| {
        let func = parse_function(&kernel(precision)).unwrap();
        verify::verify(&func).unwrap();
        let mut args = vec![
            Arg::Tensor(HostTensor::from_vec(&[1, 1], vec![x]).unwrap()),
            Arg::Tensor(HostTensor::from_vec(&[1, 1], vec![0.0f32]).unwrap()),
        ];
        run(&func, [1, 1, 1], &mut args).unwrap();
        match &args[1] {
            Arg::Tensor(t) => t.get(&[0, 0]).unwrap(),
            other => panic!("not a tensor: {other:?}"),
        }
    };
    let rounded = 1.0 + 2f32.powi(-10);
    assert_eq!(run_with("tf32"), Scalar::F32(rounded * rounded));
    assert_eq!(run_with("ieee"), Scalar::F32(x * x));
}
