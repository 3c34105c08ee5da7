//! Layout choices and shared-memory reuse, pinned by counting the shared
//! allocations and barriers of each sample.

use tile_ir::builder::{BuildError, Builder};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{
    samples, BinaryOp, CmpPred, DType, Function, Padding, ReduceKind, Scalar, TensorType, Type,
    Value,
};
use tile_testgen::inputs::blocks;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::Program;

/// (allocations, barriers) of `func` lowered for 2 warps.
fn counts(func: Function) -> (usize, usize) {
    let program = lower(&func, &LowerOptions::warps(2)).unwrap();
    (
        program.shared.len(),
        program.to_string().matches("barrier").count(),
    )
}

#[test]
fn allocations_and_barriers_of_the_samples() {
    // vector add: nothing to move.
    assert_eq!(counts(samples::vector_add(64).unwrap()), (0, 0));
    // softmax: the max runs as a tree of shuffles and the exact sum as a
    // chain through the lanes (no shared memory: the warps lie along the
    // rows). Both broadcasts stay in registers.
    assert_eq!(counts(samples::softmax(2, 16).unwrap()), (0, 0));
    // layernorm: the two sums run as chains through the lanes, nothing
    // staged. The `n` and `eps` broadcasts are computed in the sums' slice
    // layout, and the 1-D iota,
    // weight and bias are computed and loaded in the 2-D tile's layout with
    // the rows dropped, so their broadcasts stay in registers.
    assert_eq!(counts(samples::layernorm(2, 16).unwrap()), (0, 0));
    // transpose: the permute.
    assert_eq!(counts(samples::transpose(8, 16).unwrap()), (1, 1));
    // matmul: both operands of the dot, in the loop (a barrier before the
    // writes of each iteration, one before the reads).
    assert_eq!(
        counts(samples::matmul(8, 8, 4, DType::F32).unwrap()),
        (2, 2)
    );
}

#[test]
fn dot_registers_share_operand_loads() {
    // An 8x8 accumulator over 2 warps: each thread holds 4 consecutive
    // columns of one row, so each k costs 1 load of `a` and 4 of `b` (not 8).
    let program = lower(
        &samples::matmul(8, 8, 4, DType::F32).unwrap(),
        &LowerOptions::warps(2),
    )
    .unwrap();
    assert_eq!(
        program.to_string().matches("ld.shared").count(),
        4 * (1 + 4)
    );
}

/// The epilogue of [`matmul_then`]: the accumulator, its initial zeros and
/// the block's column index to the tile stored.
type Epilogue = fn(&mut Builder, Value, Value, Value) -> Result<Value, BuildError>;

/// `c = epilogue(a × b)`: an `[M, K] × [K, N]` K loop of `bm × bn × bk`
/// f16 tiles, the accumulator then passed through `epilogue` and stored to
/// `c` of `out` dtype.
fn matmul_then(bm: usize, bn: usize, bk: usize, out: DType, epilogue: Epilogue) -> Function {
    let mut b = Builder::new("matmul_then");
    let tensor = |dtype| Type::Tensor(TensorType::new(dtype, 2));
    let (a, bmat, c) = (
        b.param("a", tensor(DType::F16)),
        b.param("b", tensor(DType::F16)),
        b.param("c", tensor(out)),
    );
    let build = |b: &mut Builder| -> Result<(), BuildError> {
        let (pid_m, pid_n) = (b.program_id(0)?, b.program_id(1)?);
        let va = b.partition_view(a, &[bm, bk])?;
        let vb = b.partition_view(bmat, &[bk, bn])?;
        let vc = b.partition_view(c, &[bm, bn])?;
        let k = b.dim(a, 1)?;
        let k_tiles = b.constant(Scalar::I32(bk as i32 - 1))?;
        let k_tiles = b.binary(BinaryOp::Add, k, k_tiles)?;
        let bk_value = b.constant(Scalar::I32(bk as i32))?;
        let k_tiles = b.binary(BinaryOp::Div, k_tiles, bk_value)?;
        let (zero, one) = (b.constant(Scalar::I32(0))?, b.constant(Scalar::I32(1))?);
        let init = b.full(Scalar::F32(0.0), &[bm, bn])?;
        let acc = b.for_loop(zero, k_tiles, one, &[init], |b, kk, carried| {
            let at = b.load_masked(va, &[pid_m, kk], Padding::Zero)?;
            let bt = b.load_masked(vb, &[kk, pid_n], Padding::Zero)?;
            Ok(vec![b.dot(at, bt, carried[0])?])
        })?[0];
        let result = epilogue(b, acc, init, pid_n)?;
        b.store_masked(result, vc, &[pid_m, pid_n])
    };
    build(&mut b).unwrap();
    b.finish().unwrap()
}

