//! `for`, `while` and `if`, program ids over a 3-D grid, argument checking, and the
//! errors of loops.

mod interp_support;

use interp_support::{f32_tensor, tensor_ty, zero_index};
use tile_ir::builder::Builder;
use tile_ir::interp::{run, run_with, Arg, Fault, HostTensor, InterpError, Options};
use tile_ir::{BinaryOp, CmpPred, DType, Function, Scalar, Type};

/// `out[0] = Σ_{iv = lo; iv < hi; iv += step} (iv * iv)` in i64, with a
/// second carried value counting the iterations; the bounds are parameters.
fn loop_kernel() -> Function {
    let mut b = Builder::new("loop");
    let out = b.param("out", tensor_ty(DType::I64, 1));
    let lo = b.param("lo", Type::Scalar(DType::I64));
    let hi = b.param("hi", Type::Scalar(DType::I64));
    let step = b.param("step", Type::Scalar(DType::I64));
    let zero = b.constant(Scalar::I64(0)).unwrap();
    let results = b
        .for_loop(lo, hi, step, &[zero, zero], |b, iv, carried| {
            let sq = b.binary(BinaryOp::Mul, iv, iv)?;
            let sum = b.binary(BinaryOp::Add, carried[0], sq)?;
            let one = b.constant(Scalar::I64(1))?;
            let count = b.binary(BinaryOp::Add, carried[1], one)?;
            Ok(vec![sum, count])
        })
        .unwrap();
    let s = b.broadcast(results[0], &[1]).unwrap();
    let c = b.broadcast(results[1], &[1]).unwrap();
    let both = b.cat(&[s, c], 0).unwrap();
    let v = b.partition_view(out, &[2]).unwrap();
    let idx = zero_index(&mut b, 1).unwrap();
    b.store(both, v, &idx).unwrap();
    b.finish().unwrap()
}

fn run_loop(lo: i64, hi: i64, step: i64, options: &Options) -> Result<Vec<i64>, InterpError> {
    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::I64, &[2])),
        Arg::Scalar(Scalar::I64(lo)),
        Arg::Scalar(Scalar::I64(hi)),
        Arg::Scalar(Scalar::I64(step)),
    ];
    run_with(&loop_kernel(), [1, 1, 1], &mut args, options)?;
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    Ok(t.to_vec::<i64>().unwrap())
}

#[test]
fn for_loops_carry_values_and_step_while_below_the_bound() {
    let options = Options::default();
    for (lo, hi, step) in [
        (0, 10, 1),
        (-5, 6, 3),
        (3, 4, 10),
        (7, 7, 1),
        (9, 2, 1),
        (i64::MAX - 5, i64::MAX, 2),
    ] {
        let mut want = (0i64, 0i64);
        let mut iv = lo as i128;
        while iv < hi as i128 {
            want = (
                want.0.wrapping_add((iv as i64).wrapping_mul(iv as i64)),
                want.1 + 1,
            );
            iv += step as i128;
        }
        assert_eq!(
            run_loop(lo, hi, step, &options).unwrap(),
            vec![want.0, want.1],
            "{lo}..{hi} step {step}"
        );
    }
}

