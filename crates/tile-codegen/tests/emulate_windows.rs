//! Partition views of windows (`partition_view %t [S] offset(..)
//! extent(..)`) on every GPU stage: the lockstep emulator and the LLVM IR
//! sm_80, gfx942 and gfx1100 receive (on the emulation target, whose
//! memory checks every access's bounds and alignment) store the
//! interpreter's bits for windows whose base is and is not a whole vector
//! from the tensor's start, of tensors promised aligned and not, with and
//! without extents; a tensor-core product's operands copied with
//! `cp.async` from windows; and a negative offset is the window check's
//! error, on the device as in the interpreter.

mod emulated;

use emulated::{agrees, padded, Failure};
use tile_ir::interp::{self, Arg};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};

/// `out = 2·x` over tiles of 4 × 32 of a window of `x` at `(r, c)` (of
/// extents `(n, m)` when `extents`), stored through the same window of
/// `out`: vectors of 4 f32 where the window's base is a multiple of 4
/// elements.
fn doubled_window(aligned: bool, extents: bool) -> Function {
    let promise = if aligned { ", aligned" } else { "" };
    let (clause, limits) = if extents {
        (" extent(%n, %m)", ", %n: i32, %m: i32")
    } else {
        ("", "")
    };
    let text = format!(
        r#"kernel @doubled_window(%x: tensor<f32, 2{promise}>, %out: tensor<f32, 2{promise}>, %r: i32, %c: i64{limits}) {{
  %i = program_id 0 : i32
  %j = program_id 1 : i32
  %vx = partition_view %x [4, 32] offset(%r, %c){clause} : view<f32, [4, 32]>
  %t = load_masked %vx[%i, %j] pad(zero) : tile<4x32xf32>
  %s = add %t, %t : tile<4x32xf32>
  %vo = partition_view %out [4, 32] offset(%r, %c){clause} : view<f32, [4, 32]>
  store_masked %s, %vo[%i, %j]
}}"#
    );
    parse_function(&text).unwrap()
}

fn scalars(values: &[i64]) -> Vec<Arg> {
    let mut out = vec![
        Arg::Scalar(Scalar::I32(values[0] as i32)),
        Arg::Scalar(Scalar::I64(values[1])),
    ];
    out.extend(
        values[2..]
            .iter()
            .map(|&v| Arg::Scalar(Scalar::I32(v as i32))),
    );
    out
}

#[test]
fn windows_load_and_store_at_their_offsets_on_every_stage() {
    // Rows of 44 elements 48 apart, 16 bytes into the buffer: aligned.
    // Column offsets 0, 8 (whole vectors) and 3, 5 (not: element by
    // element); a window reaching past the tensor, and one of extents
    // (5, 21) inside it.
    for aligned in [false, true] {
        for (extents, window) in [
            (false, vec![0, 0]),
            (false, vec![2, 8]),
            (false, vec![1, 3]),
            (true, vec![3, 5, 5, 21]),
            (true, vec![0, 8, 40, 40]),
        ] {
            let func = doubled_window(aligned, extents);
            let args = || {
                let mut args = vec![
                    Arg::Tensor(padded(DType::F32, (9, 44), (48, 4), |i| i as f64 * 0.5)),
                    Arg::Tensor(padded(DType::F32, (9, 44), (48, 8), |_| -1.0)),
                ];
                args.extend(scalars(&window));
                args
            };
            // Every partition of the window's index space.
            let rows = (9 - window[0]).min(*window.get(2).unwrap_or(&9));
            let cols = (44 - window[1]).min(*window.get(3).unwrap_or(&44));
            let grid = [(rows as u32).div_ceil(4), (cols as u32).div_ceil(32), 1];
            agrees(&func, args, 1, grid);
        }
    }
}

