//! `multiple_of` on every emulation target: a window of an aligned tensor
//! that starts at a column promised a multiple of 4 is read and written in
//! whole 4-wide vectors, with the interpreter's results; a column that
//! breaks the promise fails the launch as the assertion, reporting its
//! number and the value, and the program running on after its failed
//! check makes no misaligned access (the emulator faults on one).

mod emulated;

use emulated::{Failure, TARGETS};
use tile_abi::FaultCode;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};

/// `out[r, ..] = 2 · x[r, c ..]` for the 8×32 partition at row 0, the
/// columns from `c` on (promised a multiple of 4), padded with zeros.
fn shifted() -> Function {
    let text = r#"kernel @shifted(%x: tensor<f32, 2, aligned>, %out: tensor<f32, 2, aligned>, %c: i32) {
  %zero = constant 0 : i32
  %from = multiple_of 3 4 %c : i32
  %vx = partition_view %x [8, 32] offset(%zero, %from) : view<f32, [8, 32]>
  %t = load_masked %vx[%zero, %zero] pad(zero) : tile<8x32xf32>
  %d = add %t, %t : tile<8x32xf32>
  %vo = partition_view %out [8, 32] : view<f32, [8, 32]>
  store %d, %vo[%zero, %zero]
}"#;
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

fn args(c: i32) -> Vec<Arg> {
    let x: Vec<f32> = (0..8 * 40).map(|v| v as f32 - 7.0).collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[8, 40], x).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 32])),
        Arg::Scalar(Scalar::I32(c)),
    ]
}

#[test]
fn a_promised_column_reads_the_interpreters_window() {
    let func = shifted();
    for c in [0, 4, 12, 36] {
        let mut want = args(c);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        for target in TARGETS {
            let mut got = args(c);
            emulated::run(&func, target, 2, [1, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{target}, column {c}: {e}"));
            assert_eq!(
                emulated::f32_bits(&got[1]),
                emulated::f32_bits(&want[1]),
                "{target}, column {c}"
            );
        }
    }
}

#[test]
fn a_broken_promise_fails_as_its_assertion() {
    let func = shifted();
    let mut want = args(6);
    let err = interp::run(&func, [1, 1, 1], &mut want).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("assertion failed: `multiple_of`: 6 is not a multiple of 4"),
        "{err}"
    );
    for target in TARGETS {
        let mut got = args(6);
        match emulated::run(&func, target, 2, [1, 1, 1], &mut got) {
            Err(Failure::Status(status)) => {
                assert_eq!(FaultCode::from_u32(status.code), Some(FaultCode::Assert));
                assert_eq!(status.index[..2], [3, 6], "{target}");
            }
            other => panic!("{target}: {other:?}"),
        }
    }
}
