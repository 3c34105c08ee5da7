//! Block-scaled products (`dot_scaled`, expanded before lowering) on
//! `mma.sync`: both operands' scales load straight into the layout that
//! repeats each over its group of elements (no staging of the repeated
//! tiles; `b`'s product held in runs of rows per thread for it), the
//! operands computed in registers are staged for `ldmatrix` in 16-byte
//! vectors, and the emulator agrees with the interpreter bit for bit.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function, Scalar};
use tile_testgen::inputs::blocks;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::Program;

/// An MXFP8 product of `bm × bn` tiles over K in steps of `bk`: `f8e4m3`
/// elements, one `f8e8m0` scale per 32 along K.
fn mxfp8(bm: usize, bn: usize, bk: usize) -> Function {
    let g = bk / 32;
    parse_function(&format!(
        "kernel @mxfp8(%a: tensor<f8e4m3, 2>, %sa: tensor<f8e8m0, 2>, %b: tensor<f8e4m3, 2>, %sb: tensor<f8e8m0, 2>, %c: tensor<f32, 2>) {{
  %m = program_id 0 : i32
  %n = program_id 1 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %k = dim %a axis 1 : i32
  %bk = constant {bk} : i32
  %k1 = add %k, %bk : i32
  %k2 = sub %k1, %one : i32
  %steps = div %k2, %bk : i32
  %va = partition_view %a [{bm}, {bk}] : view<f8e4m3, [{bm}, {bk}]>
  %vsa = partition_view %sa [{bm}, {g}] : view<f8e8m0, [{bm}, {g}]>
  %vb = partition_view %b [{bk}, {bn}] : view<f8e4m3, [{bk}, {bn}]>
  %vsb = partition_view %sb [{bn}, {g}] : view<f8e8m0, [{bn}, {g}]>
  %vc = partition_view %c [{bm}, {bn}] : view<f32, [{bm}, {bn}]>
  %init = full 0.0 : tile<{bm}x{bn}xf32>
  %acc = for %i = %zero to %steps step %one iter(%c0 = %init) : tile<{bm}x{bn}xf32> {{
    %x = load_masked %va[%m, %i] pad(zero) : tile<{bm}x{bk}xf8e4m3>
    %sx = load_masked %vsa[%m, %i] pad(zero) : tile<{bm}x{g}xf8e8m0>
    %y = load_masked %vb[%i, %n] pad(zero) : tile<{bk}x{bn}xf8e4m3>
    %sy = load_masked %vsb[%n, %i] pad(zero) : tile<{bn}x{g}xf8e8m0>
    %d = dot_scaled %x, %sx, %y, %sy, %c0 : tile<{bm}x{bn}xf32>
    yield %d
  }}
  store_masked %acc, %vc[%m, %n]
}}"
    ))
    .unwrap()
}

/// A tensor of `shape` and `dtype` holding `values` (cycled), each cast.
fn tensor(dtype: DType, shape: &[usize], values: &[f32]) -> Arg {
    let n: usize = shape.iter().product();
    let scalars: Vec<Scalar> = (0..n)
        .map(|i| {
            let v = values[(i * 7 + i / 5) % values.len()];
            tile_ir::eval::cast(Scalar::F32(v), dtype)
        })
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &scalars).unwrap())
}

/// The emulator's run of `program` (`func` lowered) agrees with the
/// interpreter's bit for bit on a problem of partial tiles whose every
/// product and sum is exact (small integers, scales of 1, 2 and 4).
fn check_emulated(func: &Function, program: &Program, (bm, bn, bk): (usize, usize, usize)) {
    tile_thread::program::verify(program).unwrap();
    let (m, n, k) = (bm + 3, 2 * bn - 5, 2 * bk);
    let elements = [0.0, 1.0, -2.0, 3.0, -1.0, 2.0];
    let scales = [1.0, 2.0, 4.0];
    let args = vec![
        tensor(DType::F8E4M3, &[m, k], &elements),
        tensor(DType::F8E8M0, &[m, k / 32], &scales),
        tensor(DType::F8E4M3, &[k, n], &elements),
        tensor(DType::F8E8M0, &[n, k / 32], &scales),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[m, n])),
    ];
    let grid = [blocks(m, bm), blocks(n, bn), 1];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(program, grid, &mut emulated).unwrap();
    interp::run(func, grid, &mut reference).unwrap();
    assert_eq!(emulated[4], reference[4]);
}

#[test]
fn scales_load_into_their_repetition_and_operands_stage_in_vectors() {
    let tiles = (64, 64, 64);
    let func = mxfp8(tiles.0, tiles.1, tiles.2);
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(&func, &options).unwrap();
    let text = program.to_string();
    // `a`'s scales, whose 16 consecutive elements per thread share one,
    // are loaded as their repetition holds them; `b`'s product takes a
    // layout whose threads hold runs of rows, each run sharing one scale,
    // and its scales load so too. The loop's only barriers are those of the
    // operands' staging; staging the repeated scales took 14.
    let barriers = text.matches("barrier").count();
    assert_eq!(barriers, 2, "{text}");
    // The scaled operands go to shared memory as 16-byte vectors of bf16,
    // and nothing else is staged.
    let scalar_stores = text.matches("st.shared @").count();
    let vectors = text.matches("st.shared.v8").count();
    assert_eq!((scalar_stores, vectors), (0, 8), "{text}");
    check_emulated(&func, &program, tiles);
}
