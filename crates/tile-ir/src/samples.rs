//! The example kernels of the project, built with the [`Builder`]: vector
//! add, an elementwise unary op, row softmax, layernorm, matmul, a grouped
//! matmul and a loop over tensor arrays, and transpose.
//!
//! They are the shared inputs of the test suites of every stage (printer,
//! passes, interpreter, the lowering and the back ends), written with the
//! builder so that those tests need no front end. Tile sizes are
//! parameters so that tests can try several specializations, including
//! shapes that are not powers of two and grids that leave partial edge tiles.

use crate::builder::{BuildError, Builder};
use crate::dtype::DType;
use crate::function::{Function, Value};
use crate::ops::{BinaryOp, CmpPred, DotPrecision, Padding, ReduceKind, UnaryOp};
use crate::scalar::Scalar;
use crate::types::{TensorType, Type};

fn tensor(dtype: DType, rank: usize) -> Type {
    Type::Tensor(TensorType::new(dtype, rank))
}

fn i32_const(b: &mut Builder, v: i32) -> Result<Value, BuildError> {
    b.constant(Scalar::I32(v))
}

/// `func` with every tensor and tensor-array parameter promised aligned
/// ([`TensorType::aligned`]): an example as `#[tile_kernel(aligned(..))]`
/// naming all its tensors would build it.
pub fn with_aligned_tensors(mut func: Function) -> Function {
    for p in &func.params {
        if let Type::Tensor(t) | Type::Tensors(t) = &mut func.values[p.value].ty {
            t.aligned = true;
        }
    }
    func
}

/// `out[i] = x[i] + y[i]` over 1-D f32 tensors, one tile of `block` elements
/// per program; launch `ceil(n / block)` programs.
pub fn vector_add(block: usize) -> Result<Function, BuildError> {
    let mut b = Builder::new("vector_add");
    let x = b.param("x", tensor(DType::F32, 1));
    let y = b.param("y", tensor(DType::F32, 1));
    let out = b.param("out", tensor(DType::F32, 1));
    let pid = b.program_id(0)?;
    let vx = b.partition_view(x, &[block])?;
    let vy = b.partition_view(y, &[block])?;
    let vo = b.partition_view(out, &[block])?;
    let a = b.load_masked(vx, &[pid], Padding::Zero)?;
    let c = b.load_masked(vy, &[pid], Padding::Zero)?;
    let sum = b.binary(BinaryOp::Add, a, c)?;
    b.store_masked(sum, vo, &[pid])?;
    b.finish()
}

/// `out[i] = op(x[i])` over 1-D tensors of `dtype`, one tile of `block`
/// elements per program; launch `ceil(n / block)` programs. The kernel of
/// the math library's tests.
pub fn unary(op: UnaryOp, dtype: DType, block: usize) -> Result<Function, BuildError> {
    let mut b = Builder::new(op.name());
    let x = b.param("x", tensor(dtype, 1));
    let out = b.param("out", tensor(dtype, 1));
    let pid = b.program_id(0)?;
    let vx = b.partition_view(x, &[block])?;
    let vo = b.partition_view(out, &[block])?;
    let t = b.load_masked(vx, &[pid], Padding::Zero)?;
    let y = b.unary(op, t)?;
    b.store_masked(y, vo, &[pid])?;
    b.finish()
}

/// Softmax of each row of an f32 matrix `x: [rows, cols]` into `out`, for
/// `cols <= block_cols`: a program handles `block_rows` rows; launch
/// `ceil(rows / block_rows)` programs.
pub fn softmax(block_rows: usize, block_cols: usize) -> Result<Function, BuildError> {
    let shape = [block_rows, block_cols];
    let mut b = Builder::new("softmax");
    let x = b.param("x", tensor(DType::F32, 2));
    let out = b.param("out", tensor(DType::F32, 2));
    let pid = b.program_id(0)?;
    let zero = i32_const(&mut b, 0)?;
    let vx = b.partition_view(x, &shape)?;
    let vo = b.partition_view(out, &shape)?;
    // Columns past the end read as -inf, so they add exp(-inf) = 0 to the sum.
    let t = b.load_masked(vx, &[pid, zero], Padding::NegInf)?;
    let row_max = b.reduce(ReduceKind::Max, t, 1, true)?;
    let row_max = b.broadcast(row_max, &shape)?;
    let shifted = b.binary(BinaryOp::Sub, t, row_max)?;
    let e = b.unary(UnaryOp::Exp, shifted)?;
    let total = b.reduce(ReduceKind::Sum, e, 1, true)?;
    let total = b.broadcast(total, &shape)?;
    let y = b.binary(BinaryOp::Div, e, total)?;
    b.store_masked(y, vo, &[pid, zero])?;
    b.finish()
}

