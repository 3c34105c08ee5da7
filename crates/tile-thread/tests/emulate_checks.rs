//! Emulator self-tests: planted out-of-bounds accesses, races, a missing
//! barrier, uninitialized shared memory, a misaligned vector and
//! non-uniform control flow are caught with messages naming op, block,
//! thread and address; shuffles follow PTX `shfl.sync`.

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{BinaryOp, DType, Scalar, TensorType};
use tile_thread::emulate::{self, LockstepFault};
use tile_thread::program::{Param, ParamKind, Program, Reg, ShuffleMode, ThreadOpKind};

/// Appends an op to the program's body; returns its results.
fn op(p: &mut Program, kind: ThreadOpKind, operands: &[Reg], types: &[DType]) -> Vec<Reg> {
    let id = p.create_op(kind, operands.to_vec(), types, Vec::new());
    p.body.ops.push(id);
    p.ops[id].results.clone()
}

fn one(p: &mut Program, kind: ThreadOpKind, operands: &[Reg], dtype: DType) -> Reg {
    op(p, kind, operands, &[dtype])[0]
}

/// A one-warp program over one f32 tensor `x`, with `%0 = thread_id`.
fn program() -> (Program, Reg) {
    let mut p = Program::new("k", 1);
    p.params.push(Param {
        name: "x".into(),
        kind: ParamKind::Tensor(TensorType::new(DType::F32, 1)),
    });
    let tid = one(&mut p, ThreadOpKind::ThreadId, &[], DType::I32);
    (p, tid)
}

fn x(n: usize) -> Vec<Arg> {
    vec![Arg::Tensor(
        HostTensor::from_vec(&[n], vec![1.0f32; n]).unwrap(),
    )]
}

/// Thread t loads x[t] under `mask`.
fn load_by_thread(mask: bool) -> Program {
    let (mut p, tid) = program();
    let addr = one(
        &mut p,
        ThreadOpKind::Cast { to: DType::I64 },
        &[tid],
        DType::I64,
    );
    let m = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(mask)),
        &[],
        DType::Bool,
    );
    let z = one(
        &mut p,
        ThreadOpKind::Const(Scalar::F32(0.0)),
        &[],
        DType::F32,
    );
    let load = ThreadOpKind::LoadGlobal { param: 0, width: 1 };
    one(&mut p, load, &[addr, m, z], DType::F32);
    p
}

#[test]
fn planted_out_of_bounds_load() {
    let err = emulate::run(&load_by_thread(true), [2, 1, 1], &mut x(20)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (0, 0, 0) thread 20: `%4 = ld.global.v1 x[%1] mask(%2) other(%3) : f32`: \
         out-of-bounds global load of `x` at element offset 20 (the tensor spans 0..=19)"
    );
    // Masked off, the same access touches nothing.
    emulate::run(&load_by_thread(false), [2, 1, 1], &mut x(20)).unwrap();
}

/// Thread t loads the 4 elements from x[4t + shift], as one vector where
/// `vector`, all under `mask`, each lane's own offset `spread` elements
/// after the one before (1: the vector's elements).
fn vector_load(shift: i32, (vector, mask): (bool, bool), spread: i64) -> Program {
    let (mut p, tid) = program();
    let four = one(&mut p, ThreadOpKind::Const(Scalar::I32(4)), &[], DType::I32);
    let shift = one(
        &mut p,
        ThreadOpKind::Const(Scalar::I32(shift)),
        &[],
        DType::I32,
    );
    let at = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Mul),
        &[tid, four],
        DType::I32,
    );
    let at = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Add),
        &[at, shift],
        DType::I32,
    );
    let addr = one(
        &mut p,
        ThreadOpKind::Cast { to: DType::I64 },
        &[at],
        DType::I64,
    );
    let ok = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(vector)),
        &[],
        DType::Bool,
    );
    let mut lanes = Vec::new();
    for i in 0..4 {
        let step = one(
            &mut p,
            ThreadOpKind::Const(Scalar::I64(i * spread)),
            &[],
            DType::I64,
        );
        lanes.push(one(
            &mut p,
            ThreadOpKind::Binary(BinaryOp::Add),
            &[addr, step],
            DType::I64,
        ));
    }
    let m = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(mask)),
        &[],
        DType::Bool,
    );
    let z = one(
        &mut p,
        ThreadOpKind::Const(Scalar::F32(0.0)),
        &[],
        DType::F32,
    );
    let load = ThreadOpKind::LoadGlobal { param: 0, width: 4 };
    let mut operands = vec![addr, ok];
    operands.extend(lanes);
    operands.extend([m; 4]);
    operands.extend([z; 4]);
    op(&mut p, load, &operands, &[DType::F32; 4]);
    p
}

