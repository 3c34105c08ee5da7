//! A load's bounds are tested in 32 bits (docs/lowering.md, "Loads and
//! stores"): the partition index first against `⌈extent / tile⌉` in 64
//! bits, then each position `i·T + c` as a `u32`. A partition index whose
//! origin `i·T` wraps to a small number in 32 bits must still read only the
//! padding, on the lockstep emulator and on every emulation target.

mod emulated;

use emulated::TARGETS;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// `out = x`'s partition `%i` of 64 elements, padded with -1.
fn far_load() -> Function {
    let text = r#"kernel @far(%x: tensor<f32, 1>, %out: tensor<f32, 1>, %i: i32) {
  %zero = constant 0 : i32
  %vx = partition_view %x [64] : view<f32, [64]>
  %t = load_masked %vx[%i] pad(-1.0) : tile<64xf32>
  %vo = partition_view %out [64] : view<f32, [64]>
  store %t, %vo[%zero]
}"#;
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// The arguments: 100 elements of `x` (0, 1, …), 64 of `out`, index `i`.
fn args(i: i32) -> Vec<Arg> {
    let x: Vec<f32> = (0..100).map(|v| v as f32).collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[100], x).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[64])),
        Arg::Scalar(Scalar::I32(i)),
    ]
}

fn loaded(args: &[Arg]) -> Vec<f32> {
    match &args[1] {
        Arg::Tensor(t) => t.to_vec::<f32>().unwrap(),
        _ => unreachable!(),
    }
}

#[test]
fn a_partition_whose_origin_wraps_in_32_bits_reads_only_padding() {
    let func = far_load();
    // 2^26 · 64 = 2^32 wraps to 0, and 2^26 + 1 to 64 (inside 100 elements
    // from its 36th element on, were the index not tested first).
    for i in [1 << 26, (1 << 26) + 1] {
        let program = lower(&func, &LowerOptions::warps(1)).unwrap();
        let mut got = args(i);
        emulate::run(&program, [1, 1, 1], &mut got).unwrap();
        assert_eq!(loaded(&got), vec![-1.0; 64], "lockstep, partition {i}");
        for target in TARGETS {
            let mut got = args(i);
            emulated::run(&func, target, 1, [1, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{target}, partition {i}: {e}"));
            assert_eq!(loaded(&got), vec![-1.0; 64], "{target}, partition {i}");
        }
    }
    // The partial last partition reads its 36 elements and pads the rest.
    let mut got = args(1);
    emulated::run(&func, TARGETS[0], 1, [1, 1, 1], &mut got).unwrap();
    let want: Vec<f32> = (64..128)
        .map(|v| if v < 100 { v as f32 } else { -1.0 })
        .collect();
    assert_eq!(loaded(&got), want);
}
