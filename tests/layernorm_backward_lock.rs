//! Triton's layer-norm backward (`examples/kernels/layernorm_backward.rs`),
//! whose programs take turns at a spin lock to add into shared partial
//! sums, as the GPU targets lower it: on the lockstep emulator and on the
//! emulation targets of sm_80, sm_90, sm_90a, gfx942 and gfx1100, bit for
//! bit the interpreter's results. Blocks run in turn there, as the
//! interpreter runs programs, so each lock is taken in one order and the
//! `f16` sums round alike. The kernel runs twice on the same partial sums
//! with fresh locks, as the example's timing does: the second run must
//! store, not add, what its first holder computes.

#[allow(dead_code)] // the examples' helpers are not all used here
#[path = "../examples/common/mod.rs"]
mod common;
#[path = "../crates/tile-codegen/tests/emulated/mod.rs"]
mod emulated;
#[path = "../examples/kernels/layernorm_backward.rs"]
#[allow(dead_code)] // its runner is the demo's
mod layernorm_backward;

use tile::ir::interp::{self, Arg, HostTensor};
use tile::ir::text::parse_function;
use tile::ir::{eval, DType, Scalar};
use tile_codegen::{Gfx, Sm, Target};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

const ROWS: usize = 24;
const COLS: usize = 200;
const GROUPS: usize = 4;

/// The kernel's arguments: random `x`, `dy`, `w` in `f16`, the saved row
/// statistics, zeroed outputs and locks.
fn args() -> Vec<Arg> {
    let mut rng = common::Inputs::default();
    let mut half = |shape: &[usize]| {
        let values: Vec<Scalar> = rng
            .take(shape.iter().product())
            .into_iter()
            .map(|v| eval::cast(Scalar::F32(v), DType::F16))
            .collect();
        Arg::Tensor(HostTensor::from_scalars(DType::F16, shape, &values).unwrap())
    };
    let (x, dy, w) = (half(&[ROWS, COLS]), half(&[ROWS, COLS]), half(&[COLS]));
    let stat = |v: f32| Arg::Tensor(HostTensor::from_vec(&[ROWS], vec![v; ROWS]).unwrap());
    vec![
        x,
        dy,
        w,
        stat(0.25),
        stat(1.5),
        Arg::Tensor(HostTensor::zeros(DType::F16, &[ROWS, COLS])),
        Arg::Tensor(HostTensor::zeros(DType::F16, &[GROUPS, COLS])),
        Arg::Tensor(HostTensor::zeros(DType::F16, &[GROUPS, COLS])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[2 * GROUPS])),
    ]
}

/// Runs `launch` twice, with fresh locks the second time; the bytes of
/// every argument after.
fn twice(mut launch: impl FnMut(&mut [Arg])) -> Vec<Vec<u8>> {
    let mut a = args();
    launch(&mut a);
    a[8] = Arg::Tensor(HostTensor::zeros(DType::I32, &[2 * GROUPS]));
    launch(&mut a);
    a.iter()
        .map(|arg| match arg {
            Arg::Tensor(t) => t.data().to_vec(),
            Arg::Scalar(s) => s.to_bits().to_le_bytes().to_vec(),
            Arg::Tensors(_) => unreachable!("the kernel takes no tensor array"),
        })
        .collect()
}

#[test]
fn the_lock_runs_as_the_interpreter_runs_it_on_both_emulators() {
    let info = &layernorm_backward::layernorm_backward::<256, 4>::INFO;
    let func = parse_function(info.specializations[0].ir).expect("the embedded tile IR");
    let grid = [ROWS as u32, 1, 1];
    let want = twice(|a| interp::run(&func, grid, a).unwrap());
    let program = lower(&func, &LowerOptions::warps(info.num_warps)).unwrap();
    let got = twice(|a| emulate::run(&program, grid, a).unwrap());
    assert!(
        got == want,
        "the lockstep emulator differs from the interpreter"
    );
    for target in [
        Target::Nvptx(Sm::Sm80),
        Target::Nvptx(Sm::Sm90),
        Target::Nvptx(Sm::Sm90a),
        Target::Amdgpu(Gfx::Gfx942),
        Target::Amdgpu(Gfx::Gfx1100),
    ] {
        // The 32-lane warps of the target's blocks (twice the kernel's
        // `num_warps` on CDNA, whose warps are 64-lane wavefronts).
        let warps = target.lowering_warps(info.num_warps_on(&target.to_string()));
        let got = twice(|a| {
            emulated::run(&func, target, warps, grid, a).unwrap_or_else(|e| panic!("{target}: {e}"))
        });
        assert!(got == want, "{target} differs from the interpreter");
    }
}