#[test]
fn planted_misaligned_vector_load() {
    emulate::run(&vector_load(0, (true, true), 1), [1, 1, 1], &mut x(129)).unwrap();
    let err = emulate::run(&vector_load(1, (true, true), 1), [1, 1, 1], &mut x(129)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (0, 0, 0) thread 0: `%17, %18, %19, %20 = ld.global.v4 x[%5] if(%6) else[%8, %10, %12, %14] mask(%15, %15, %15, %15) other(%16, %16, %16, %16) : f32`: \
         a 4-element load of `x` at element offset 1 is not aligned to 16 bytes"
    );
    // Element by element, the same offsets need no alignment.
    emulate::run(&vector_load(1, (false, true), 1), [1, 1, 1], &mut x(129)).unwrap();
}

#[test]
fn a_vector_whose_lanes_are_not_its_elements_is_malformed() {
    let err = emulate::run(&vector_load(0, (true, true), 2), [1, 1, 1], &mut x(129)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("malformed program: load lane 1 at offset 2 in a vector access at 0"),
        "{err}"
    );
    // Its condition must imply every mask.
    let err = emulate::run(&vector_load(0, (true, false), 1), [1, 1, 1], &mut x(129)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("malformed program: load lane 0 masked off in a vector access at 0"),
        "{err}"
    );
    // Masked off element by element, it touches nothing.
    emulate::run(&vector_load(0, (false, false), 2), [1, 1, 1], &mut x(4)).unwrap();
}

#[test]
fn planted_out_of_bounds_store_in_a_later_block() {
    let (mut p, tid) = program();
    let block = one(&mut p, ThreadOpKind::BlockId { axis: 0 }, &[], DType::I32);
    let k = one(
        &mut p,
        ThreadOpKind::Const(Scalar::I32(32)),
        &[],
        DType::I32,
    );
    let base = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Mul),
        &[block, k],
        DType::I32,
    );
    let i = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Add),
        &[base, tid],
        DType::I32,
    );
    let addr = one(
        &mut p,
        ThreadOpKind::Cast { to: DType::I64 },
        &[i],
        DType::I64,
    );
    let t = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(true)),
        &[],
        DType::Bool,
    );
    let v = one(
        &mut p,
        ThreadOpKind::Const(Scalar::F32(2.0)),
        &[],
        DType::F32,
    );
    op(
        &mut p,
        ThreadOpKind::StoreGlobal { param: 0, width: 1 },
        &[addr, v, t],
        &[],
    );
    let mut args = x(40);
    let err = emulate::run(&p, [2, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (1, 0, 0) thread 8: `st.global.v1 x[%5], %7 mask(%6)`: \
         out-of-bounds global store of `x` at element offset 40 (the tensor spans 0..=39)"
    );
    assert_eq!((err.block, err.thread), ([1, 0, 0], Some(8)));
    // The stores before the fault happened; the faulting one did not.
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![2.0; 40]);
}