/// Layer normalization of each row of `x: [rows, cols]` with weight `w` and
/// bias `bias` (both `[cols]`) and epsilon `eps`, for `cols <= block_cols`:
/// `out = (x - mean) / sqrt(var + eps) * w + bias`, with the biased variance.
/// A program handles `block_rows` rows.
pub fn layernorm(block_rows: usize, block_cols: usize) -> Result<Function, BuildError> {
    let shape = [block_rows, block_cols];
    let mut b = Builder::new("layernorm");
    let x = b.param("x", tensor(DType::F32, 2));
    let w = b.param("w", tensor(DType::F32, 1));
    let bias = b.param("bias", tensor(DType::F32, 1));
    let out = b.param("out", tensor(DType::F32, 2));
    let eps = b.param("eps", Type::Scalar(DType::F32));
    let pid = b.program_id(0)?;
    let zero = i32_const(&mut b, 0)?;
    let cols = b.dim(x, 1)?;
    let n = b.cast(cols, DType::F32)?;
    let vx = b.partition_view(x, &shape)?;
    let t = b.load_masked(vx, &[pid, zero], Padding::Zero)?;
    // mean = sum(x) / n (padding adds zeros)
    let sum = b.reduce(ReduceKind::Sum, t, 1, true)?;
    let n_tile = b.broadcast(n, &[block_rows, 1])?;
    let mean = b.binary(BinaryOp::Div, sum, n_tile)?;
    let mean = b.broadcast(mean, &shape)?;
    let centered = b.binary(BinaryOp::Sub, t, mean)?;
    // Padded columns must not add (0 - mean)^2 to the variance.
    let col = b.iota(&[block_cols], DType::I32)?;
    let col = b.broadcast(col, &shape)?;
    let limit = b.broadcast(cols, &shape)?;
    let inside = b.cmp(CmpPred::Lt, col, limit)?;
    let zeros = b.full(Scalar::F32(0.0), &shape)?;
    let centered = b.select(inside, centered, zeros)?;
    let squares = b.binary(BinaryOp::Mul, centered, centered)?;
    let var = b.reduce(ReduceKind::Sum, squares, 1, true)?;
    let var = b.binary(BinaryOp::Div, var, n_tile)?;
    let eps = b.broadcast(eps, &[block_rows, 1])?;
    let var = b.binary(BinaryOp::Add, var, eps)?;
    let rstd = b.unary(UnaryOp::Rsqrt, var)?;
    let rstd = b.broadcast(rstd, &shape)?;
    let normed = b.binary(BinaryOp::Mul, centered, rstd)?;
    let vw = b.partition_view(w, &[block_cols])?;
    let vb = b.partition_view(bias, &[block_cols])?;
    let wt = b.load_masked(vw, &[zero], Padding::Zero)?;
    let bt = b.load_masked(vb, &[zero], Padding::Zero)?;
    let wt = b.broadcast(wt, &shape)?;
    let bt = b.broadcast(bt, &shape)?;
    let y = b.fma(normed, wt, bt)?;
    let vo = b.partition_view(out, &shape)?;
    b.store_masked(y, vo, &[pid, zero])?;
    b.finish()
}

