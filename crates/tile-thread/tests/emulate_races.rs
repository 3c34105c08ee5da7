//! The lockstep emulator's check of global memory between blocks: blocks of
//! a launch are ordered only by their acquires and releases, so two blocks
//! that meet at one element race unless both update it atomically or one's
//! access happens before the other's.

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::DType;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Runs `text` lowered for one warp over `programs` blocks on `args`.
fn run(text: &str, programs: u32, args: &mut [Arg]) -> Result<(), String> {
    let func = parse_function(text).unwrap();
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    emulate::run(&program, [programs, 1, 1], args).map_err(|e| e.to_string())
}

fn tensor(n: usize) -> Arg {
    Arg::Tensor(HostTensor::zeros(DType::I32, &[n]))
}

/// Every program stores its tile to partition 0.
const SAME_PARTITION: &str = "
kernel @same(%out: tensor<i32, 1>) {
  %zero = constant 0 : i32
  %pid = program_id 0 : i32
  %v = broadcast %pid to [4] : tile<4xi32>
  %vo = partition_view %out [4] : view<i32, [4]>
  store %v, %vo[%zero]
}";

#[test]
fn two_blocks_storing_one_element_race() {
    let err = run(SAME_PARTITION, 2, &mut [tensor(4)]).unwrap_err();
    assert!(
        err.contains("global race on `out` at element offset 0: a store after a store by thread 0 of block 0 (linear index), and nothing orders them"),
        "{err}"
    );
    // One block alone does not race with itself.
    run(SAME_PARTITION, 1, &mut [tensor(4)]).unwrap();
}

/// Every program adds 1 at indices 0..4, and (with `%read`) then loads
/// them back.
fn counting(read: bool) -> String {
    let load = if read {
        "  %back = load %vo[%zero] : tile<4xi32>\n  %vr = partition_view %seen [4] : view<i32, [4]>\n  store %back, %vr[%pid]\n"
    } else {
        ""
    };
    format!(
        "kernel @count(%out: tensor<i32, 1>, %seen: tensor<i32, 1>) {{
  %zero = constant 0 : i32
  %pid = program_id 0 : i32
  %i = iota : tile<4xi32>
  %one = full 1 : tile<4xi32>
  %all = full true : tile<4xbool>
  %old = atomic add acq_rel gpu %out[%i], %one, %all : tile<4xi32>
  %vo = partition_view %out [4] : view<i32, [4]>
{load}}}"
    )
}

#[test]
fn atomics_of_many_blocks_on_one_element_do_not_race() {
    let mut args = [tensor(4), tensor(12)];
    run(&counting(false), 3, &mut args).unwrap();
    let Arg::Tensor(out) = &args[0] else {
        unreachable!()
    };
    assert_eq!(out.to_vec::<i32>().unwrap(), [3, 3, 3, 3]);
}

#[test]
fn a_load_of_an_element_another_block_updates_races() {
    let err = run(&counting(true), 2, &mut [tensor(4), tensor(8)]).unwrap_err();
    assert!(
        err.contains("global race on `out` at element offset 0: an atomic update after a load by thread 0 of block 0 (linear index)"),
        "{err}"
    );
}
