//! `unpack_fp4` and `pack_fp4` through every GPU stage, against the
//! interpreter: the lowering expands them (`expand-fp4-pairs`), the
//! lockstep emulator runs the thread-level program, the emulation target
//! the LLVM IR an sm_80, gfx942, gfx950, gfx1100 and gfx1200 receive, and
//! ptxas and ld.lld accept the code of every target.
//!
//! Each program unpacks a tile of bytes along one axis, stores the values
//! widened to `f32`, and packs them back into a second tensor; the tensor
//! ends inside the second program's tile, so masked bytes take part too.

mod emulated;

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function, Scalar};

/// Tiles of `[R, C]` bytes over a `[ROWS, C]` tensor.
const R: usize = 8;
const C: usize = 16;
const ROWS: usize = 12;

fn kernel(axis: usize) -> Function {
    let (vr, vc) = if axis == 0 { (2 * R, C) } else { (R, 2 * C) };
    let text = format!(
        r#"kernel @fp4_pairs(%x: tensor<u8, 2>, %values: tensor<f32, 2>, %back: tensor<u8, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [{R}, {C}] : view<u8, [{R}, {C}]>
  %t = load_masked %vx[%pid, %zero] pad(zero) : tile<{R}x{C}xu8>
  %f = unpack_fp4 %t axis {axis} : tile<{vr}x{vc}xf4e2m1>
  %w = cast %f to f32 : tile<{vr}x{vc}xf32>
  %vv = partition_view %values [{vr}, {vc}] : view<f32, [{vr}, {vc}]>
  store_masked %w, %vv[%pid, %zero]
  %p = pack_fp4 %f axis {axis} : tile<{R}x{C}xu8>
  %vb = partition_view %back [{R}, {C}] : view<u8, [{R}, {C}]>
  store_masked %p, %vb[%pid, %zero]
}}"#
    );
    parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn args(axis: usize) -> Vec<Arg> {
    let bytes: Vec<Scalar> = (0..ROWS * C)
        .map(|i| Scalar::U8((i * 37 + 11) as u8))
        .collect();
    let values = if axis == 0 {
        [2 * ROWS, C]
    } else {
        [ROWS, 2 * C]
    };
    vec![
        Arg::Tensor(HostTensor::from_scalars(DType::U8, &[ROWS, C], &bytes).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &values)),
        Arg::Tensor(HostTensor::zeros(DType::U8, &[ROWS, C])),
    ]
}

#[test]
fn unpacked_and_packed_back_along_the_rows_on_every_stage() {
    emulated::agrees(&kernel(1), || args(1), 1, [2, 1, 1]);
}

#[test]
fn unpacked_and_packed_back_along_the_columns_on_every_stage() {
    emulated::agrees(&kernel(0), || args(0), 1, [2, 1, 1]);
}

#[test]
fn every_target_assembles_and_links_them() {
    emulated::require(tile_codegen::tools::Tool::Ptxas);
    emulated::assembles_and_links(&kernel(1), 4);
}