#[test]
fn planted_write_write_race() {
    let (mut p, _) = program();
    let s = p.alloc_shared(DType::F32, 4);
    let zero = one(&mut p, ThreadOpKind::Const(Scalar::I32(0)), &[], DType::I32);
    let t = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(true)),
        &[],
        DType::Bool,
    );
    let v = one(
        &mut p,
        ThreadOpKind::Const(Scalar::F32(1.0)),
        &[],
        DType::F32,
    );
    op(
        &mut p,
        ThreadOpKind::StoreShared { alloc: s, width: 1 },
        &[zero, v, t],
        &[],
    );
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (0, 0, 0) thread 1: `st.shared @s0[%1], %3 mask(%2)`: shared-memory race on @s0[0]: \
         write after a write by thread 0 in `st.shared @s0[%1], %3 mask(%2)` with no barrier between"
    );
}

/// Thread t writes s[t], then reads s[(t + 1) % 32], with or without a barrier.
fn neighbour_exchange(barrier: bool) -> Program {
    let (mut p, tid) = program();
    let s = p.alloc_shared(DType::I32, 32);
    let t = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(true)),
        &[],
        DType::Bool,
    );
    op(
        &mut p,
        ThreadOpKind::StoreShared { alloc: s, width: 1 },
        &[tid, tid, t],
        &[],
    );
    if barrier {
        op(&mut p, ThreadOpKind::Barrier, &[], &[]);
    }
    let one_ = one(&mut p, ThreadOpKind::Const(Scalar::I32(1)), &[], DType::I32);
    let n = one(
        &mut p,
        ThreadOpKind::Const(Scalar::I32(32)),
        &[],
        DType::I32,
    );
    let next = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Add),
        &[tid, one_],
        DType::I32,
    );
    let next = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Rem),
        &[next, n],
        DType::I32,
    );
    one(
        &mut p,
        ThreadOpKind::LoadShared { alloc: s, width: 1 },
        &[next],
        DType::I32,
    );
    p
}

#[test]
fn missing_barrier_is_a_race() {
    let err = emulate::run(&neighbour_exchange(false), [1, 1, 1], &mut x(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (0, 0, 0) thread 0: `%6 = ld.shared @s0[%5] : i32`: shared-memory race on @s0[1]: \
         read after a write by thread 1 in `st.shared @s0[%0], %0 mask(%1)` with no barrier between"
    );
    emulate::run(&neighbour_exchange(true), [1, 1, 1], &mut x(1)).unwrap();
}

#[test]
fn write_after_read_without_barrier_is_a_race() {
    let mut p = neighbour_exchange(true);
    // Everybody writes its own slot again: thread 31 read s[0] of thread 0.
    let store = p.body.ops[2];
    p.body.ops.push(store);
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert!(matches!(
        *err.fault,
        LockstepFault::SharedRace {
            index: 0,
            access: "write",
            earlier_access: "read",
            earlier_thread: 31,
            ..
        }
    ));
    assert_eq!(err.thread, Some(0));
}

#[test]
fn uninitialized_shared_read() {
    let (mut p, tid) = program();
    let s = p.alloc_shared(DType::F32, 64);
    one(
        &mut p,
        ThreadOpKind::LoadShared { alloc: s, width: 1 },
        &[tid],
        DType::F32,
    );
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (0, 0, 0) thread 0: `%1 = ld.shared @s0[%0] : f32`: read of uninitialized shared memory @s0[0]"
    );
    let small = p.alloc_shared(DType::F32, 8);
    let t = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(true)),
        &[],
        DType::Bool,
    );
    op(
        &mut p,
        ThreadOpKind::StoreShared {
            alloc: small,
            width: 1,
        },
        &[tid, tid, t],
        &[],
    );
    p.body.ops.remove(1);
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert!(matches!(
        *err.fault,
        LockstepFault::SharedOutOfBounds {
            alloc: 1,
            index: 8,
            len: 8
        }
    ));
}

