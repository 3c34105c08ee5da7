//! `while` through every GPU stage, against the interpreter: the lockstep
//! emulator runs the thread-level program, the emulation target runs the
//! LLVM IR an sm_80, gfx942 and gfx1100 receive, and ptxas and ld.lld
//! accept the code of every target.
//!
//! Newton's square root per program, carrying a tile of 256 elements (spread
//! over the threads of 4 warps) and a counter, until the largest error of
//! the program's block is below the tolerance: a condition computed by a
//! reduction across the block, so the programs take different numbers of
//! iterations; and a loop whose condition fails at once.

mod emulated;

use emulated::TARGETS;

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Program `p` runs `r = (r + x / r) / 2` from `r = x + 1` on its block of
/// `%x` while the block's largest `|r² − x|` exceeds `%tol` and fewer than
/// 40 steps ran; it stores `r` and, at `%steps[p]`, the step count.
const NEWTON: &str = r#"kernel @newton(%x: tensor<f32, 1>, %root: tensor<f32, 1>, %steps: tensor<i32, 1>, %tol: f32) {
  %pid = program_id 0 : i32
  %vx = partition_view %x [256] : view<f32, [256]>
  %a = load %vx[%pid] : tile<256xf32>
  %one = full 1.0 : tile<256xf32>
  %r0 = add %a, %one : tile<256xf32>
  %zero = constant 0 : i32
  %r, %n = while iter(%rc = %r0, %nc = %zero) : tile<256xf32>, i32 {
    %limit = constant 40 : i32
    %more = cmp lt %nc, %limit : bool
    %sq = mul %rc, %rc : tile<256xf32>
    %d = sub %sq, %a : tile<256xf32>
    %e = abs %d : tile<256xf32>
    %worst = reduce max %e axis 0 : f32
    %far = cmp gt %worst, %tol : bool
    %go = and %more, %far : bool
    yield %go
  } do(%rb, %nb) {
    %q = div %a, %rb : tile<256xf32>
    %s = add %rb, %q : tile<256xf32>
    %half = full 0.5 : tile<256xf32>
    %next = mul %s, %half : tile<256xf32>
    %step = constant 1 : i32
    %n1 = add %nb, %step : i32
    yield %next, %n1
  }
  %vr = partition_view %root [256] : view<f32, [256]>
  store %r, %vr[%pid]
  %vs = partition_view %steps [1] : view<i32, [1]>
  %nt = broadcast %n to [1] : tile<1xi32>
  store %nt, %vs[%pid]
}"#;

fn newton() -> Function {
    let func = parse_function(NEWTON).unwrap();
    verify::verify(&func).unwrap();
    func
}

/// Block `p` holds values near `10^(2p)`, so later blocks take more steps.
fn args(programs: usize, tol: f32) -> Vec<Arg> {
    let x: Vec<f32> = (0..programs * 256)
        .map(|i| 100f32.powi((i / 256) as i32) * (1.0 + (i % 256) as f32 / 64.0))
        .collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[programs * 256], x).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[programs * 256])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[programs])),
        Arg::Scalar(Scalar::F32(tol)),
    ]
}

fn outputs(args: &[Arg]) -> (Vec<u64>, Vec<i32>) {
    let (Arg::Tensor(root), Arg::Tensor(steps)) = (&args[1], &args[2]) else {
        panic!("the outputs are tensors")
    };
    let bits = root.to_scalars().iter().map(|v| v.to_bits()).collect();
    (bits, steps.to_vec::<i32>().unwrap())
}

#[test]
fn every_stage_runs_the_interpreters_iterations() {
    let func = newton();
    for tol in [1e-2, 1e12] {
        let mut want = args(3, tol);
        interp::run(&func, [3, 1, 1], &mut want).unwrap();
        let want = outputs(&want);
        if tol < 1.0 {
            assert!(
                want.1.windows(2).all(|w| 0 < w[0] && w[0] < w[1]),
                "the programs take different step counts: {:?}",
                want.1
            );
        } else {
            assert_eq!(want.1, [0, 0, 0], "a condition false at once");
        }
        let program = lower(&func, &LowerOptions::warps(4)).unwrap();
        let mut got = args(3, tol);
        emulate::run(&program, [3, 1, 1], &mut got).unwrap();
        assert_eq!(outputs(&got), want, "lockstep, tol {tol}");
        for target in TARGETS {
            let mut got = args(3, tol);
            emulated::run(&func, target, 4, [3, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{target}, tol {tol}: {e}"));
            assert_eq!(outputs(&got), want, "{target}, tol {tol}");
        }
    }
}

#[test]
fn while_loops_assemble_for_every_sm_and_link_for_every_gfx() {
    emulated::assembles_and_links(&newton(), 4);
}
