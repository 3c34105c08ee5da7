//! `reduce_with` and `scan_with` (a kernel author's combine function)
//! through every GPU stage, against the interpreter: the lockstep emulator
//! runs the thread-level program, the emulation target runs the LLVM IR an
//! sm_80, gfx942 and gfx1100 receive, and ptxas and ld.lld accept the code
//! of every target.
//!
//! The kernel reduces each row of a `[4, 40]` block to its largest value
//! and that value's first index (a combine of two tiles, f32 and i32), scans
//! the rows with `acc · 0.5 + x` (not associative: the order is the
//! interpreter's), and reduces a 1-D tile to a scalar; with 1 and 4 warps,
//! so that lanes are folded by one thread or spread.

mod emulated;

use emulated::TARGETS;

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

const KERNEL: &str = r#"kernel @combine(%x: tensor<f32, 2>, %best: tensor<f32, 2>, %at: tensor<i32, 2>, %decay: tensor<f32, 2>, %total: tensor<f32, 1>) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [4, 40] : view<f32, [4, 40]>
  %t = load %vx[%pid, %zero] : tile<4x40xf32>
  %cols = iota : tile<40xi32>
  %c2 = reshape %cols to [1, 40] : tile<1x40xi32>
  %idx = broadcast %c2 to [4, 40] : tile<4x40xi32>
  %m, %i = reduce_with %t, %idx axis 1 keepdim combine(%a, %ai, %b, %bi) : tile<4x1xf32>, tile<4x1xi32> {
    %gt = cmp gt %b, %a : bool
    %v = select %gt, %b, %a : f32
    %j = select %gt, %bi, %ai : i32
    yield %v, %j
  }
  %vb = partition_view %best [4, 1] : view<f32, [4, 1]>
  store %m, %vb[%pid, %zero]
  %vi = partition_view %at [4, 1] : view<i32, [4, 1]>
  store %i, %vi[%pid, %zero]
  %s = scan_with %t axis 1 combine(%acc, %next) : tile<4x40xf32> {
    %half = constant 0.5 : f32
    %h = mul %acc, %half : f32
    %n = add %h, %next : f32
    yield %n
  }
  %vd = partition_view %decay [4, 40] : view<f32, [4, 40]>
  store %s, %vd[%pid, %zero]
  %row = reshape %t to [160] : tile<160xf32>
  %sum = reduce_with %row axis 0 combine(%p, %q) : f32 {
    %r = sub %q, %p : f32
    yield %r
  }
  %st = broadcast %sum to [1] : tile<1xf32>
  %vt = partition_view %total [1] : view<f32, [1]>
  store %st, %vt[%pid]
}"#;

fn kernel() -> Function {
    let func = parse_function(KERNEL).unwrap();
    verify::verify(&func).unwrap();
    func
}

fn args() -> Vec<Arg> {
    let x: Vec<f32> = (0..8 * 40)
        .map(|i| ((i * 37 + 11) % 97) as f32 * 0.25 - 9.0)
        .collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[8, 40], x).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 1])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[8, 1])),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[8, 40])),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[2])),
    ]
}

fn outputs(args: &[Arg]) -> Vec<Vec<u64>> {
    args[1..]
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.to_scalars().iter().map(|v| v.to_bits()).collect(),
            _ => panic!("the outputs are tensors"),
        })
        .collect()
}

#[test]
fn every_stage_folds_in_the_interpreters_order() {
    let func = kernel();
    let mut want = args();
    interp::run(&func, [2, 1, 1], &mut want).unwrap();
    // The first index of each row's largest value, from plain Rust.
    let Arg::Tensor(x) = &want[0] else {
        unreachable!()
    };
    let x = x.to_vec::<f32>().unwrap();
    let firsts: Vec<i32> = x
        .chunks(40)
        .map(|row| {
            let best = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            row.iter().position(|&v| v == best).unwrap() as i32
        })
        .collect();
    let Arg::Tensor(at) = &want[2] else {
        unreachable!()
    };
    assert_eq!(at.to_vec::<i32>().unwrap(), firsts);
    let want = outputs(&want);
    for warps in [1, 4] {
        let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
        let mut got = args();
        emulate::run(&program, [2, 1, 1], &mut got).unwrap();
        assert_eq!(outputs(&got), want, "lockstep, {warps} warps");
        for target in TARGETS {
            let mut got = args();
            emulated::run(&func, target, warps, [2, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{target}, {warps} warps: {e}"));
            assert_eq!(outputs(&got), want, "{target}, {warps} warps");
        }
    }
}

#[test]
fn combines_assemble_for_every_sm_and_link_for_every_gfx() {
    emulated::assembles_and_links(&kernel(), 4);
}

#[test]
fn a_scalar_is_its_own_fold() {
    // A lane of one element is not combined: the function never runs.
    let func = parse_function(
        r#"kernel @one(%x: tensor<f32, 1>, %y: tensor<f32, 1>) {
  %zero = constant 0 : i32
  %v = partition_view %x [1] : view<f32, [1]>
  %t = load %v[%zero] : tile<1xf32>
  %r = reduce_with %t axis 0 keepdim combine(%a, %b) : tile<1xf32> {
    %c = add %a, %b : f32
    yield %c
  }
  %vy = partition_view %y [1] : view<f32, [1]>
  store %r, %vy[%zero]
}"#,
    )
    .unwrap();
    let run = |program: Option<u32>| {
        let mut a = vec![
            Arg::Tensor(HostTensor::from_vec(&[1], vec![-0.0f32]).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[1])),
        ];
        match program {
            None => interp::run(&func, [1, 1, 1], &mut a).unwrap(),
            Some(w) => {
                let p = lower(&func, &LowerOptions::warps(w)).unwrap();
                emulate::run(&p, [1, 1, 1], &mut a).unwrap();
            }
        }
        let Arg::Tensor(y) = &a[1] else {
            unreachable!()
        };
        y.to_scalars()[0]
    };
    assert_eq!(run(None).to_bits(), Scalar::F32(-0.0).to_bits());
    assert_eq!(run(Some(2)).to_bits(), Scalar::F32(-0.0).to_bits());
}
