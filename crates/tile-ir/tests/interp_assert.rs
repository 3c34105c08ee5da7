//! `assert`: a failing program stops with the message and its values, a
//! passing one runs on, and malformed asserts are verifier errors.

use tile_ir::interp::{run, Arg, Fault, HostTensor, InterpError};
use tile_ir::text::parse_function;
use tile_ir::verify;
use tile_ir::DType;

/// Checks that every element of each program's 4 values is below the
/// limit, reporting the program and its largest value; then copies.
const BELOW: &str = r#"
kernel @below(%x: tensor<f32, 1>, %y: tensor<f32, 1>, %limit: f32) {
  %pid = program_id 0 : i32
  %vx = partition_view %x [4] : view<f32, [4]>
  %t = load %vx[%pid] : tile<4xf32>
  %l = broadcast %limit to [4] : tile<4xf32>
  %ok = cmp lt %t, %l : tile<4xbool>
  %m = reduce max %t axis 0 : f32
  assert 0 "program {} holds {} {{not below}}" %ok, %pid, %m
  %vy = partition_view %y [4] : view<f32, [4]>
  store %t, %vy[%pid]
}"#;

fn args(x: Vec<f32>, limit: f32) -> Vec<Arg> {
    let n = x.len();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[n], x).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[n])),
        Arg::Scalar(tile_ir::Scalar::F32(limit)),
    ]
}

#[test]
fn a_true_condition_lets_the_program_run_on() {
    let func = parse_function(BELOW).unwrap();
    verify::verify(&func).unwrap();
    let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let mut a = args(x.clone(), 8.0);
    run(&func, [2, 1, 1], &mut a).unwrap();
    let Arg::Tensor(y) = &a[1] else { panic!() };
    assert_eq!(y.to_vec::<f32>().unwrap(), x);
}

#[test]
fn a_false_element_fails_its_program_with_the_formatted_message() {
    let func = parse_function(BELOW).unwrap();
    let x: Vec<f32> = vec![0.0, 1.0, 2.0, 3.0, 4.0, 9.5, 6.0, 1.0];
    let mut a = args(x, 8.0);
    let err = run(&func, [2, 1, 1], &mut a).unwrap_err();
    let InterpError::Op { program, fault, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*program, [1, 0, 0]);
    assert_eq!(
        **fault,
        Fault::Assert {
            id: 0,
            message: "program 1 holds 9.5 {not below}".into(),
            element: Some(vec![1]),
        }
    );
    assert!(err
        .to_string()
        .ends_with("assertion failed at element [1]: program 1 holds 9.5 {not below}"));
}

#[test]
fn the_text_form_round_trips() {
    let func = parse_function(BELOW).unwrap();
    let text = func.to_string();
    assert!(
        text.contains(r#"assert 0 "program {} holds {} {{not below}}" %4, %0, %5"#),
        "{text}"
    );
    assert_eq!(parse_function(&text).unwrap().to_string(), text);
}

#[test]
fn malformed_asserts_are_verifier_errors_naming_the_op() {
    let cases = [
        (
            "assert 0 \"x\" %t",
            "the condition must be a bool scalar or tile",
        ),
        (
            "assert 0 \"{}\" %c",
            "the message formats 1 value(s), found 0",
        ),
        (
            "assert 0 \"{} {}\" %c, %t",
            "the message formats 2 value(s), found 1",
        ),
        (
            "assert 0 \"{}\" %c, %t",
            "the formatted values must be scalars",
        ),
        ("assert 0 \"{x}\" %c, %pid", "`{}` only"),
        (
            "assert 0 \"{} {} {} {}\" %c, %pid, %pid, %pid, %pid",
            "at most 3 values",
        ),
    ];
    for (line, want) in cases {
        let text = format!(
            "kernel @k() {{
  %pid = program_id 0 : i32
  %t = full 1 : tile<4xi32>
  %c = full true : tile<4xbool>
  {line}
}}"
        );
        let err = match parse_function(&text) {
            Ok(func) => verify::verify(&func).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("assert") && err.contains(want),
            "{line}: {err}"
        );
    }
}
