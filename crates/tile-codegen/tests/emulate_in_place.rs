//! Tensors updated in place need no barrier between their loads and
//! stores where no element is read by one thread and written by another
//! (`lower/global_order.rs`): RoPE's rotation of a head's two halves, read
//! and written back through one partition view, runs with no barrier and
//! as the interpreter runs it on the lockstep emulator and every emulation
//! target; a store to a partition another op reads at a run-time index
//! keeps its barrier.

mod emulated;

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::{Program, ThreadOpKind};

/// Program `p` rotates row `p` of `%q` (`[rows, 2·64]`) by the angles
/// whose cosines and sines are `%c` and `%s`: `(a, b) ← (a·c − b·s,
/// b·c + a·s)` for its halves `a` and `b`. With `shifted`, the second
/// half is read at partition index `%h` (a run-time value) instead.
fn rotation(shifted: bool) -> Function {
    let second = if shifted { "%h" } else { "%one" };
    let text = format!(
        r#"kernel @rotate(%c: tensor<f32, 2>, %s: tensor<f32, 2>, %q: tensor<f32, 2>, %h: i32) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %vc = partition_view %c [1, 64] : view<f32, [1, 64]>
  %ct = load %vc[%zero, %zero] : tile<1x64xf32>
  %vs = partition_view %s [1, 64] : view<f32, [1, 64]>
  %st = load %vs[%zero, %zero] : tile<1x64xf32>
  %vq = partition_view %q [1, 64] : view<f32, [1, 64]>
  %a = load %vq[%pid, %zero] : tile<1x64xf32>
  %b = load %vq[%pid, {second}] : tile<1x64xf32>
  %ac = mul %a, %ct : tile<1x64xf32>
  %bs = mul %b, %st : tile<1x64xf32>
  %a2 = sub %ac, %bs : tile<1x64xf32>
  %bc = mul %b, %ct : tile<1x64xf32>
  %as = mul %a, %st : tile<1x64xf32>
  %b2 = add %bc, %as : tile<1x64xf32>
  store %a2, %vq[%pid, %zero]
  store %b2, %vq[%pid, %one]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

fn args() -> Vec<Arg> {
    let angle = |i: usize| 0.1 * i as f32;
    let c: Vec<f32> = (0..64).map(|i| angle(i).cos()).collect();
    let s: Vec<f32> = (0..64).map(|i| angle(i).sin()).collect();
    let q: Vec<f32> = (0..4 * 128).map(|i| (i % 29) as f32 - 14.0).collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[1, 64], c).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[1, 64], s).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[4, 128], q).unwrap()),
        Arg::Scalar(tile_ir::Scalar::I32(1)),
    ]
}

fn barriers(program: &Program) -> usize {
    program
        .ops
        .iter()
        .filter(|(_, op)| op.kind == ThreadOpKind::Barrier)
        .count()
}

#[test]
fn a_rotation_in_place_needs_no_barrier_where_each_element_stays_in_its_thread() {
    for warps in [1, 2] {
        let in_place = lower(&rotation(false), &LowerOptions::warps(warps)).unwrap();
        assert_eq!(barriers(&in_place), 0, "{in_place}");
        // A load at a run-time partition index may read the partition a
        // store writes: the barrier stays.
        let shifted = lower(&rotation(true), &LowerOptions::warps(warps)).unwrap();
        assert!(barriers(&shifted) > 0, "{shifted}");
    }
    for shifted in [false, true] {
        emulated::agrees(&rotation(shifted), args, 2, [4, 1, 1]);
    }
}