/// `c = a · b` for `a: [M, K]` and `b: [K, N]` of dtype `dtype` (f32, f16,
/// bf16 or f8; the accumulator and `c` are f32), one `bm × bn` tile of `c` per
/// program over a 2-D grid, stepping through K in blocks of `bk`; the
/// operands' default precision (`DotPrecision::default_for`).
pub fn matmul(bm: usize, bn: usize, bk: usize, dtype: DType) -> Result<Function, BuildError> {
    matmul_with(bm, bn, bk, dtype, DotPrecision::default_for(dtype, dtype))
}

/// [`matmul`] with its `dot`s of precision `precision` (`tf32` on f32, say).
pub fn matmul_with(
    bm: usize,
    bn: usize,
    bk: usize,
    dtype: DType,
    precision: DotPrecision,
) -> Result<Function, BuildError> {
    let mut b = Builder::new("matmul");
    let a = b.param("a", tensor(dtype, 2));
    let bmat = b.param("b", tensor(dtype, 2));
    let c = b.param("c", tensor(DType::F32, 2));
    let pid_m = b.program_id(0)?;
    let pid_n = b.program_id(1)?;
    let va = b.partition_view(a, &[bm, bk])?;
    let vb = b.partition_view(bmat, &[bk, bn])?;
    let vc = b.partition_view(c, &[bm, bn])?;
    // k_tiles = ceil(K / bk)
    let k = b.dim(a, 1)?;
    let bk_minus_one = i32_const(&mut b, bk as i32 - 1)?;
    let bk_value = i32_const(&mut b, bk as i32)?;
    let padded = b.binary(BinaryOp::Add, k, bk_minus_one)?;
    let k_tiles = b.binary(BinaryOp::Div, padded, bk_value)?;
    let zero = i32_const(&mut b, 0)?;
    let one = i32_const(&mut b, 1)?;
    let acc = b.full(Scalar::F32(0.0), &[bm, bn])?;
    let acc = b.for_loop(zero, k_tiles, one, &[acc], |b, kk, carried| {
        let at = b.load_masked(va, &[pid_m, kk], Padding::Zero)?;
        let bt = b.load_masked(vb, &[kk, pid_n], Padding::Zero)?;
        Ok(vec![b.dot_with(at, bt, carried[0], precision)?])
    })?;
    b.store_masked(acc[0], vc, &[pid_m, pid_n])?;
    b.finish()
}

/// `c[g] = a[g] · b[g]` for every problem `g` of a group of matmuls of
/// their own sizes (`a[g]: [M_g, K_g]`, `b[g]: [K_g, N_g]`, `c[g]: [M_g,
/// N_g]` f32), the operands tensor arrays: program `(i, j, g)` computes
/// tile `(i, j)` of problem `g` if that tile exists; launch `(max_g ⌈M_g /
/// bm⌉, max_g ⌈N_g / bn⌉, groups)`.
pub fn grouped_matmul(
    bm: usize,
    bn: usize,
    bk: usize,
    dtype: DType,
) -> Result<Function, BuildError> {
    let array = |dtype| Type::Tensors(TensorType::new(dtype, 2));
    let mut b = Builder::new("grouped_matmul");
    let a = b.param("a", array(dtype));
    let bmat = b.param("b", array(dtype));
    let c = b.param("c", array(DType::F32));
    let pid_m = b.program_id(0)?;
    let pid_n = b.program_id(1)?;
    let group = b.program_id(2)?;
    let a = b.get_tensor(a, group)?;
    let bmat = b.get_tensor(bmat, group)?;
    let c = b.get_tensor(c, group)?;
    let m = b.dim(a, 0)?;
    let n = b.dim(bmat, 1)?;
    let (bm_value, bn_value) = (i32_const(&mut b, bm as i32)?, i32_const(&mut b, bn as i32)?);
    let row = b.binary(BinaryOp::Mul, pid_m, bm_value)?;
    let col = b.binary(BinaryOp::Mul, pid_n, bn_value)?;
    let row_inside = b.cmp(CmpPred::Lt, row, m)?;
    let col_inside = b.cmp(CmpPred::Lt, col, n)?;
    let inside = b.binary(BinaryOp::And, row_inside, col_inside)?;
    b.if_else(
        inside,
        &[],
        |b| {
            let va = b.partition_view(a, &[bm, bk])?;
            let vb = b.partition_view(bmat, &[bk, bn])?;
            let vc = b.partition_view(c, &[bm, bn])?;
            let k = b.dim(a, 1)?;
            let bk_minus_one = i32_const(b, bk as i32 - 1)?;
            let bk_value = i32_const(b, bk as i32)?;
            let padded = b.binary(BinaryOp::Add, k, bk_minus_one)?;
            let k_tiles = b.binary(BinaryOp::Div, padded, bk_value)?;
            let zero = i32_const(b, 0)?;
            let one = i32_const(b, 1)?;
            let acc = b.full(Scalar::F32(0.0), &[bm, bn])?;
            let acc = b.for_loop(zero, k_tiles, one, &[acc], |b, kk, carried| {
                let at = b.load_masked(va, &[pid_m, kk], Padding::Zero)?;
                let bt = b.load_masked(vb, &[kk, pid_n], Padding::Zero)?;
                Ok(vec![b.dot(at, bt, carried[0])?])
            })?;
            b.store_masked(acc[0], vc, &[pid_m, pid_n])?;
            Ok(Vec::new())
        },
        |_| Ok(Vec::new()),
    )?;
    b.finish()
}