#[test]
fn non_positive_steps_are_errors() {
    for step in [0, -1] {
        let err = run_loop(0, 10, step, &Options::default()).unwrap_err();
        let InterpError::Op { fault, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(**fault, Fault::NonPositiveStep { step: step.into() });
    }
    let err = run_loop(0, 10, 0, &Options::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "program (0, 0, 0): `%1, %2 = for %lo, %hi, %step, %0, %0`: the step must be positive, found 0"
    );
}

#[test]
fn loops_beyond_the_iteration_limit_are_errors() {
    let options = Options {
        max_loop_iterations: 100,
    };
    assert_eq!(run_loop(0, 100, 1, &options).unwrap()[1], 100);
    let err = run_loop(0, 101, 1, &options).unwrap_err();
    let InterpError::Op { fault, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(**fault, Fault::IterationLimit { limit: 100 });
}

/// `out[0]` = the Collatz steps of `n` (`while n != 1`, halving an even
/// `n` and taking `3n + 1` of an odd one in an `if`), `out[1]` = the last
/// `n` (1 unless `n` started below 1, when the loop does not run).
fn collatz_kernel() -> Function {
    let mut b = Builder::new("collatz");
    let out = b.param("out", tensor_ty(DType::I64, 1));
    let n = b.param("n", Type::Scalar(DType::I64));
    let zero = b.constant(Scalar::I64(0)).unwrap();
    let results = b
        .while_loop(
            &[n, zero],
            |b, carried| {
                let one = b.constant(Scalar::I64(1))?;
                b.cmp(CmpPred::Gt, carried[0], one)
            },
            |b, carried| {
                let (one, two) = (b.constant(Scalar::I64(1))?, b.constant(Scalar::I64(2))?);
                let parity = b.binary(BinaryOp::Rem, carried[0], two)?;
                let even = b.cmp(CmpPred::Eq, parity, zero)?;
                let next = b.if_else(
                    even,
                    &[Type::Scalar(DType::I64)],
                    |b| Ok(vec![b.binary(BinaryOp::Div, carried[0], two)?]),
                    |b| {
                        let three = b.constant(Scalar::I64(3))?;
                        let triple = b.binary(BinaryOp::Mul, carried[0], three)?;
                        Ok(vec![b.binary(BinaryOp::Add, triple, one)?])
                    },
                )?;
                let steps = b.binary(BinaryOp::Add, carried[1], one)?;
                Ok(vec![next[0], steps])
            },
        )
        .unwrap();
    let s = b.broadcast(results[1], &[1]).unwrap();
    let last = b.broadcast(results[0], &[1]).unwrap();
    let both = b.cat(&[s, last], 0).unwrap();
    let v = b.partition_view(out, &[2]).unwrap();
    let idx = zero_index(&mut b, 1).unwrap();
    b.store(both, v, &idx).unwrap();
    b.finish().unwrap()
}

fn run_collatz(n: i64, options: &Options) -> Result<Vec<i64>, InterpError> {
    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::I64, &[2])),
        Arg::Scalar(Scalar::I64(n)),
    ];
    run_with(&collatz_kernel(), [1, 1, 1], &mut args, options)?;
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    Ok(t.to_vec::<i64>().unwrap())
}

fn collatz_reference(mut n: i64) -> Vec<i64> {
    let mut steps = 0;
    while n > 1 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    vec![steps, n]
}

#[test]
fn while_loops_run_until_the_condition_fails() {
    let options = Options::default();
    for n in [1, 2, 3, 6, 7, 27, 97, 871] {
        assert_eq!(
            run_collatz(n, &options).unwrap(),
            collatz_reference(n),
            "n = {n}"
        );
    }
    // 27 takes 111 steps; a condition false at the start runs nothing.
    assert_eq!(run_collatz(27, &options).unwrap()[0], 111);
    assert_eq!(run_collatz(-4, &options).unwrap(), [0, -4]);
}