/// `select(acc > 0, acc, acc * 0.01)` cast to f16; the comparison's zero is
/// the accumulator's initial `full` (one value, as CSE leaves it).
fn leaky_relu_f16(b: &mut Builder, acc: Value, init: Value, _: Value) -> Result<Value, BuildError> {
    let dims = match b.ty(acc) {
        Type::Tile(t) => t.shape.dims().to_vec(),
        _ => unreachable!("the accumulator is a tile"),
    };
    let positive = b.cmp(CmpPred::Gt, acc, init)?;
    let slope = b.full(Scalar::F32(0.01), &dims)?;
    let leak = b.binary(BinaryOp::Mul, acc, slope)?;
    let out = b.select(positive, acc, leak)?;
    b.cast(out, DType::F16)
}

/// The accumulator with its even global columns zeroed, by a `[BN]` mask
/// computed from an `iota` and broadcast over the rows (attention's `key <
/// seq`).
fn odd_columns(
    b: &mut Builder,
    acc: Value,
    init: Value,
    pid_n: Value,
) -> Result<Value, BuildError> {
    let dims = match b.ty(acc) {
        Type::Tile(t) => t.shape.dims().to_vec(),
        _ => unreachable!("the accumulator is a tile"),
    };
    let bn = dims[1];
    let columns = b.iota(&[bn], DType::I32)?;
    let width = b.constant(Scalar::I32(bn as i32))?;
    let first = b.binary(BinaryOp::Mul, pid_n, width)?;
    let first = b.broadcast(first, &[bn])?;
    let columns = b.binary(BinaryOp::Add, columns, first)?;
    let two = b.constant(Scalar::I32(2))?;
    let two = b.broadcast(two, &[bn])?;
    let parity = b.binary(BinaryOp::Rem, columns, two)?;
    let zero = b.constant(Scalar::I32(0))?;
    let zero = b.broadcast(zero, &[bn])?;
    let odd = b.cmp(CmpPred::Ne, parity, zero)?;
    let odd = b.broadcast(odd, &dims)?;
    b.select(odd, acc, init)
}

/// The accumulator where the global column is at most the global row, else
/// zero: a causal mask from `[1, BN]` and `[BM, 1]` reshapes of `iota`s.
fn causal(b: &mut Builder, acc: Value, init: Value, pid_n: Value) -> Result<Value, BuildError> {
    let dims = match b.ty(acc) {
        Type::Tile(t) => t.shape.dims().to_vec(),
        _ => unreachable!("the accumulator is a tile"),
    };
    let (bm, bn) = (dims[0], dims[1]);
    let pid_m = b.program_id(0)?;
    let offset = |b: &mut Builder, pid: Value, extent: usize| -> Result<Value, BuildError> {
        let width = b.constant(Scalar::I32(extent as i32))?;
        let first = b.binary(BinaryOp::Mul, pid, width)?;
        let first = b.broadcast(first, &[extent])?;
        let index = b.iota(&[extent], DType::I32)?;
        b.binary(BinaryOp::Add, index, first)
    };
    let rows = offset(b, pid_m, bm)?;
    let rows = b.reshape(rows, &[bm, 1])?;
    let rows = b.broadcast(rows, &dims)?;
    let columns = offset(b, pid_n, bn)?;
    let columns = b.reshape(columns, &[1, bn])?;
    let columns = b.broadcast(columns, &dims)?;
    let below = b.cmp(CmpPred::Le, columns, rows)?;
    b.select(below, acc, init)
}

/// `acc − max(acc)` along `axis` (`keepdim`, broadcast back): a softmax's
/// shift, on the accumulator.
fn shift_by_max(b: &mut Builder, acc: Value, axis: usize) -> Result<Value, BuildError> {
    let dims = match b.ty(acc) {
        Type::Tile(t) => t.shape.dims().to_vec(),
        _ => unreachable!("the accumulator is a tile"),
    };
    let max = b.reduce(ReduceKind::Max, acc, axis, true)?;
    let max = b.broadcast(max, &dims)?;
    b.binary(BinaryOp::Sub, acc, max)
}

/// `acc · Σ acc` along the rows (`keepdim`, broadcast back).
fn scale_by_row_sum(b: &mut Builder, acc: Value, _: Value, _: Value) -> Result<Value, BuildError> {
    let dims = match b.ty(acc) {
        Type::Tile(t) => t.shape.dims().to_vec(),
        _ => unreachable!("the accumulator is a tile"),
    };
    let sum = b.reduce(ReduceKind::Sum, acc, 1, true)?;
    let sum = b.broadcast(sum, &dims)?;
    b.binary(BinaryOp::Mul, acc, sum)
}

/// An f16 tensor of `shape` holding small integers (every product and sum
/// of a short K loop is exact, in any order).
fn small_integers(seed: u64, shape: &[usize]) -> Arg {
    let n = shape.iter().product();
    let scalars: Vec<Scalar> = tile_testgen::inputs::values(seed, n)
        .into_iter()
        .map(|v| tile_ir::eval::cast(Scalar::F32(v.round()), DType::F16))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(DType::F16, shape, &scalars).unwrap())
}

