//! print → parse → print is the identity, and parse(print(f)) == f, for
//! programs that cover every op kind and attribute variant.

mod text_programs;

use tile_ir::text::parse_function;
use tile_ir::{DType, OpKind, Padding, Scalar, SliceRange};

#[test]
fn canonical_programs_print_as_written() {
    for (name, src) in text_programs::all() {
        let func = parse_function(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
        let printed = func.to_string();
        assert_eq!(printed, src, "{name} does not print as written");
        let reparsed = parse_function(&printed).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            reparsed, func,
            "{name} changes structure through print and parse"
        );
        assert_eq!(reparsed.to_string(), printed);
    }
}

#[test]
fn every_op_kind_is_covered() {
    let func = parse_function(text_programs::EVERY_OP).unwrap();
    let mut names = std::collections::BTreeSet::new();
    func.walk(&mut |op| {
        names.insert(func.op(op).kind.name());
    });
    let expected = [
        "program_id",
        "num_programs",
        "constant",
        "full",
        "iota",
        "exp",
        "add",
        "cmp",
        "select",
        "fma",
        "cast",
        "broadcast",
        "reshape",
        "permute",
        "expand",
        "flip",
        "slice",
        "pad",
        "cat",
        "reduce",
        "arg",
        "scan",
        "dot",
        "dim",
        "partition_view",
        "load",
        "load_masked",
        "store",
        "store_masked",
        "for",
        "if",
        "yield",
    ];
    assert_eq!(names, expected.into_iter().collect());
}

#[test]
fn attributes_come_from_the_text_and_the_result_type() {
    let func = parse_function(text_programs::EVERY_OP).unwrap();
    let kinds: Vec<OpKind> = func
        .body
        .ops
        .iter()
        .map(|&op| func.op(op).kind.clone())
        .collect();
    assert!(kinds.contains(&OpKind::Full {
        value: Scalar::F32(0.0),
        shape: tile_ir::Shape::new([4, 8]),
    }));
    assert!(kinds.contains(&OpKind::Iota {
        shape: tile_ir::Shape::new([16]),
        dtype: DType::I32,
    }));
    assert!(kinds.contains(&OpKind::Slice {
        ranges: vec![
            SliceRange {
                start: 0,
                stop: 4,
                step: 1
            },
            SliceRange {
                start: 2,
                stop: 8,
                step: 2
            },
        ],
    }));
    assert!(kinds.contains(&OpKind::Pad {
        low: vec![1, 0],
        high: vec![0, 2],
        value: Scalar::F32(0.0),
    }));
    let variants = parse_function(&text_programs::every_variant()).unwrap();
    let mut paddings = Vec::new();
    variants.walk(&mut |op| {
        if let OpKind::LoadMasked { padding } = variants.op(op).kind {
            paddings.push(padding);
        }
    });
    assert_eq!(
        paddings,
        [
            Padding::Zero,
            Padding::Nan,
            Padding::PosInf,
            Padding::NegInf,
            Padding::Value(Scalar::F32(-2.5)),
            Padding::Value(Scalar::F32(1e-30)),
            Padding::Value(Scalar::I32(-7)),
        ]
    );
}

#[test]
fn regions_get_their_arguments_and_types() {
    let func = parse_function(text_programs::MATMUL).unwrap();
    let for_op = func
        .body
        .ops
        .iter()
        .map(|&op| func.op(op))
        .find(|op| matches!(op.kind, OpKind::For { .. }))
        .unwrap();
    assert_eq!(for_op.operands.len(), 4);
    let body = &for_op.regions[0];
    assert_eq!(body.args.len(), 2);
    assert_eq!(func.ty(body.args[0]).to_string(), "i32");
    assert_eq!(func.ty(body.args[1]).to_string(), "tile<64x64xf32>");
    assert_eq!(func.ty(for_op.results[0]).to_string(), "tile<64x64xf32>");
    assert_eq!(body.ops.len(), 4);
}

#[test]
fn any_spelling_prints_canonically() {
    let src = "
// A comment before the kernel.
kernel @k(
  %x: tensor<f32, 1>,   // parameters may span lines
  %n: i32
) {

  %zero = constant 0 : i32    // any value name
  %one = constant 1 : i32
  %two = constant 2 : f32     // an integer literal for a float dtype
  %big = constant 1e3 : f64
  %acc, %last = for %i = %zero to %n step %one iter(%a = %two, %b = %n) : f32, i32 {
    %s = add %a, %a : f32
    yield %s, %i
  }
}
";
    let expected = "\
kernel @k(%x: tensor<f32, 1>, %n: i32) {
  %0 = constant 0 : i32
  %1 = constant 1 : i32
  %2 = constant 2.0 : f32
  %3 = constant 1000.0 : f64
  %4, %5 = for %6 = %0 to %n step %1 iter(%7 = %2, %8 = %n) : f32, i32 {
    %9 = add %7, %7 : f32
    yield %9, %6
  }
}";
    assert_eq!(parse_function(src).unwrap().to_string(), expected);
    let windows = src.replace('\n', "\r\n").replace("  ", "\t");
    assert_eq!(parse_function(&windows).unwrap().to_string(), expected);
}

#[test]
fn ill_typed_programs_still_parse() {
    // Wrong arities, mismatched types and a missing `yield` are the
    // verifier's to report, not the parser's.
    let src = "\
kernel @bad(%n: i32) {
  %0 = add %n : f64
  %1 = exp %n, %n, %0 : tile<3xbool>
  %2 = program_id 9 : f32
  %3 = for %4 = %n to %n step %n iter(%5 = %n) : tile<2xf32> {
  }
  yield %0
}";
    let func = parse_function(src).unwrap();
    assert_eq!(func.to_string(), src);
}

#[test]
fn float_constants_round_to_their_dtype() {
    let func = parse_function(
        "kernel @k() {\n  %0 = constant 0.1 : f16\n  %1 = constant 1000 : f8e4m3\n}",
    );
    // 1000 is beyond f8e4m3's largest finite value (448).
    assert_eq!(
        func.unwrap_err().to_string(),
        "3:17: constant 1000 is out of range for f8e4m3"
    );
    let func = parse_function("kernel @k() {\n  %0 = constant 0.1 : f16\n}").unwrap();
    let OpKind::Constant { value } = func.op(func.body.ops[0]).kind else {
        panic!("not a constant");
    };
    assert_eq!(value, Scalar::F16(half::f16::from_f64(0.1)));
    assert_eq!(
        func.to_string(),
        "kernel @k() {\n  %0 = constant 0.099975586 : f16\n}"
    );
}
