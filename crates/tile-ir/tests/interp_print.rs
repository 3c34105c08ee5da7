//! `print`: one line per program for scalars, one per element with tiles,
//! handed to the run's sink; the text form and the verifier's rules.

use tile_ir::device_print::{PrintSpec, Printed};
use tile_ir::interp::{run_printing, Arg, HostTensor, Options};
use tile_ir::text::parse_function;
use tile_ir::verify;
use tile_ir::DType;

const ROWS: &str = r#"
kernel @rows(%x: tensor<i32, 2>, %scale: f32) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [1, 2] : view<i32, [1, 2]>
  %t = load %vx[%pid, %zero] : tile<1x2xi32>
  print 0 "program {} of scale {}" %pid, %scale
  print 1 "x = {}, pid {}" %t, %pid
}"#;

#[test]
fn scalars_print_once_a_program_and_tiles_once_an_element() {
    let func = parse_function(ROWS).unwrap();
    verify::verify(&func).unwrap();
    let x = HostTensor::from_vec(&[2, 2], vec![10i32, 11, 20, 21]).unwrap();
    let mut args = vec![Arg::Tensor(x), Arg::Scalar(tile_ir::Scalar::F32(0.5))];
    let mut lines = Vec::new();
    run_printing(&func, [2, 1, 1], &mut args, &Options::default(), &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    assert_eq!(
        lines,
        [
            "program (0, 0, 0): program 0 of scale 0.5",
            "program (0, 0, 0) element [0, 0]: x = 10, pid 0",
            "program (0, 0, 0) element [0, 1]: x = 11, pid 0",
            "program (1, 0, 0): program 1 of scale 0.5",
            "program (1, 0, 0) element [0, 0]: x = 20, pid 1",
            "program (1, 0, 0) element [0, 1]: x = 21, pid 1",
        ]
    );
}

#[test]
fn a_print_number_leads_back_to_its_message_and_types() {
    let func = parse_function(ROWS).unwrap();
    let spec = PrintSpec::find(&func, 1).unwrap();
    assert_eq!(spec.dtypes, [DType::I32, DType::I32]);
    assert_eq!(spec.shape, Some(vec![1, 2]));
    assert_eq!(
        spec.line([3, 0, 0], 1, &[-7, 3]),
        Printed {
            program: [3, 0, 0],
            element: Some(vec![0, 1]),
            text: "x = -7, pid 3".into()
        }
    );
    let scalars = PrintSpec::find(&func, 0).unwrap();
    assert_eq!(
        scalars
            .line([1, 0, 0], 0, &[1, i64::from(2.5f32.to_bits())])
            .to_string(),
        "program (1, 0, 0): program 1 of scale 2.5"
    );
    assert!(PrintSpec::find(&func, 2).is_none());
    assert!(tile_ir::device_print::prints(&func));
    let text = func.to_string();
    assert!(
        text.contains(r#"print 1 "x = {}, pid {}" %3, %0"#),
        "{text}"
    );
    assert_eq!(parse_function(&text).unwrap().to_string(), text);
}

#[test]
fn malformed_prints_are_verifier_errors_naming_the_op() {
    let cases = [
        (
            "print 0 \"{}\" %pid, %pid",
            "the message formats 1 value(s), found 2",
        ),
        (
            "print 0 \"{} {}\" %t, %u",
            "the printed tiles must have one shape",
        ),
        (
            "print 0 \"{}{}{}{}{}{}\" %pid, %pid, %pid, %pid, %pid, %pid",
            "at most 5 values",
        ),
    ];
    for (line, want) in cases {
        let text = format!(
            "kernel @k() {{
  %pid = program_id 0 : i32
  %t = full 1 : tile<4xi32>
  %u = full 1 : tile<2xi32>
  {line}
}}"
        );
        let err = verify::verify(&parse_function(&text).unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("print") && err.contains(want), "{line}: {err}");
    }
}