/// Lowers `func` (a [`matmul_then`] of `bm × bn × bk` tiles) on `mma.sync`
/// for 4 warps, asserts that its only shared memory is the operands' stage
/// buffers (nothing converts the accumulator), and that the emulator's
/// output is the interpreter's on a problem of partial tiles.
fn check_in_accumulator_layout(func: &Function, tiles: (usize, usize, usize)) {
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(func, &options).unwrap();
    assert_eq!(program.shared.len(), 2, "{program}");
    check_emulated(func, &program, tiles);
}

/// The emulator's run of `program` (`func` lowered) agrees with the
/// interpreter's bit for bit on a problem of partial tiles of small integers
/// (every sum exact, in any order).
fn check_emulated(func: &Function, program: &Program, (bm, bn, bk): (usize, usize, usize)) {
    tile_thread::program::verify(program).unwrap();
    let (m, n, k) = (2 * bm + 3, bn + 5, 3 * bk - 7);
    let out = match func.ty(func.params[2].value) {
        Type::Tensor(t) => t.dtype,
        _ => unreachable!("c is a tensor"),
    };
    let args = vec![
        small_integers(3, &[m, k]),
        small_integers(4, &[k, n]),
        Arg::Tensor(HostTensor::zeros(out, &[m, n])),
    ];
    let grid = [blocks(m, bm), blocks(n, bn), 1];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(program, grid, &mut emulated).unwrap();
    interp::run(func, grid, &mut reference).unwrap();
    assert_eq!(emulated[2], reference[2]);
}

#[test]
fn elementwise_epilogue_of_an_accumulator_stays_in_its_registers() {
    let tiles = (64, 64, 32);
    let func = matmul_then(tiles.0, tiles.1, tiles.2, DType::F16, leaky_relu_f16);
    check_in_accumulator_layout(&func, tiles);
}

#[test]
fn masks_from_iotas_are_computed_in_the_accumulator_layout() {
    let tiles = (64, 64, 32);
    let func = matmul_then(tiles.0, tiles.1, tiles.2, DType::F32, odd_columns);
    check_in_accumulator_layout(&func, tiles);
}

#[test]
fn reductions_of_an_accumulator_are_shuffle_trees_in_its_layout() {
    let tiles = (64, 64, 32);
    let row_max: Epilogue = |b, acc, _, _| shift_by_max(b, acc, 1);
    let column_max: Epilogue = |b, acc, _, _| shift_by_max(b, acc, 0);
    for (name, epilogue, sums) in [
        ("row max", row_max, false),
        ("column max", column_max, false),
        ("row sum", scale_by_row_sum as Epilogue, true),
    ] {
        let func = matmul_then(tiles.0, tiles.1, tiles.2, DType::F32, epilogue);
        let options = LowerOptions::warps(4)
            .with_tensor_cores(TensorCores::MmaSync)
            .with_reassociated_sums(sums);
        let program = lower(&func, &options).unwrap();
        let text = program.to_string();
        // The operands' stages, and the warps' totals of the 2 × 2 warps:
        // no staging of the accumulator, no sequential fold.
        assert_eq!(program.shared.len(), 3, "{name}: {text}");
        assert!(text.contains("shfl.bfly"), "{name}: {text}");
        // The K loop is the only loop: no lane is folded in one.
        let loops = text.lines().filter(|l| l.contains(" = for ")).count();
        assert_eq!(loops, 1, "{name}: {text}");
        check_emulated(&func, &program, tiles);
    }
}

#[test]
fn reshaped_iota_masks_are_computed_in_the_accumulator_layout() {
    let tiles = (64, 64, 32);
    let func = matmul_then(tiles.0, tiles.1, tiles.2, DType::F32, causal);
    check_in_accumulator_layout(&func, tiles);
}

/// The accumulator transposed after the K loop: its f32 staging takes the
/// bytes of the f16 operand stages the loop released, through an
/// allocation that aliases the larger of them, behind a barrier; the
/// program verifies and computes as the interpreter does.
#[test]
fn a_staging_after_the_loop_reuses_the_stages_of_another_dtype() {
    let tiles = (64, 64, 32);
    let transposed: Epilogue = |b, acc, _, _| b.permute(acc, &[1, 0]);
    let func = matmul_then(tiles.0, tiles.1, tiles.2, DType::F32, transposed);
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(&func, &options).unwrap();
    let text = program.to_string();
    let (roots, aliases): (Vec<_>, Vec<_>) = program
        .shared
        .iter()
        .map(|(_, a)| a)
        .partition(|a| a.aliases.is_none());
    assert_eq!(roots.len(), 2, "{text}");
    assert!(roots.iter().all(|a| a.dtype == DType::F16), "{text}");
    assert_eq!(aliases.len(), 1, "{text}");
    assert_eq!(aliases[0].dtype, DType::F32, "{text}");
    assert!(text.contains("f32[4096] aliases @s"), "{text}");
    check_emulated(&func, &program, tiles);
}
