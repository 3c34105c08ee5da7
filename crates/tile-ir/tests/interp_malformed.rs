//! Functions built with the raw API that the verifier would reject: the
//! interpreter must report them as errors, never panic.

use tile_ir::arena::Handle;
use tile_ir::eval::EvalError;
use tile_ir::interp::{run, Arg, Fault, HostTensor, InterpError};
use tile_ir::{
    BinaryOp, DType, Function, OpKind, Region, Scalar, Shape, SliceRange, TensorType, Type,
};

fn fault(func: &Function, args: &mut [Arg]) -> Fault {
    match run(func, [1, 1, 1], args) {
        Err(InterpError::Op { fault, .. }) => *fault,
        other => panic!("expected an op error, found {other:?}"),
    }
}

/// Appends an op to the body and returns its results.
fn push(
    func: &mut Function,
    kind: OpKind,
    operands: Vec<tile_ir::Value>,
    results: Vec<Type>,
) -> Vec<tile_ir::Value> {
    let op = func.create_op(kind, operands, results, Vec::new());
    func.body.ops.push(op);
    func.op(op).results.clone()
}

#[test]
fn mismatched_dtypes_are_eval_errors() {
    let mut f = Function::new("bad");
    let a = push(
        &mut f,
        OpKind::Constant {
            value: Scalar::F32(1.0),
        },
        vec![],
        vec![Type::Scalar(DType::F32)],
    );
    let b = push(
        &mut f,
        OpKind::Constant {
            value: Scalar::I32(1),
        },
        vec![],
        vec![Type::Scalar(DType::I32)],
    );
    push(
        &mut f,
        OpKind::Binary(BinaryOp::Add),
        vec![a[0], b[0]],
        vec![Type::Scalar(DType::F32)],
    );
    let err = run(&f, [1, 1, 1], &mut []).unwrap_err();
    assert_eq!(
        err.to_string(),
        "program (0, 0, 0): `%2 = add %0, %1`: `add` needs operands of one dtype, found f32, i32"
    );
    let mut f = Function::new("bad");
    let a = push(
        &mut f,
        OpKind::Constant {
            value: Scalar::I32(1),
        },
        vec![],
        vec![Type::Scalar(DType::I32)],
    );
    push(
        &mut f,
        OpKind::Unary(tile_ir::UnaryOp::Exp),
        vec![a[0]],
        vec![Type::Scalar(DType::I32)],
    );
    assert_eq!(
        fault(&f, &mut []),
        Fault::Eval(EvalError::Unsupported {
            op: "exp",
            dtype: DType::I32
        })
    );
}

#[test]
fn wrong_declared_result_types_are_errors() {
    let mut f = Function::new("bad");
    push(
        &mut f,
        OpKind::Constant {
            value: Scalar::F32(1.0),
        },
        vec![],
        vec![Type::Scalar(DType::F64)],
    );
    assert!(matches!(fault(&f, &mut []), Fault::Type(m) if m.contains("declared f64")));
    let mut f = Function::new("bad");
    push(
        &mut f,
        OpKind::Full {
            value: Scalar::F32(1.0),
            shape: Shape::new([2]),
        },
        vec![],
        vec![],
    );
    assert!(matches!(fault(&f, &mut []), Fault::Type(_)));
}

#[test]
fn a_value_used_before_its_definition_is_an_error() {
    let mut f = Function::new("bad");
    let late = f.create_op(
        OpKind::Constant {
            value: Scalar::I32(1),
        },
        vec![],
        vec![Type::Scalar(DType::I32)],
        vec![],
    );
    let v = f.op(late).results[0];
    push(
        &mut f,
        OpKind::Unary(tile_ir::UnaryOp::Neg),
        vec![v],
        vec![Type::Scalar(DType::I32)],
    );
    f.body.ops.push(late);
    assert!(
        matches!(fault(&f, &mut []), Fault::Type(m) if m.contains("used before it is defined"))
    );
}

#[test]
fn dangling_op_handles_and_misplaced_ops_are_errors() {
    let mut f = Function::new("bad");
    f.body.ops.push(Handle::from_index(42));
    let err = run(&f, [1, 1, 1], &mut []).unwrap_err();
    assert_eq!(err, InterpError::DanglingOp { op: 42 });
    assert_eq!(
        err.to_string(),
        "malformed IR: a region names op #42, which is not in the function"
    );
    let mut f = Function::new("bad");
    let cond = push(
        &mut f,
        OpKind::Constant {
            value: Scalar::Bool(true),
        },
        vec![],
        vec![Type::Scalar(DType::Bool)],
    );
    // An `if` whose branches do not yield.
    let op = f.create_op(
        OpKind::If,
        vec![cond[0]],
        vec![],
        vec![Region::default(), Region::default()],
    );
    f.body.ops.push(op);
    assert!(matches!(fault(&f, &mut []), Fault::Type(m) if m.contains("yield")));
}

