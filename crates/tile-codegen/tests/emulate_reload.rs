//! A row loaded once and broadcast into tiles of two shapes (RoPE's `cos`
//! over the query heads and over the key heads): read again in the second
//! layout when the kernel never writes its tensor, staged through shared
//! memory when it does; the same results as the interpreter's either way,
//! on the lockstep emulator and every emulation target.

mod emulated;

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function};
use tile_thread::lower::{lower, LowerOptions};

/// `%y = %x[0..32] · %w` and `%z = %x[0..8] · %w` for the row `%w`
/// broadcast over the rows; with `write_back`, `%w` stored again (so the
/// kernel writes it).
fn kernel(write_back: bool) -> Function {
    let store = match write_back {
        true => "  store %w, %vw[%zero, %zero]\n",
        false => "",
    };
    let text = format!(
        r#"kernel @rows(%x: tensor<f32, 2>, %wt: tensor<f32, 2>, %y: tensor<f32, 2>, %z: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %vw = partition_view %wt [1, 64] : view<f32, [1, 64]>
  %w = load %vw[%zero, %zero] : tile<1x64xf32>
  %vx = partition_view %x [32, 64] : view<f32, [32, 64]>
  %xt = load %vx[%zero, %zero] : tile<32x64xf32>
  %w32 = broadcast %w to [32, 64] : tile<32x64xf32>
  %p = mul %xt, %w32 : tile<32x64xf32>
  %vy = partition_view %y [32, 64] : view<f32, [32, 64]>
  store %p, %vy[%zero, %zero]
  %vx8 = partition_view %x [8, 64] : view<f32, [8, 64]>
  %x8 = load %vx8[%zero, %zero] : tile<8x64xf32>
  %w8 = broadcast %w to [8, 64] : tile<8x64xf32>
  %q = mul %x8, %w8 : tile<8x64xf32>
  %vz = partition_view %z [8, 64] : view<f32, [8, 64]>
  store %q, %vz[%zero, %zero]
{store}}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

fn args() -> Vec<Arg> {
    let x: Vec<f32> = (0..32 * 64).map(|i| (i % 37) as f32 - 18.0).collect();
    let w: Vec<f32> = (0..64).map(|i| 0.25 * i as f32 - 3.0).collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[32, 64], x).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[1, 64], w).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[32, 64], vec![0f32; 32 * 64]).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[8, 64], vec![0f32; 8 * 64]).unwrap()),
    ]
}

#[test]
fn a_row_nothing_writes_is_read_again_for_its_second_broadcast() {
    let read_only = lower(&kernel(false), &LowerOptions::warps(4)).unwrap();
    assert!(read_only.shared.is_empty(), "{read_only}");
    let written = lower(&kernel(true), &LowerOptions::warps(4)).unwrap();
    assert!(!written.shared.is_empty(), "{written}");
    for write_back in [false, true] {
        emulated::agrees(&kernel(write_back), args, 2, [1, 1, 1]);
    }
}
