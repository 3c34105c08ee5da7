//! The thread-level program's verifier: lowered programs pass; broken
//! structure and types are reported naming the op and the rule.

use tile_ir::{BinaryOp, DType, Scalar, TensorType};
use tile_thread::program::{verify, Param, ParamKind, Program, Reg, Region, ThreadOpKind};

fn op(p: &mut Program, kind: ThreadOpKind, operands: &[Reg], types: &[DType]) -> Vec<Reg> {
    let id = p.create_op(kind, operands.to_vec(), types, Vec::new());
    p.body.ops.push(id);
    p.ops[id].results.clone()
}

/// A constant of `value`'s dtype.
fn constant(p: &mut Program, value: Scalar) -> Reg {
    op(p, ThreadOpKind::Const(value), &[], &[value.dtype()])[0]
}

fn program() -> Program {
    let mut p = Program::new("k", 1);
    p.params.push(Param {
        name: "x".into(),
        kind: ParamKind::Tensor(TensorType::new(DType::F32, 1)),
    });
    p
}

#[test]
fn operands_must_be_defined_before_use() {
    let mut p = program();
    let later = p.new_reg(DType::I32);
    op(
        &mut p,
        ThreadOpKind::Unary(tile_ir::UnaryOp::Neg),
        &[later],
        &[DType::I32],
    );
    assert_eq!(
        verify(&p).unwrap_err().to_string(),
        "`%0 = neg %?0 : i32`: operand %?0 is not defined before its use"
    );
}

#[test]
fn binary_operands_of_one_dtype() {
    let mut p = program();
    let a = constant(&mut p, Scalar::I32(1));
    let b = constant(&mut p, Scalar::I64(1));
    op(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Add),
        &[a, b],
        &[DType::I32],
    );
    assert_eq!(
        verify(&p).unwrap_err().to_string(),
        "`%2 = add %0, %1 : i32`: operands [I32, I64] and results [I32] break the rule of `add`"
    );
}

#[test]
fn loads_need_an_i64_address_and_a_tensor() {
    let mut p = program();
    let a = constant(&mut p, Scalar::I32(0));
    let t = constant(&mut p, Scalar::Bool(true));
    let z = constant(&mut p, Scalar::F32(0.0));
    op(
        &mut p,
        ThreadOpKind::LoadGlobal { param: 0, width: 1 },
        &[a, t, z],
        &[DType::F32],
    );
    assert!(verify(&p)
        .unwrap_err()
        .rule
        .contains("break the rule of `ld.global`"));
    let mut p = program();
    op(
        &mut p,
        ThreadOpKind::TensorAlign { param: 3 },
        &[],
        &[DType::I64],
    );
    assert_eq!(verify(&p).unwrap_err().rule, "parameter 3 is not a tensor");
}

#[test]
fn regions_end_with_a_matching_yield() {
    let mut p = program();
    let c = constant(&mut p, Scalar::Bool(true));
    let one = constant(&mut p, Scalar::I32(1));
    let y_then = p.create_op(ThreadOpKind::Yield, vec![one], &[], vec![]);
    let y_else = p.create_op(ThreadOpKind::Yield, vec![c], &[], vec![]);
    let regions = vec![
        Region {
            args: vec![],
            ops: vec![y_then],
        },
        Region {
            args: vec![],
            ops: vec![y_else],
        },
    ];
    let f = p.create_op(ThreadOpKind::If, vec![c], &[DType::I32], regions);
    p.body.ops.push(f);
    assert_eq!(
        verify(&p).unwrap_err().to_string(),
        "`yield %0`: yields [Bool] where [I32] is expected"
    );
    // A yield in the kernel body.
    let mut p = program();
    let y = p.create_op(ThreadOpKind::Yield, vec![], &[], vec![]);
    p.body.ops.push(y);
    assert_eq!(
        verify(&p).unwrap_err().rule,
        "a `yield` that does not end a nested region"
    );
}

#[test]
fn registers_are_defined_once() {
    let mut p = program();
    let r = op(&mut p, ThreadOpKind::ThreadId, &[], &[DType::I32])[0];
    let again = p.body.ops[0];
    p.body.ops.push(again);
    let _ = r;
    assert_eq!(verify(&p).unwrap_err().rule, "a register is defined twice");
}

