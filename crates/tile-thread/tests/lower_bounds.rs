//! Bounds checks of safe launches: an unmasked access outside the tensor is
//! reported naming the kernel, op and partition index, and never executed;
//! masked accesses (all the samples) carry no check; the `unsafe` mode skips
//! the checks.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{samples, DType};
use tile_thread::emulate::{self, LockstepFault};
use tile_thread::lower::{lower, LowerOptions};

/// Copies `[5, 6]` tiles of `x` to `out`; `load` and `store` name the ops
/// used (masked or not).
fn copy(load: &str, store: &str) -> tile_ir::Function {
    let pad = if load == "load_masked" {
        " pad(zero)"
    } else {
        ""
    };
    parse_function(&format!(
        "kernel @copy(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [5, 6] : view<f32, [5, 6]>
  %vo = partition_view %out [5, 6] : view<f32, [5, 6]>
  %t = {load} %vx[%pid, %zero]{pad} : tile<5x6xf32>
  {store} %t, %vo[%pid, %zero]
}}"
    ))
    .unwrap()
}

fn args(rows: usize) -> Vec<Arg> {
    let x: Vec<f32> = (0..rows * 6).map(|i| i as f32).collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[rows, 6], x).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[rows, 6], vec![-1.0f32; rows * 6]).unwrap()),
    ]
}

fn out(args: &[Arg]) -> Vec<f32> {
    let Arg::Tensor(t) = &args[1] else {
        unreachable!()
    };
    t.to_vec().unwrap()
}

#[test]
fn unmasked_accesses_in_bounds_pass_their_checks() {
    let func = copy("load", "store");
    let mut expected = args(10);
    interp::run(&func, [2, 1, 1], &mut expected).unwrap();
    for warps in [1, 2] {
        let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
        assert_eq!(program.to_string().matches("check.bounds").count(), 2);
        let mut actual = args(10);
        emulate::run(&program, [2, 1, 1], &mut actual).unwrap();
        assert_eq!(out(&actual), out(&expected));
    }
}

#[test]
fn an_out_of_range_unmasked_load_is_reported_and_not_executed() {
    let func = copy("load", "store");
    // The interpreter rejects the partial partition too.
    assert!(interp::run(&func, [2, 1, 1], &mut args(8)).is_err());
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    let mut actual = args(8);
    let err = emulate::run(&program, [2, 1, 1], &mut actual).unwrap_err();
    // Pairs of columns over 4 lanes: thread 12 is the first with a row (3,
    // that is row 8 of the tensor) outside.
    assert_eq!((err.block, err.thread), ([1, 0, 0], Some(12)));
    assert_eq!(
        err.fault.to_string(),
        "bounds check failed in kernel `copy`: `%4 = load %2, %0, %1` (a view of `x`): \
         partition index [1, 0] reaches outside the tensor"
    );
    // Block 0 copied its rows; block 1 stopped before its load and store.
    let copied = out(&actual);
    assert_eq!(
        &copied[..30],
        (0..30).map(|i| i as f32).collect::<Vec<_>>().as_slice()
    );
    assert_eq!(&copied[30..], &[-1.0; 18]);
}

#[test]
fn an_out_of_range_unmasked_store_touches_nothing() {
    let func = copy("load_masked", "store");
    let program = lower(&func, &LowerOptions::warps(2)).unwrap();
    assert_eq!(program.to_string().matches("check.bounds").count(), 1);
    let mut actual = args(8);
    let err = emulate::run(&program, [2, 1, 1], &mut actual).unwrap_err();
    assert!(matches!(&*err.fault, LockstepFault::BoundsCheck { index, .. } if index == &[1, 0]));
    assert_eq!(&out(&actual)[30..], &[-1.0; 18]);
}

#[test]
fn the_unsafe_mode_carries_no_checks() {
    let func = copy("load", "store");
    // SAFETY: the test runs the program in the emulator only, which checks
    // every access; it shows what the unchecked program would do.
    let options = unsafe { LowerOptions::warps(1).without_bounds_checks() };
    let program = lower(&func, &options).unwrap();
    assert!(!program.to_string().contains("bounds_check"));
    // Unchecked, the access runs and the emulator catches it past the tensor.
    let err = emulate::run(&program, [2, 1, 1], &mut args(8)).unwrap_err();
    assert!(
        matches!(
            &*err.fault,
            LockstepFault::GlobalOutOfBounds { address: 48, .. }
        ),
        "{err}"
    );
}

#[test]
fn masked_samples_carry_no_checks() {
    let funcs = [
        samples::vector_add(64).unwrap(),
        samples::softmax(2, 16).unwrap(),
        samples::layernorm(2, 16).unwrap(),
        samples::matmul(8, 8, 4, DType::F16).unwrap(),
        samples::transpose(8, 16).unwrap(),
    ];
    for func in funcs {
        let program = lower(&func, &LowerOptions::default()).unwrap();
        assert!(
            !program.to_string().contains("bounds_check"),
            "{}",
            func.name
        );
    }
}
