//! `for` and `if` on the host back end against the interpreter: carried
//! tiles that swap homes (directly and through a `reshape`, which shares its
//! operand's place), bounds of narrow signed and of large unsigned dtypes,
//! results of `if`; and the loop errors (non-positive step, iteration limit).

mod common;

use common::{bytes, host_agrees, run_host, HostRun};

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{Function, Scalar};
use tile_runtime::cpu::{HostFault, RunError};

fn parse(text: &str) -> Function {
    tile_ir::text::parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn out(n: usize) -> Arg {
    Arg::Tensor(HostTensor::from_vec(&[n], vec![-1.0f32; n]).unwrap())
}

/// The interpreter and the host back end agree on every byte, and the
/// kernel wrote something.
fn check(func: &Function, grid: [u32; 3], args: Vec<Arg>) {
    let before = bytes(&args);
    let after = host_agrees(func, grid, args);
    assert!(bytes(&after) != before, "the kernel stores nothing");
}

#[test]
fn carried_tiles_that_swap_homes() {
    // Each iteration yields the two carried tiles swapped, the first either
    // itself or through two `reshape`s (which share its place): the first
    // home is overwritten before the second reads it unless the back end
    // copies aside.
    for first in ["%a", "%r2"] {
        let text = format!(
            "kernel @swap(%out: tensor<f32, 1>, %n: i32) {{
  %c0 = constant 0 : i32
  %c1 = constant 1 : i32
  %a0 = iota : tile<8xf32>
  %b0 = full 100.0 : tile<8xf32>
  %s0 = constant 0.5 : f32
  %ra, %rb, %rs = for %i = %c0 to %n step %c1 iter(%a = %a0, %b = %b0, %s = %s0) : tile<8xf32>, tile<8xf32>, f32 {{
    %r = reshape %a to [2, 4] : tile<2x4xf32>
    %r2 = reshape %r to [8] : tile<8xf32>
    %s2 = add %s, %s : f32
    yield %b, {first}, %s2
  }}
  %t = mul %ra, %rb : tile<8xf32>
  %sb = broadcast %rs to [8] : tile<8xf32>
  %u = add %t, %sb : tile<8xf32>
  %p = program_id 0 : i32
  %v = partition_view %out [8] : view<f32, [8]>
  store_masked %u, %v[%p]
}}"
        );
        let func = parse(&text);
        for n in [0, 1, 2, 5] {
            check(&func, [2, 1, 1], vec![out(16), Arg::Scalar(Scalar::I32(n))]);
        }
    }
}

#[test]
fn loop_bounds_of_narrow_and_unsigned_dtypes() {
    // The induction variable is summed as f32; each kernel stores the sum.
    for (dtype, lo, hi, step) in [
        ("i8", "-100", "120", "7"),
        ("i8", "-5", "-6", "1"),
        ("u8", "200", "255", "9"),
        ("i16", "-30000", "30000", "4999"),
        ("u64", "18446744073709551600", "18446744073709551615", "4"),
        ("i64", "-9223372036854775807", "-9223372036854775790", "3"),
    ] {
        let text = format!(
            "kernel @bounds(%out: tensor<f32, 1>) {{
  %lo = constant {lo} : {dtype}
  %hi = constant {hi} : {dtype}
  %st = constant {step} : {dtype}
  %z = constant 0.0 : f32
  %sum = for %i = %lo to %hi step %st iter(%acc = %z) : f32 {{
    %f = cast %i to f32 : f32
    %next = add %acc, %f : f32
    yield %next
  }}
  %t = broadcast %sum to [4] : tile<4xf32>
  %c0 = constant 0 : i32
  %v = partition_view %out [4] : view<f32, [4]>
  store %t, %v[%c0]
}}"
        );
        check(&parse(&text), [1, 1, 1], vec![out(4)]);
    }
}

#[test]
fn if_results_of_both_kinds() {
    let text = "kernel @choose(%out: tensor<f32, 1>, %k: i32) {
  %p = program_id 0 : i32
  %c = cmp lt %p, %k : bool
  %a0 = iota : tile<8xf32>
  %b0 = full 3.0 : tile<8xf32>
  %x, %y = if %c : tile<8xf32>, f32 {
    %one = constant 1.0 : f32
    yield %a0, %one
  } else {
    %two = constant 2.0 : f32
    yield %b0, %two
  }
  %yb = broadcast %y to [8] : tile<8xf32>
  %t = mul %x, %yb : tile<8xf32>
  %v = partition_view %out [8] : view<f32, [8]>
  store %t, %v[%p]
}";
    let func = parse(text);
    for k in [0, 2, 5] {
        check(&func, [4, 1, 1], vec![out(32), Arg::Scalar(Scalar::I32(k))]);
    }
}

/// A loop from 0 to `hi` by `step` (i64) that stores its count.
fn counting(hi: i64, step: i64) -> (Function, Vec<Arg>) {
    let text = format!(
        "kernel @count(%out: tensor<f32, 1>) {{
  %lo = constant 0 : i64
  %hi = constant {hi} : i64
  %st = constant {step} : i64
  %z = constant 0.0 : f32
  %n = for %i = %lo to %hi step %st iter(%acc = %z) : f32 {{
    %one = constant 1.0 : f32
    %next = add %acc, %one : f32
    yield %next
  }}
  %t = broadcast %n to [4] : tile<4xf32>
  %c0 = constant 0 : i32
  %v = partition_view %out [4] : view<f32, [4]>
  store %t, %v[%c0]
}}"
    );
    (parse(&text), vec![out(4)])
}

#[test]
fn a_non_positive_step_fails_and_stores_nothing() {
    for step in [0, -2] {
        let (func, args) = counting(10, step);
        assert!(interp::run(&func, [1, 1, 1], &mut args.clone()).is_err());
        let mut actual = args.clone();
        let err = run_host(&func, [1, 1, 1], &mut actual).unwrap_err();
        assert!(
            matches!(&err, HostRun::Run(RunError::Op { fault: HostFault::NonPositiveStep { step: s }, .. }) if *s == step),
            "{err}"
        );
        assert!(bytes(&actual) == bytes(&args));
    }
}

#[test]
fn a_loop_over_the_iteration_limit_fails_before_it_starts() {
    // The interpreter's limit is 2^24 iterations (it would run them all
    // before failing, too slowly for a test); the last allowed count runs.
    let limit = interp::Options::default().max_loop_iterations as i64;
    let (func, args) = counting(limit + 1, 1);
    let mut actual = args.clone();
    let err = run_host(&func, [1, 1, 1], &mut actual).unwrap_err();
    assert!(
        matches!(&err, HostRun::Run(RunError::Op { fault: HostFault::IterationLimit { iterations, .. }, .. }) if *iterations == limit + 1),
        "{err}"
    );
    assert!(bytes(&actual) == bytes(&args));
    let (func, mut args) = counting(2 * limit, 2);
    run_host(&func, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![limit as f32; 4]);
}
