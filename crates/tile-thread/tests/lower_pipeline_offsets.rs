//! Software pipelining of loads whose partition index is the loop's
//! counter plus a value the loop does not change (attention's `first_key +
//! j`): copied ahead with `cp.async` like loads at the counter itself, and
//! the same results as the interpreter.

mod tensor_check;

use tensor_check::{small_integer_rows, values};
use tile_ir::{interp, DType};
use tile_testgen::inputs::{blocks, zeros};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::ThreadOpKind;

/// `c = a[:, BK:] × b[BK:, :]` in f16: a K loop, its counter of `counter`
/// dtype, whose loads index the K tile as `kk + 1` (A) and `1 + kk` (B), an
/// offset the loop does not change, like attention's `first_key + j`.
fn matmul_past_the_first_tile(
    (bm, bn, bk): (usize, usize, usize),
    counter: DType,
) -> tile_ir::Function {
    use tile_ir::builder::{BuildError, Builder};
    use tile_ir::{BinaryOp, Padding, Scalar, TensorType, Type};
    let mut b = Builder::new("matmul_past_the_first_tile");
    let f16 = || Type::Tensor(TensorType::new(DType::F16, 2));
    let (a, bmat) = (b.param("a", f16()), b.param("b", f16()));
    let c = b.param("c", Type::Tensor(TensorType::new(DType::F32, 2)));
    let build = |b: &mut Builder| -> Result<(), BuildError> {
        let (pid_m, pid_n) = (b.program_id(0)?, b.program_id(1)?);
        let va = b.partition_view(a, &[bm, bk])?;
        let vb = b.partition_view(bmat, &[bk, bn])?;
        let vc = b.partition_view(c, &[bm, bn])?;
        let k = b.dim(a, 1)?;
        let k = b.cast(k, counter)?;
        let int = |v: i64| tile_ir::eval::cast(Scalar::I64(v), counter);
        let bk_value = b.constant(int(bk as i64))?;
        let k_tiles = b.binary(BinaryOp::Div, k, bk_value)?;
        let (zero, one) = (b.constant(int(0))?, b.constant(int(1))?);
        let rest = b.binary(BinaryOp::Sub, k_tiles, one)?;
        let init = b.full(Scalar::F32(0.0), &[bm, bn])?;
        let acc = b.for_loop(zero, rest, one, &[init], |b, kk, carried| {
            let ka = b.binary(BinaryOp::Add, kk, one)?;
            let kb = b.binary(BinaryOp::Add, one, kk)?;
            let at = b.load_masked(va, &[pid_m, ka], Padding::Zero)?;
            let bt = b.load_masked(vb, &[kb, pid_n], Padding::Zero)?;
            Ok(vec![b.dot(at, bt, carried[0])?])
        })?[0];
        b.store_masked(acc, vc, &[pid_m, pid_n])
    };
    build(&mut b).unwrap();
    b.finish().unwrap()
}

#[test]
fn loads_at_an_offset_from_the_induction_variable_are_pipelined() {
    // An i64 counter too: the copies add the offset in the counter's dtype.
    for counter in [DType::I32, DType::I64] {
        offset_loads_are_pipelined(counter);
    }
}

fn offset_loads_are_pipelined(counter: DType) {
    let (bm, bn, bk) = (64, 64, 32);
    let func = matmul_past_the_first_tile((bm, bn, bk), counter);
    let copies = |stages: u32| {
        let options = LowerOptions::warps(4)
            .with_tensor_cores(TensorCores::MmaSync)
            .with_stages(stages);
        let program = lower(&func, &options).unwrap();
        let count = program
            .ops
            .iter()
            .filter(|(_, op)| matches!(op.kind, ThreadOpKind::CopyAsync { .. }))
            .count();
        (program, count)
    };
    let (_, one_stage) = copies(1);
    let (program, three_stages) = copies(3);
    tile_thread::program::verify(&program).unwrap();
    // Two stages copied ahead before the loop, one in it.
    assert_eq!(three_stages, 3 * one_stage);
    let (m, k, n) = (2 * bm + 3, 4 * bk, bn + 3);
    let args = vec![
        small_integer_rows(31, m, k, k + 8),
        small_integer_rows(32, k, n, n.next_multiple_of(8)),
        zeros(&[m, n]),
    ];
    let grid = [blocks(m, bm), blocks(n, bn), 1];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(&program, grid, &mut emulated).unwrap();
    interp::run(&func, grid, &mut reference).unwrap();
    assert_eq!(values(&emulated[2]), values(&reference[2]));
}
