//! The printed form of functions built through the raw API, and their
//! structure surviving print → parse.

use std::collections::HashMap;
use tile_ir::text::parse_function;
use tile_ir::{
    BinaryOp, CmpPred, DType, Function, OpKind, Padding, PartitionViewType, Region, Scalar, Shape,
    TensorType, Type, Value,
};

/// Appends an op with one result to the body and returns the result.
fn push(func: &mut Function, kind: OpKind, operands: Vec<Value>, ty: Type) -> Value {
    let op = func.create_op(kind, operands, vec![ty], Vec::new());
    func.body.ops.push(op);
    func.op(op).results[0]
}

/// Sums the column blocks of a row of `x` in a `for` loop, then stores the
/// sum or its negation depending on the sign of the first element.
fn build_raw() -> Function {
    let tile = Type::tile([4, 8], DType::F32);
    let mut func = Function::new("row_block_sum");
    let x = func.add_param("x", Type::Tensor(TensorType::new(DType::F32, 2)));
    let n = func.add_param("n", Type::Scalar(DType::I32));
    let i32_ty = Type::Scalar(DType::I32);
    let pid = push(
        &mut func,
        OpKind::ProgramId { axis: 0 },
        vec![],
        i32_ty.clone(),
    );
    let view_ty = Type::PartitionView(PartitionViewType {
        dtype: DType::F32,
        tile: Shape::new([4, 8]),
    });
    let shape = Shape::new([4, 8]);
    let view = push(
        &mut func,
        OpKind::PartitionView {
            shape: shape.clone(),
        },
        vec![x],
        view_ty,
    );
    let zero = push(
        &mut func,
        OpKind::Constant {
            value: Scalar::I32(0),
        },
        vec![],
        i32_ty.clone(),
    );
    let one = push(
        &mut func,
        OpKind::Constant {
            value: Scalar::I32(1),
        },
        vec![],
        i32_ty.clone(),
    );
    let init = push(
        &mut func,
        OpKind::Full {
            value: Scalar::F32(0.0),
            shape,
        },
        vec![],
        tile.clone(),
    );

    // The loop body is built before the loop op, as a builder would.
    let iv = func.new_region_arg(0, i32_ty);
    let acc = func.new_region_arg(1, tile.clone());
    let load = func.create_op(
        OpKind::LoadMasked {
            padding: Padding::Value(Scalar::F32(-1.5)),
        },
        vec![view, pid, iv],
        vec![tile.clone()],
        vec![],
    );
    let loaded = func.op(load).results[0];
    let add = func.create_op(
        OpKind::Binary(BinaryOp::Add),
        vec![acc, loaded],
        vec![tile.clone()],
        vec![],
    );
    let sum = func.op(add).results[0];
    let yield_op = func.create_op(OpKind::Yield, vec![sum], vec![], vec![]);
    let body = Region {
        args: vec![iv, acc],
        ops: vec![load, add, yield_op],
    };
    let for_op = func.create_op(
        OpKind::For { stages: None },
        vec![zero, n, one, init],
        vec![tile.clone()],
        vec![body],
    );
    func.body.ops.push(for_op);
    let total = func.op(for_op).results[0];

    let positive = push(
        &mut func,
        OpKind::Cmp(CmpPred::Gt),
        vec![n, zero],
        Type::Scalar(DType::Bool),
    );
    let then_yield = func.create_op(OpKind::Yield, vec![total], vec![], vec![]);
    let neg = func.create_op(
        OpKind::Unary(tile_ir::UnaryOp::Neg),
        vec![total],
        vec![tile.clone()],
        vec![],
    );
    let negated = func.op(neg).results[0];
    let else_yield = func.create_op(OpKind::Yield, vec![negated], vec![], vec![]);
    let regions = vec![
        Region {
            args: vec![],
            ops: vec![then_yield],
        },
        Region {
            args: vec![],
            ops: vec![neg, else_yield],
        },
    ];
    let if_op = func.create_op(OpKind::If, vec![positive], vec![tile], regions);
    func.body.ops.push(if_op);
    let result = func.op(if_op).results[0];
    let store = func.create_op(OpKind::Store, vec![result, view, pid, zero], vec![], vec![]);
    func.body.ops.push(store);
    func
}