#[test]
fn non_uniform_loop_bound() {
    let (mut p, tid) = program();
    let zero = one(&mut p, ThreadOpKind::Const(Scalar::I32(0)), &[], DType::I32);
    let step = one(&mut p, ThreadOpKind::Const(Scalar::I32(1)), &[], DType::I32);
    let iv = p.new_reg(DType::I32);
    let y = p.create_op(ThreadOpKind::Yield, vec![], &[], vec![]);
    let body = tile_thread::program::Region {
        args: vec![iv],
        ops: vec![y],
    };
    let f = p.create_op(ThreadOpKind::For, vec![zero, tid, step], &[], vec![body]);
    p.body.ops.push(f);
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (0, 0, 0) thread 1: `for %3 = %1 to %0 step %2 iter()`: non-uniform control flow: \
         the upper bound is 0 in thread 0 but 1 in thread 1"
    );
}

/// The lane each lane reads in a shuffle of `mode` with `b` over `width`.
fn shuffle_sources(mode: ShuffleMode, b: i32, width: u8) -> Vec<i32> {
    let (mut p, tid) = program();
    let b = one(&mut p, ThreadOpKind::Const(Scalar::I32(b)), &[], DType::I32);
    let got = one(
        &mut p,
        ThreadOpKind::Shuffle { mode, width },
        &[tid, b],
        DType::I32,
    );
    // Store what each lane got to x[tid] (as f32).
    let v = one(
        &mut p,
        ThreadOpKind::Cast { to: DType::F32 },
        &[got],
        DType::F32,
    );
    let addr = one(
        &mut p,
        ThreadOpKind::Cast { to: DType::I64 },
        &[tid],
        DType::I64,
    );
    let t = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(true)),
        &[],
        DType::Bool,
    );
    op(
        &mut p,
        ThreadOpKind::StoreGlobal { param: 0, width: 1 },
        &[addr, v, t],
        &[],
    );
    let mut args = x(32);
    emulate::run(&p, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    t.to_vec::<f32>()
        .unwrap()
        .into_iter()
        .map(|v| v as i32)
        .collect()
}

#[test]
fn shuffles_follow_ptx() {
    let lanes = |f: &dyn Fn(i32) -> i32| (0..32).map(f).collect::<Vec<_>>();
    assert_eq!(shuffle_sources(ShuffleMode::Bfly, 1, 32), lanes(&|l| l ^ 1));
    assert_eq!(
        shuffle_sources(ShuffleMode::Down, 4, 32),
        lanes(&|l| if l + 4 < 32 { l + 4 } else { l })
    );
    assert_eq!(
        shuffle_sources(ShuffleMode::Down, 2, 8),
        lanes(&|l| if l % 8 + 2 < 8 { l + 2 } else { l })
    );
    assert_eq!(
        shuffle_sources(ShuffleMode::Up, 3, 16),
        lanes(&|l| if l % 16 >= 3 { l - 3 } else { l })
    );
    assert_eq!(
        shuffle_sources(ShuffleMode::Idx, 5, 8),
        lanes(&|l| l / 8 * 8 + 5)
    );
    assert_eq!(
        shuffle_sources(ShuffleMode::Idx, 13, 8),
        lanes(&|l| l / 8 * 8 + 5)
    );
    // PTX checks only the upper end for bfly: lanes 16..32 of segments of 8
    // read lanes 0..16 (`j <= maxLane`), the others keep their own value.
    assert_eq!(
        shuffle_sources(ShuffleMode::Bfly, 16, 8),
        lanes(&|l| if l >= 16 { l - 16 } else { l })
    );
}