#[test]
fn opaque_passes_an_i32_or_i64_on() {
    let mut p = program();
    let f = constant(&mut p, Scalar::F32(1.0));
    let i = constant(&mut p, Scalar::I64(1));
    op(&mut p, ThreadOpKind::Opaque, &[i], &[DType::I64]);
    verify(&p).unwrap();
    op(&mut p, ThreadOpKind::Opaque, &[f], &[DType::F32]);
    assert_eq!(
        verify(&p).unwrap_err().to_string(),
        "`%3 = opaque %0 : f32`: operands [F32] and results [F32] break the rule of `opaque`"
    );
}

#[test]
fn an_allocation_aliases_an_earlier_one_that_aliases_none() {
    let mut p = program();
    let root = p.alloc_shared(DType::F16, 64);
    let alias = p.alloc_shared(DType::F32, 32);
    p.shared[alias].aliases = Some(root);
    assert_eq!(verify(&p), Ok(()));
    // An alias of an alias.
    let chained = p.alloc_shared(DType::I32, 8);
    p.shared[chained].aliases = Some(alias);
    assert_eq!(
        verify(&p).unwrap_err().to_string(),
        "`kernel`: `@s2` aliases `@s1`: an allocation aliases an earlier one that aliases none"
    );
    // Itself.
    p.shared[chained].aliases = Some(chained);
    assert_eq!(
        verify(&p).unwrap_err().to_string(),
        "`kernel`: `@s2` aliases `@s2`: an allocation aliases an earlier one that aliases none"
    );
}

#[test]
fn shared_vectors_are_powers_of_two_of_at_most_16_bytes() {
    let mut p = program();
    let s = p.alloc_shared(DType::F32, 64);
    let i = constant(&mut p, Scalar::I32(0));
    let load = |width| ThreadOpKind::LoadShared { alloc: s, width };
    op(&mut p, load(4), &[i], &[DType::F32; 4]);
    verify(&p).unwrap();
    // Eight f32 are 32 bytes.
    op(&mut p, load(8), &[i], &[DType::F32; 8]);
    assert_eq!(
        verify(&p).unwrap_err().rule,
        "a shared vector of at most 16 bytes of numbers"
    );
    p.body.ops.pop();
    // Three elements.
    op(&mut p, load(3), &[i], &[DType::F32; 3]);
    assert_eq!(
        verify(&p).unwrap_err().rule,
        "a shared vector of at most 16 bytes of numbers"
    );
    p.body.ops.pop();
    // A store of two values with a mask, and one missing its second value.
    let v = constant(&mut p, Scalar::F32(1.0));
    let m = constant(&mut p, Scalar::Bool(true));
    // (Into another allocation: a write after the loads' reads of `s`
    // with no barrier between would be a race.)
    let t = p.alloc_shared(DType::F32, 64);
    let store = ThreadOpKind::StoreShared { alloc: t, width: 2 };
    op(&mut p, store.clone(), &[i, v, v, m], &[]);
    verify(&p).unwrap();
    op(&mut p, store, &[i, v, m], &[]);
    assert!(verify(&p)
        .unwrap_err()
        .to_string()
        .contains("break the rule of `st.shared`"));
}

/// A shuffle reads among 32 lanes, or with width 64 among the two warps of
/// a CDNA wave: a block of one warp has no such pair.
#[test]
fn a_64_lane_shuffle_needs_warps_in_pairs() {
    let shuffle = |warps| {
        let mut p = Program::new("k", warps);
        let v = constant(&mut p, Scalar::F32(1.0));
        let lane = constant(&mut p, Scalar::I32(32));
        let kind = |width| ThreadOpKind::Shuffle {
            mode: tile_thread::ShuffleMode::Bfly,
            width,
        };
        op(&mut p, kind(32), &[v, lane], &[DType::F32]);
        op(&mut p, kind(64), &[v, lane], &[DType::F32]);
        verify(&p)
    };
    shuffle(2).unwrap();
    assert_eq!(
        shuffle(1).unwrap_err().to_string(),
        "`%3 = shfl.bfly %0, %1 width 64 : f32`: operands [F32, I32] and results [F32] break the rule of `shfl`"
    );
}