#[test]
fn raw_function_prints() {
    insta::assert_snapshot!(build_raw().to_string(), @r"
    kernel @row_block_sum(%x: tensor<f32, 2>, %n: i32) {
      %0 = program_id 0 : i32
      %1 = partition_view %x [4, 8] : view<f32, [4, 8]>
      %2 = constant 0 : i32
      %3 = constant 1 : i32
      %4 = full 0.0 : tile<4x8xf32>
      %5 = for %6 = %2 to %n step %3 iter(%7 = %4) : tile<4x8xf32> {
        %8 = load_masked %1[%0, %6] pad(-1.5) : tile<4x8xf32>
        %9 = add %7, %8 : tile<4x8xf32>
        yield %9
      }
      %10 = cmp gt %n, %2 : bool
      %11 = if %10 : tile<4x8xf32> {
        yield %5
      } else {
        %12 = neg %5 : tile<4x8xf32>
        yield %12
      }
      store %11, %1[%0, %2]
    }
    ");
}

#[test]
fn raw_function_keeps_its_structure_through_text() {
    let func = build_raw();
    let parsed = parse_function(&func.to_string()).unwrap();
    assert_isomorphic(&func, &parsed);
    assert_eq!(parsed.to_string(), func.to_string());
}

#[test]
fn malformed_ops_print_without_panicking() {
    let mut func = Function::new("broken");
    for kind in [
        OpKind::Load,
        OpKind::Store,
        OpKind::For { stages: None },
        OpKind::If,
        OpKind::Cast { to: DType::F16 },
    ] {
        let op = func.create_op(kind, vec![], vec![], vec![]);
        func.body.ops.push(op);
    }
    assert_eq!(
        func.to_string(),
        "kernel @broken() {\n  load %?[]\n  store %?, %?[]\n  for %? = %? to %? step %? {\n  }\n  \
         if %? {\n  }\n  cast %? to f16\n}"
    );
}

/// Asserts that `a` and `b` are the same program up to the arena positions
/// of their ops and values.
fn assert_isomorphic(a: &Function, b: &Function) {
    assert_eq!(a.name, b.name);
    assert_eq!(a.params.len(), b.params.len());
    let mut map = HashMap::new();
    for (p, q) in a.params.iter().zip(&b.params) {
        assert_eq!(p.name, q.name);
        assert_eq!(a.ty(p.value), b.ty(q.value));
        map.insert(p.value, q.value);
    }
    same_region(a, b, &a.body, &b.body, &mut map);
}

fn same_region(
    a: &Function,
    b: &Function,
    ra: &Region,
    rb: &Region,
    map: &mut HashMap<Value, Value>,
) {
    assert_eq!(ra.args.len(), rb.args.len());
    for (&x, &y) in ra.args.iter().zip(&rb.args) {
        assert_eq!(a.ty(x), b.ty(y));
        map.insert(x, y);
    }
    assert_eq!(ra.ops.len(), rb.ops.len());
    for (&oa, &ob) in ra.ops.iter().zip(&rb.ops) {
        let (x, y) = (a.op(oa), b.op(ob));
        assert_eq!(x.kind, y.kind);
        let mapped: Vec<Value> = x.operands.iter().map(|v| map[v]).collect();
        assert_eq!(mapped, y.operands, "operands of {}", x.kind.name());
        assert_eq!(x.regions.len(), y.regions.len());
        for (r, s) in x.regions.iter().zip(&y.regions) {
            same_region(a, b, r, s, map);
        }
        assert_eq!(x.results.len(), y.results.len());
        for (&v, &w) in x.results.iter().zip(&y.results) {
            assert_eq!(a.ty(v), b.ty(w));
            map.insert(v, w);
        }
    }
}