#[test]
fn malformed_programs_are_errors_not_panics() {
    let empty = Program::new("k", 0);
    let err = emulate::run(&empty, [1, 1, 1], &mut []).unwrap_err();
    assert_eq!(
        err.to_string(),
        "block (0, 0, 0): `kernel`: malformed program: a block of no warps"
    );
    // An operand used before it is defined.
    let (mut p, _) = program();
    let dangling = p.new_reg(DType::I32);
    one(
        &mut p,
        ThreadOpKind::Unary(tile_ir::UnaryOp::Neg),
        &[dangling],
        DType::I32,
    );
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert!(matches!(*err.fault, LockstepFault::Malformed(_)), "{err}");
    // Arguments that do not match the parameters.
    let err = emulate::run(&p, [1, 1, 1], &mut []).unwrap_err();
    assert!(matches!(*err.fault, LockstepFault::Malformed(_)), "{err}");
    // A shuffle of a width that is not a power of two.
    let (mut p, tid) = program();
    one(
        &mut p,
        ThreadOpKind::Shuffle {
            mode: ShuffleMode::Idx,
            width: 3,
        },
        &[tid, tid],
        DType::I32,
    );
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert!(matches!(*err.fault, LockstepFault::Malformed(_)), "{err}");
}

/// `ldmatrix` rows must start on 16 bytes, lie in the allocation and have
/// been written; the lane that supplies a bad row is named.
#[test]
fn ldmatrix_rows_are_checked() {
    use tile_thread::program::LdMatrix;
    let (mut p, tid) = program();
    let s = p.alloc_shared(DType::F16, 256);
    let t = one(
        &mut p,
        ThreadOpKind::Const(Scalar::Bool(true)),
        &[],
        DType::Bool,
    );
    let zero = one(
        &mut p,
        ThreadOpKind::Const(Scalar::from_bits(DType::F16, 0)),
        &[],
        DType::F16,
    );
    // Every thread writes 8 elements: the whole allocation.
    for i in 0..8 {
        let eight = one(&mut p, ThreadOpKind::Const(Scalar::I32(8)), &[], DType::I32);
        let base = one(
            &mut p,
            ThreadOpKind::Binary(BinaryOp::Mul),
            &[tid, eight],
            DType::I32,
        );
        let c = one(&mut p, ThreadOpKind::Const(Scalar::I32(i)), &[], DType::I32);
        let at = one(
            &mut p,
            ThreadOpKind::Binary(BinaryOp::Add),
            &[base, c],
            DType::I32,
        );
        op(
            &mut p,
            ThreadOpKind::StoreShared { alloc: s, width: 1 },
            &[at, zero, t],
            &[],
        );
    }
    op(&mut p, ThreadOpKind::Barrier, &[], &[]);
    let load = |p: &mut Program, index: Reg| {
        let shape = LdMatrix {
            count: 4,
            trans: false,
        };
        op(
            p,
            ThreadOpKind::LdMatrix { alloc: s, shape },
            &[index],
            &[DType::F16; 8],
        );
    };
    // Row `tid·8 + 1`: every row one element past 16 bytes.
    let eight = one(&mut p, ThreadOpKind::Const(Scalar::I32(8)), &[], DType::I32);
    let row = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Mul),
        &[tid, eight],
        DType::I32,
    );
    let one_c = one(&mut p, ThreadOpKind::Const(Scalar::I32(1)), &[], DType::I32);
    let misaligned = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Add),
        &[row, one_c],
        DType::I32,
    );
    load(&mut p, row);
    emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap();
    let last = p.body.ops.pop().unwrap();
    load(&mut p, misaligned);
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert!(
        matches!(
            *err.fault,
            LockstepFault::MisalignedMatrixRow { alloc: 0, index: 1 }
        ),
        "{err}"
    );
    assert_eq!(err.thread, Some(0));
    p.body.ops.pop();
    p.body.ops.push(last);
    // Past the end: rows 16 elements apart leave the allocation at lane 16.
    let sixteen = one(
        &mut p,
        ThreadOpKind::Const(Scalar::I32(16)),
        &[],
        DType::I32,
    );
    let far = one(
        &mut p,
        ThreadOpKind::Binary(BinaryOp::Mul),
        &[tid, sixteen],
        DType::I32,
    );
    load(&mut p, far);
    let err = emulate::run(&p, [1, 1, 1], &mut x(1)).unwrap_err();
    assert!(
        matches!(
            *err.fault,
            LockstepFault::SharedOutOfBounds {
                alloc: 0,
                index: 256,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.thread, Some(16));
}
