//! A row loaded once and broadcast into tiles of two shapes (RoPE's `cos`
//! over the query heads and over the key heads): read again in the second
//! layout when the kernel never writes its tensor, staged through shared
//! memory when it does; the same results as the interpreter's either way,
//! on the lockstep emulator and every emulation target.

mod emulated;

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{eval, verify, DType, Function, Scalar};
use tile_thread::lower::{lower, LowerOptions};

/// `%y = %x · %w` and `%z = %h · %w` for the row `%w` broadcast over the
/// rows; with `narrow`, `%h` and `%z` are f16 (their tiles hold 8 columns a
/// thread, where `%w`'s hold 4, so the second broadcast is not in
/// registers the threads hold); with `write_back`, `%w` stored again (so
/// the kernel writes it).
fn kernel(narrow: bool, write_back: bool) -> Function {
    let store = match write_back {
        true => "  store %w, %vw[%zero, %zero]\n",
        false => "",
    };
    let t = if narrow { "f16" } else { "f32" };
    let text = format!(
        r#"kernel @rows(%x: tensor<f32, 2>, %wt: tensor<f32, 2>, %h: tensor<{t}, 2>, %y: tensor<f32, 2>, %z: tensor<{t}, 2>) {{
  %zero = constant 0 : i32
  %vw = partition_view %wt [1, 64] : view<f32, [1, 64]>
  %w = load %vw[%zero, %zero] : tile<1x64xf32>
  %vx = partition_view %x [32, 64] : view<f32, [32, 64]>
  %xt = load %vx[%zero, %zero] : tile<32x64xf32>
  %w32 = broadcast %w to [32, 64] : tile<32x64xf32>
  %p = mul %xt, %w32 : tile<32x64xf32>
  %vy = partition_view %y [32, 64] : view<f32, [32, 64]>
  store %p, %vy[%zero, %zero]
  %vh = partition_view %h [8, 64] : view<{t}, [8, 64]>
  %h8 = load %vh[%zero, %zero] : tile<8x64x{t}>
  %x8 = cast %h8 to f32 : tile<8x64xf32>
  %w8 = broadcast %w to [8, 64] : tile<8x64xf32>
  %q = mul %x8, %w8 : tile<8x64xf32>
  %q8 = cast %q to {t} : tile<8x64x{t}>
  %vz = partition_view %z [8, 64] : view<{t}, [8, 64]>
  store %q8, %vz[%zero, %zero]
{store}}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

fn args(narrow: bool) -> Vec<Arg> {
    let x: Vec<f32> = (0..32 * 64).map(|i| (i % 37) as f32 - 18.0).collect();
    let w: Vec<f32> = (0..64).map(|i| 0.25 * i as f32 - 3.0).collect();
    let h: Vec<f32> = (0..8 * 64).map(|i| (i % 11) as f32 - 5.0).collect();
    let dtype = if narrow { DType::F16 } else { DType::F32 };
    let tensor = |shape: &[usize], data: Vec<f32>| {
        let scalars: Vec<Scalar> = data
            .into_iter()
            .map(|v| eval::cast(Scalar::F32(v), dtype))
            .collect();
        Arg::Tensor(HostTensor::from_scalars(dtype, shape, &scalars).unwrap())
    };
    vec![
        Arg::Tensor(HostTensor::from_vec(&[32, 64], x).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[1, 64], w).unwrap()),
        tensor(&[8, 64], h),
        Arg::Tensor(HostTensor::from_vec(&[32, 64], vec![0f32; 32 * 64]).unwrap()),
        tensor(&[8, 64], vec![0f32; 8 * 64]),
    ]
}

/// Where each thread's copies of the second broadcast are in registers it
/// already holds (the same 4 columns a thread in both shapes), it keeps them:
/// no read again, no shared memory, whether or not the kernel writes the row.
#[test]
fn a_row_broadcast_over_the_same_columns_keeps_its_registers() {
    // The loads of `wt`: a second set where the row is read again.
    let row_loads = |p: &tile_thread::Program| {
        let text = p.to_string();
        let loads = text
            .lines()
            .filter(|l| l.contains("ld.global") && l.contains(" wt["));
        loads.count()
    };
    let read_again = lower(&kernel(true, false), &LowerOptions::warps(4)).unwrap();
    for write_back in [false, true] {
        let program = lower(&kernel(false, write_back), &LowerOptions::warps(4)).unwrap();
        assert!(program.shared.is_empty(), "{program}");
        assert!(row_loads(&program) < row_loads(&read_again), "{program}");
        emulated::agrees(&kernel(false, write_back), || args(false), 2, [1, 1, 1]);
    }
}

#[test]
fn a_row_nothing_writes_is_read_again_for_its_second_broadcast() {
    let read_only = lower(&kernel(true, false), &LowerOptions::warps(4)).unwrap();
    assert!(read_only.shared.is_empty(), "{read_only}");
    let written = lower(&kernel(true, true), &LowerOptions::warps(4)).unwrap();
    assert!(!written.shared.is_empty(), "{written}");
    for write_back in [false, true] {
        emulated::agrees(&kernel(true, write_back), || args(true), 2, [1, 1, 1]);
    }
}