#[test]
fn type_confusions_in_memory_ops_are_errors() {
    let mut f = Function::new("bad");
    let t = f.add_param("t", Type::Tensor(TensorType::new(DType::F32, 1)));
    let view_ty = Type::PartitionView(tile_ir::PartitionViewType {
        dtype: DType::F32,
        tile: Shape::new([2]),
    });
    let v = push(
        &mut f,
        OpKind::PartitionView {
            shape: Shape::new([2]),
        },
        vec![t],
        vec![view_ty],
    );
    let x = push(
        &mut f,
        OpKind::Constant {
            value: Scalar::F32(0.0),
        },
        vec![],
        vec![Type::Scalar(DType::F32)],
    );
    // A float partition index.
    push(
        &mut f,
        OpKind::Load,
        vec![v[0], x[0]],
        vec![Type::tile([2], DType::F32)],
    );
    let mut args = [Arg::Tensor(HostTensor::zeros(DType::F32, &[4]))];
    assert!(matches!(fault(&f, &mut args), Fault::Type(m) if m.contains("integer")));
    // A dim of a tile.
    let mut f = Function::new("bad");
    let x = push(
        &mut f,
        OpKind::Full {
            value: Scalar::F32(0.0),
            shape: Shape::new([2]),
        },
        vec![],
        vec![Type::tile([2], DType::F32)],
    );
    push(
        &mut f,
        OpKind::Dim { axis: 0 },
        vec![x[0]],
        vec![Type::Scalar(DType::I32)],
    );
    assert!(matches!(fault(&f, &mut []), Fault::Type(_)));
    // A partition shape of the wrong rank.
    let mut f = Function::new("bad");
    let t = f.add_param("t", Type::Tensor(TensorType::new(DType::F32, 1)));
    let view_ty = Type::PartitionView(tile_ir::PartitionViewType {
        dtype: DType::F32,
        tile: Shape::new([2, 2]),
    });
    push(
        &mut f,
        OpKind::PartitionView {
            shape: Shape::new([2, 2]),
        },
        vec![t],
        vec![view_ty],
    );
    let mut args = [Arg::Tensor(HostTensor::zeros(DType::F32, &[4]))];
    assert!(matches!(fault(&f, &mut args), Fault::Type(_)));
}

#[test]
fn ill_formed_movement_and_reductions_are_errors() {
    let tile = |f: &mut Function, shape: &[usize]| {
        push(
            f,
            OpKind::Full {
                value: Scalar::I8(1),
                shape: Shape::new(shape),
            },
            vec![],
            vec![Type::tile(shape, DType::I8)],
        )[0]
    };
    let kinds = [
        OpKind::Reshape {
            shape: Shape::new([5]),
        },
        OpKind::Permute { perm: vec![0, 0] },
        OpKind::Expand {
            shape: Shape::new([3, 3]),
        },
        OpKind::Flip { axes: vec![2] },
        OpKind::Slice {
            ranges: vec![
                SliceRange {
                    start: 0,
                    stop: 1,
                    step: 1,
                },
                SliceRange {
                    start: 2,
                    stop: 1,
                    step: 1,
                },
            ],
        },
        OpKind::Pad {
            low: vec![0],
            high: vec![0],
            value: Scalar::I8(0),
        },
        OpKind::Broadcast {
            shape: Shape::new([3]),
        },
        OpKind::Reduce {
            kind: tile_ir::ReduceKind::Sum,
            axis: 2,
            keepdim: false,
        },
        OpKind::Scan {
            kind: tile_ir::ScanKind::CumSum,
            axis: 5,
        },
        OpKind::Cat { axis: 1 },
        OpKind::Dot {
            precision: tile_ir::DotPrecision::Ieee,
        },
    ];
    for kind in kinds {
        let mut f = Function::new("bad");
        let x = tile(&mut f, &[2, 2]);
        let operands = match kind {
            OpKind::Cat { .. } => vec![x, tile(&mut f, &[3, 2])],
            OpKind::Dot { .. } => vec![x, x, x],
            _ => vec![x],
        };
        push(
            &mut f,
            kind.clone(),
            operands,
            vec![Type::tile([2, 2], DType::I8)],
        );
        assert!(matches!(fault(&f, &mut []), Fault::Type(_)), "{kind:?}");
    }
}

#[test]
fn oversized_tiles_are_errors_not_allocations() {
    for shape in [vec![usize::MAX, 2], vec![1 << 21]] {
        let mut f = Function::new("bad");
        let kind = OpKind::Full {
            value: Scalar::U8(0),
            shape: Shape::new(shape.clone()),
        };
        push(&mut f, kind, vec![], vec![Type::tile(shape, DType::U8)]);
        assert!(matches!(fault(&f, &mut []), Fault::Type(m) if m.contains("more than")));
    }
    let mut f = Function::new("bad");
    let x = push(
        &mut f,
        OpKind::Full {
            value: Scalar::U8(0),
            shape: Shape::new([2]),
        },
        vec![],
        vec![Type::tile([2], DType::U8)],
    );
    let pad = OpKind::Pad {
        low: vec![usize::MAX],
        high: vec![usize::MAX],
        value: Scalar::U8(0),
    };
    push(&mut f, pad, x, vec![Type::tile([2], DType::U8)]);
    assert!(matches!(fault(&f, &mut []), Fault::Type(_)));
}
