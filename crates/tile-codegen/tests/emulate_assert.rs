//! `assert` through every GPU stage, against the interpreter: the lockstep
//! emulator runs the thread-level program, the emulation target runs the
//! LLVM IR an sm_80, gfx942 and gfx1100 receive (its status record names
//! the assertion, its values and the failing block), and ptxas and ld.lld
//! accept the code of every target.
//!
//! Tiles of 8 elements over 4 warps make the layout replicate and pad
//! elements (a thread's dead registers must not fail the check); tiles of
//! 512 give each thread several.

mod emulated;

use emulated::TARGETS;

use tile_ir::assertion::Assertion;
use tile_ir::interp::{self, Arg, Fault, HostTensor, InterpError};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::emulate::{self, LockstepFault};
use tile_thread::lower::{lower, LowerOptions};

/// Each program checks that its `block` values lie below `%limit` (a tile
/// condition, reporting the program, its largest value and a `u8`), and
/// that `%limit` is positive (a scalar condition); then copies.
fn kernel(block: usize) -> Function {
    let text = format!(
        r#"kernel @below(%x: tensor<f32, 1>, %y: tensor<f32, 1>, %limit: f32, %tag: u8) {{
  %pid = program_id 0 : i32
  %zero = constant 0.0 : f32
  %positive = cmp gt %limit, %zero : bool
  assert 0 "the limit {{}} is not positive" %positive, %limit
  %vx = partition_view %x [{block}] : view<f32, [{block}]>
  %t = load %vx[%pid] : tile<{block}xf32>
  %l = broadcast %limit to [{block}] : tile<{block}xf32>
  %ok = cmp lt %t, %l : tile<{block}xbool>
  %m = reduce max %t axis 0 : f32
  assert 1 "program {{}} holds {{}} (tag {{}})" %ok, %pid, %m, %tag
  %vy = partition_view %y [{block}] : view<f32, [{block}]>
  store %t, %vy[%pid]
}}"#
    );
    let func = parse_function(&text).unwrap();
    verify::verify(&func).unwrap();
    func
}

/// Four programs of `block` values `0, 1, ...`, one of them raised to
/// `9.5 + 1000` in program `bad` (when given).
fn args(block: usize, bad: Option<usize>, limit: f32) -> Vec<Arg> {
    let n = 4 * block;
    let mut x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    if let Some(p) = bad {
        x[p * block + block / 2] = 1009.5;
    }
    vec![
        Arg::Tensor(HostTensor::from_vec(&[n], x).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[n])),
        Arg::Scalar(Scalar::F32(limit)),
        Arg::Scalar(Scalar::U8(200)),
    ]
}

/// The interpreter's failure: program and message.
fn interpreted(func: &Function, args: &mut [Arg]) -> ([u32; 3], String) {
    match interp::run(func, [4, 1, 1], args).unwrap_err() {
        InterpError::Op { program, fault, .. } => match *fault {
            Fault::Assert { message, .. } => (program, message),
            other => panic!("{other}"),
        },
        other => panic!("{other}"),
    }
}

#[test]
fn true_assertions_let_every_stage_run_on() {
    for (block, warps) in [(8, 4), (512, 4), (512, 1)] {
        let func = kernel(block);
        let mut want = args(block, None, 100.0);
        interp::run(&func, [4, 1, 1], &mut want).unwrap();
        let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
        let mut got = args(block, None, 100.0);
        emulate::run(&program, [4, 1, 1], &mut got).unwrap();
        assert_eq!(got[1], want[1], "lockstep, block {block}");
        for target in TARGETS {
            let mut got = args(block, None, 100.0);
            emulated::run(&func, target, warps, [4, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{target}, block {block}: {e}"));
            assert_eq!(got[1], want[1], "{target}, block {block}");
        }
    }
}

#[test]
fn a_false_element_fails_with_the_interpreters_message_and_program() {
    for (block, warps) in [(8, 4), (512, 4)] {
        let func = kernel(block);
        let (program, message) = interpreted(&func, &mut args(block, Some(2), 100.0));
        assert_eq!(program, [2, 0, 0]);
        assert_eq!(message, "program 2 holds 1009.5 (tag 200)");
        let lowered = lower(&func, &LowerOptions::warps(warps)).unwrap();
        let err = emulate::run(&lowered, [4, 1, 1], &mut args(block, Some(2), 100.0)).unwrap_err();
        match &*err.fault {
            LockstepFault::Assert { id, values, .. } => {
                let assertion = Assertion::find(&func, *id as u32).unwrap();
                let bits: Vec<i64> = values.iter().map(|v| v.to_bits() as i64).collect();
                assert_eq!(assertion.report(&bits), message, "lockstep, block {block}");
            }
            other => panic!("lockstep, block {block}: {other}"),
        }
        for target in TARGETS {
            let failure = emulated::run(
                &func,
                target,
                warps,
                [4, 1, 1],
                &mut args(block, Some(2), 100.0),
            )
            .unwrap_err();
            let emulated::Failure::Status(status) = failure else {
                panic!("{target}: {failure}")
            };
            assert_eq!(status.code, tile_abi::FaultCode::Assert as u32, "{target}");
            assert_eq!(status.program, program, "{target}");
            let assertion = Assertion::find(&func, status.index[0] as u32).unwrap();
            assert_eq!(assertion.report(&status.index[1..]), message, "{target}");
        }
    }
}

#[test]
fn a_false_scalar_condition_fails_every_stage() {
    let func = kernel(512);
    let (_, message) = interpreted(&func, &mut args(512, None, -2.5));
    assert_eq!(message, "the limit -2.5 is not positive");
    for target in TARGETS {
        let failure =
            emulated::run(&func, target, 4, [4, 1, 1], &mut args(512, None, -2.5)).unwrap_err();
        let emulated::Failure::Status(status) = failure else {
            panic!("{target}: {failure}")
        };
        assert_eq!(status.index[0], 0, "{target}");
        let assertion = Assertion::find(&func, 0).unwrap();
        assert_eq!(assertion.report(&status.index[1..]), message, "{target}");
    }
}

#[test]
fn assertions_assemble_for_every_sm_and_link_for_every_gfx() {
    let func = kernel(512);
    emulated::assembles_and_links(&func, 4);
}
