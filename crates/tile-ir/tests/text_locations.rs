//! Source locations on ops: the text form's trailing `loc(..)` prints and
//! parses back, passes keep it, and run-time errors lead with it and with
//! the tensor parameters the op touches.

use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::passes::PassManager;
use tile_ir::text::parse_function;
use tile_ir::{DType, Location, ValueNames};

/// A copy through partition views of 4, with locations on most lines (one
/// without a snippet, one with escapes; the `for` and the `if` carry one too).
const COPY: &str = r#"kernel @copy(%x: tensor<f32, 1>, %out: tensor<f32, 1>, %n: i32) {
  %0 = program_id 0 : i32 loc("tests/copy.rs":14:15, "program_id(0)")
  %1 = partition_view %x [4] : view<f32, [4]> loc("tests/copy.rs":15:36)
  %2 = load %1[%0] : tile<4xf32> loc("tests/copy.rs":15:59, "partition_view(..).load(..)")
  %3 = partition_view %out [4] : view<f32, [4]>
  %4 = constant 0 : i32
  %5 = constant 1 : i32
  for %6 = %4 to %n step %5 loc("src/a \"b\".rs":16:5, "for") {
    %7 = cmp lt %6, %5 : bool
    if %7 loc("src/a \"b\".rs":17:9, "if") {
      yield
    } else {
      yield
    }
    yield
  }
  store %2, %3[%0] loc("tests/copy.rs":15:30, "partition_view(..).store(..)")
}"#;

#[test]
fn locations_print_as_written_and_parse_back() {
    let func = parse_function(COPY).unwrap();
    assert_eq!(func.to_string(), COPY);
    assert_eq!(parse_function(&func.to_string()).unwrap(), func);
    let mut locs = Vec::new();
    func.walk(&mut |op| locs.push(func.op(op).loc.clone()));
    assert_eq!(
        locs[2],
        Some(Location {
            file: "tests/copy.rs".into(),
            line: 15,
            column: 59,
            snippet: Some("partition_view(..).load(..)".into()),
        })
    );
    assert_eq!(locs[1].as_ref().map(|l| l.snippet.clone()), Some(None));
    assert_eq!(locs[3], None);
    assert_eq!(
        locs[6].as_ref().map(|l| l.file.as_str()),
        Some("src/a \"b\".rs")
    );
}

#[test]
fn a_malformed_location_is_a_parse_error_that_says_what_it_expected() {
    let cases = [
        ("loc(tests/copy.rs:1:2)", "the file name of `loc`"),
        ("loc(\"f\":1)", "`:` after the line number"),
        ("loc(\"f\":1:2, 3)", "the snippet of `loc`"),
        ("loc(\"f\":1:2", "`)` to close `loc`"),
        ("loc(\"f\":99999999999:2)", "too large for a line number"),
    ];
    for (attr, expected) in cases {
        let src = format!("kernel @k() {{\n  %0 = program_id 0 : i32 {attr}\n}}");
        let err = parse_function(&src).unwrap_err().to_string();
        assert!(err.contains(expected), "{attr}: {err}");
    }
}

#[test]
fn passes_keep_locations_and_a_folded_op_inherits_the_one_it_replaces() {
    let src = r#"kernel @k(%out: tensor<i32, 1>) {
  %0 = constant 2 : i32 loc("k.rs":1:1, "2")
  %1 = constant 3 : i32 loc("k.rs":1:5, "3")
  %2 = add %0, %1 : i32 loc("k.rs":1:3, "2 + 3")
  %3 = broadcast %2 to [4] : tile<4xi32> loc("k.rs":2:1, "splat(..)")
  %4 = partition_view %out [4] : view<i32, [4]> loc("k.rs":3:1, "partition_view(..)")
  %5 = program_id 0 : i32 loc("k.rs":3:30, "program_id(0)")
  store %3, %4[%5] loc("k.rs":3:20, "partition_view(..).store(..)")
}"#;
    let mut func = parse_function(src).unwrap();
    PassManager::default_pipeline()
        .run(&mut func, |_, _| {})
        .unwrap();
    let text = func.to_string();
    assert_eq!(
        text,
        r#"kernel @k(%out: tensor<i32, 1>) {
  %0 = full 5 : tile<4xi32> loc("k.rs":2:1, "splat(..)")
  %1 = partition_view %out [4] : view<i32, [4]> loc("k.rs":3:1, "partition_view(..)")
  %2 = program_id 0 : i32 loc("k.rs":3:30, "program_id(0)")
  store %0, %1[%2] loc("k.rs":3:20, "partition_view(..).store(..)")
}"#
    );
    assert_eq!(parse_function(&text).unwrap().to_string(), text);
}

#[test]
fn an_interpreter_error_leads_with_the_rust_location_and_the_parameter() {
    let func = parse_function(COPY).unwrap();
    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::F32, &[6])),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[6])),
        Arg::Scalar(tile_ir::Scalar::I32(0)),
    ];
    let err = run(&func, [2, 1, 1], &mut args).unwrap_err().to_string();
    assert!(
        err.starts_with(
            "program (1, 0, 0): `partition_view(..).load(..)` at tests/copy.rs:15:59 \
             (`%2 = load %1, %0`, a view of `x`): partition [1] (tile [4]) is partially outside"
        ),
        "{err}"
    );
}

#[test]
fn a_site_names_its_tensors_with_or_without_a_location() {
    let func = parse_function(COPY).unwrap();
    let names = ValueNames::new(&func);
    let mut sites = Vec::new();
    func.walk(&mut |op| sites.push(names.describe_site(&func, op)));
    assert_eq!(
        sites[1],
        "the op at tests/copy.rs:15:36 (`%1 = partition_view %x`, `x`)"
    );
    assert_eq!(sites[3], "`%3 = partition_view %out` (`out`)");
    assert_eq!(sites[4], "`%4 = constant`");
    assert_eq!(
        sites.last().unwrap(),
        "`partition_view(..).store(..)` at tests/copy.rs:15:30 \
         (`store %2, %3, %0`, a view of `out`)"
    );
}