#[test]
fn while_loops_beyond_the_iteration_limit_are_errors() {
    let options = Options {
        max_loop_iterations: 111,
    };
    assert_eq!(run_collatz(27, &options).unwrap()[0], 111);
    let options = Options {
        max_loop_iterations: 110,
    };
    let err = run_collatz(27, &options).unwrap_err();
    let InterpError::Op { fault, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(**fault, Fault::IterationLimit { limit: 110 });
}

/// `out[pid] = if x[pid] > 0 { x[pid] * 2 } else { -x[pid] }` per element,
/// one element per program along grid axis `axis`.
fn branch_kernel() -> Function {
    let mut b = Builder::new("branch");
    let x = b.param("x", tensor_ty(DType::F32, 1));
    let out = b.param("out", tensor_ty(DType::F32, 1));
    let pid = b.program_id(0).unwrap();
    let vx = b.partition_view(x, &[1]).unwrap();
    let t = b.load(vx, &[pid]).unwrap();
    let s = b.reduce(tile_ir::ReduceKind::Sum, t, 0, false).unwrap();
    let zero = b.constant(Scalar::F32(0.0)).unwrap();
    let positive = b.cmp(CmpPred::Gt, s, zero).unwrap();
    let r = b
        .if_else(
            positive,
            &[Type::Scalar(DType::F32)],
            |b| {
                let two = b.constant(Scalar::F32(2.0))?;
                Ok(vec![b.binary(BinaryOp::Mul, s, two)?])
            },
            |b| Ok(vec![b.unary(tile_ir::UnaryOp::Neg, s)?]),
        )
        .unwrap();
    let tile = b.broadcast(r[0], &[1]).unwrap();
    let vo = b.partition_view(out, &[1]).unwrap();
    b.store(tile, vo, &[pid]).unwrap();
    b.finish().unwrap()
}

#[test]
fn if_runs_exactly_one_branch() {
    let x = vec![1.5f32, -2.0, 0.0, 3.0, -0.5];
    let mut args = vec![
        Arg::Tensor(f32_tensor(&[5], x.clone())),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[5])),
    ];
    run(&branch_kernel(), [5, 1, 1], &mut args).unwrap();
    let Arg::Tensor(out) = &args[1] else {
        unreachable!()
    };
    let want: Vec<f32> = x
        .iter()
        .map(|&v| if v > 0.0 { v * 2.0 } else { -v })
        .collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn programs_run_x_fastest_then_y_then_z() {
    // out[z, y, x] = linear launch order, via program_id and num_programs.
    let mut b = Builder::new("order");
    let out = b.param("out", tensor_ty(DType::I32, 3));
    let ids: Vec<_> = (0..3).map(|a| b.program_id(a).unwrap()).collect();
    let ns: Vec<_> = (0..3).map(|a| b.num_programs(a).unwrap()).collect();
    let zy = b.binary(BinaryOp::Mul, ids[2], ns[1]).unwrap();
    let zy = b.binary(BinaryOp::Add, zy, ids[1]).unwrap();
    let zyx = b.binary(BinaryOp::Mul, zy, ns[0]).unwrap();
    let order = b.binary(BinaryOp::Add, zyx, ids[0]).unwrap();
    let t = b.broadcast(order, &[1, 1, 1]).unwrap();
    let v = b.partition_view(out, &[1, 1, 1]).unwrap();
    b.store(t, v, &[ids[2], ids[1], ids[0]]).unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![Arg::Tensor(HostTensor::zeros(DType::I32, &[4, 3, 2]))];
    run(&func, [2, 3, 4], &mut args).unwrap();
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    assert_eq!(t.to_vec::<i32>().unwrap(), (0..24).collect::<Vec<_>>());
}

#[test]
fn arguments_are_checked_against_parameters() {
    let func = loop_kernel();
    let scalar = |v: i64| Arg::Scalar(Scalar::I64(v));
    let err = run(&func, [1, 1, 1], &mut [scalar(0)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `loop` takes 4 argument(s), found 1"
    );

    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::I64, &[2])),
        scalar(0),
        Arg::Scalar(Scalar::I32(3)),
        scalar(1),
    ];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument 2 (`hi`): expected i64, found i32 scalar 3"
    );

    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::I64, &[2, 1])),
        scalar(0),
        scalar(1),
        scalar(1),
    ];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument 0 (`out`): expected tensor<i64, 1>, found tensor<i64, 2> of shape [2, 1]"
    );

    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::I32, &[2])),
        scalar(0),
        scalar(1),
        scalar(1),
    ];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument 0 (`out`): expected tensor<i64, 1>, found tensor<i32, 1> of shape [2]"
    );

    let mut args = vec![scalar(0), scalar(0), scalar(1), scalar(1)];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument 0 (`out`): expected tensor<i64, 1>, found i64 scalar 0"
    );

    // An extent beyond i32::MAX (every element aliases one, so it is cheap).
    let huge = HostTensor::with_strides(DType::I64, &[1 << 31], &[0], 0, vec![0; 8]).unwrap();
    let mut args = vec![Arg::Tensor(huge), scalar(0), scalar(1), scalar(1)];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument 0 (`out`): expected tensor<i64, 1> with every extent at most 2147483647, found tensor<i64, 1> of shape [2147483648]"
    );
}

#[test]
fn grids_beyond_i32_are_errors_and_empty_grids_run_nothing() {
    let func = branch_kernel();
    let mut args = vec![
        Arg::Tensor(f32_tensor(&[1], vec![1.0])),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[1])),
    ];
    let err = run(&func, [1 << 31, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err,
        InterpError::Grid {
            grid: [1 << 31, 1, 1]
        }
    );
    run(&func, [1, 0, 1], &mut args).unwrap();
    let Arg::Tensor(out) = &args[1] else {
        unreachable!()
    };
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![0.0]);
}