/// `c = a × b` in f16 with tensor cores, `a` read from the window of rows
/// from `row0` on and `b` from the window of columns from `col0` on, both
/// copied with `cp.async` by a software-pipelined K loop.
fn windowed_matmul() -> Function {
    parse_function(
        r#"kernel @windowed_matmul(%a: tensor<f16, 2>, %b: tensor<f16, 2>, %c: tensor<f32, 2>, %row0: i32, %col0: i32) {
  %pm = program_id 0 : i32
  %pn = program_id 1 : i32
  %zero = constant 0 : i32
  %va = partition_view %a [32, 16] offset(%row0, %zero) : view<f16, [32, 16]>
  %vb = partition_view %b [16, 32] offset(%zero, %col0) : view<f16, [16, 32]>
  %vc = partition_view %c [32, 32] : view<f32, [32, 32]>
  %k = dim %a axis 1 : i32
  %bk = constant 16 : i32
  %k15 = constant 15 : i32
  %ks = add %k, %k15 : i32
  %kt = div %ks, %bk : i32
  %one = constant 1 : i32
  %init = full 0.0 : tile<32x32xf32>
  %acc = for %kk = %zero to %kt step %one iter(%s = %init) : tile<32x32xf32> {
    %ta = load_masked %va[%pm, %kk] pad(zero) : tile<32x16xf16>
    %tb = load_masked %vb[%kk, %pn] pad(zero) : tile<16x32xf16>
    %d = dot tensor %ta, %tb, %s : tile<32x32xf32>
    yield %d
  }
  store_masked %acc, %vc[%pm, %pn]
}"#,
    )
    .unwrap()
}

#[test]
fn a_pipelined_product_copies_its_operands_from_windows() {
    let func = windowed_matmul();
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(3);
    let program = lower(&func, &options).unwrap();
    let copies = program
        .ops
        .iter()
        .filter(|(_, op)| {
            matches!(
                op.kind,
                tile_thread::program::ThreadOpKind::CopyAsync { .. }
            )
        })
        .count();
    assert!(copies > 0, "the operands are copied with cp.async");
    // K = 40 (two and a half blocks); rows of a from 3, columns of b from 8
    // (whole 16-byte chunks) and from 5 (element by element).
    let small = |i: usize| (i % 5) as f64 - 2.0;
    for col0 in [8, 5] {
        let args = || {
            vec![
                Arg::Tensor(padded(DType::F16, (40, 40), (48, 0), small)),
                Arg::Tensor(padded(DType::F16, (40, 70), (72, 8), |i| small(i / 3))),
                Arg::Tensor(padded(DType::F32, (37, 64), (64, 0), |_| 0.0)),
                Arg::Scalar(Scalar::I32(3)),
                Arg::Scalar(Scalar::I32(col0)),
            ]
        };
        let grid = [2, 2, 1];
        let mut want = args();
        interp::run(&func, grid, &mut want).unwrap();
        let mut got = args();
        emulate::run(&program, grid, &mut got).unwrap();
        assert_eq!(
            emulated::bytes(&got, 2),
            emulated::bytes(&want, 2),
            "lockstep"
        );
        for target in emulated::TARGETS {
            let mut got = args();
            emulated::run_staged(&func, target, (4, 3), grid, &mut got)
                .unwrap_or_else(|e| panic!("{target}: {e}"));
            assert_eq!(
                emulated::bytes(&got, 2),
                emulated::bytes(&want, 2),
                "{target}, column offset {col0}"
            );
        }
    }
}

#[test]
fn a_negative_offset_fails_the_window_check() {
    let func = doubled_window(false, false);
    let args = || {
        let mut args = vec![
            Arg::Tensor(padded(DType::F32, (9, 44), (48, 4), |i| i as f64)),
            Arg::Tensor(padded(DType::F32, (9, 44), (48, 8), |_| -1.0)),
        ];
        args.extend(scalars(&[2, -4]));
        args
    };
    let mut reference = args();
    let e = interp::run(&func, [1, 1, 1], &mut reference).unwrap_err();
    assert!(
        e.to_string().contains(
            "a partition view's window at offsets [2, -4]: offsets and extents must be at least 0"
        ),
        "{e}"
    );
    let program = lower(&func, &LowerOptions::warps(2)).unwrap();
    let e = emulate::run(&program, [1, 1, 1], &mut args()).unwrap_err();
    assert!(
        e.to_string().contains(
            "a partition view's window at offsets and extents [2, -4]: each must be at least 0"
        ),
        "{e}"
    );
    for target in emulated::TARGETS {
        match emulated::run(&func, target, 2, [1, 1, 1], &mut args()) {
            Err(Failure::Status(status)) => {
                assert_eq!(
                    status.code,
                    tile_abi::FaultCode::ViewWindow as u32,
                    "{target}"
                );
                assert_eq!(status.index[..2], [2, -4], "{target}");
            }
            other => panic!("{target}: {other:?}"),
        }
    }
}