/// `ys[g] = 2 · xs[g]` for every tensor `g` of two arrays of 1-D f32
/// tensors, in a loop over `ys` inside the kernel (each tensor's extent is
/// read in the loop); program `i` doubles elements `i · block ..` of each
/// tensor that has them. Launch `max_g ⌈n_g / block⌉` programs; a `ys`
/// longer than `xs` makes the loop's last `get_tensor` of `xs` a fault.
pub fn double_each(block: usize) -> Result<Function, BuildError> {
    let array = Type::Tensors(TensorType::new(DType::F32, 1));
    let mut b = Builder::new("double_each");
    let xs = b.param("xs", array.clone());
    let ys = b.param("ys", array);
    let pid = b.program_id(0)?;
    let count = b.num_tensors(ys)?;
    let (zero, one) = (i32_const(&mut b, 0)?, i32_const(&mut b, 1)?);
    b.for_loop(zero, count, one, &[], |b, g, _| {
        let (x, y) = (b.get_tensor(xs, g)?, b.get_tensor(ys, g)?);
        let len = b.dim(x, 0)?;
        let block_value = i32_const(b, block as i32)?;
        let start = b.binary(BinaryOp::Mul, pid, block_value)?;
        let inside = b.cmp(CmpPred::Lt, start, len)?;
        b.if_else(
            inside,
            &[],
            |b| {
                let (vx, vy) = (
                    b.partition_view(x, &[block])?,
                    b.partition_view(y, &[block])?,
                );
                let t = b.load_masked(vx, &[pid], Padding::Zero)?;
                let doubled = b.binary(BinaryOp::Add, t, t)?;
                b.store_masked(doubled, vy, &[pid])?;
                Ok(Vec::new())
            },
            |_| Ok(Vec::new()),
        )?;
        Ok(Vec::new())
    })?;
    b.finish()
}

/// `out = xᵀ` for an f32 matrix `x: [M, N]` into `out: [N, M]`, one
/// `bm × bn` tile per program over a 2-D grid `(ceil(M / bm), ceil(N / bn))`.
pub fn transpose(bm: usize, bn: usize) -> Result<Function, BuildError> {
    let mut b = Builder::new("transpose");
    let x = b.param("x", tensor(DType::F32, 2));
    let out = b.param("out", tensor(DType::F32, 2));
    let pid_m = b.program_id(0)?;
    let pid_n = b.program_id(1)?;
    let vx = b.partition_view(x, &[bm, bn])?;
    let vo = b.partition_view(out, &[bn, bm])?;
    let t = b.load_masked(vx, &[pid_m, pid_n], Padding::Zero)?;
    let tt = b.permute(t, &[1, 0])?;
    b.store_masked(tt, vo, &[pid_n, pid_m])?;
    b.finish()
}
