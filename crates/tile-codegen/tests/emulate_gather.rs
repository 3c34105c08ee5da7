//! `gather` through every GPU stage, against the interpreter: the lockstep
//! emulator runs the thread-level program, the emulation target runs the
//! LLVM IR an sm_80, gfx942 and gfx1100 receive, and ptxas and ld.lld
//! accept the code of every target.
//!
//! A 2-D gather from a strided tensor at computed index tiles (a shifted,
//! wrapped window with a mask that reads `other` on a checkerboard), in
//! tiles of 8 elements over 4 warps (every element replicated: each copy
//! reads it) and of 512 (several per thread), for one dtype of each width;
//! and an index outside the tensor, which fails the check on every stage
//! unless its mask is off.

mod emulated;

use emulated::TARGETS;

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// The source tensor's extents.
const ROWS: usize = 6;
const COLS: usize = 10;

/// Program `p` reads `block` elements of `%x` (`ROWS × COLS`): element `k`
/// at row `(k + p) mod ROWS`, column `(3k + %shift) mod COLS`, where
/// `k + p` is odd; `%other` (a scalar) elsewhere. It stores them to row
/// `p` of `%y`.
fn kernel(dtype: DType, block: usize) -> Function {
    let text = format!(
        r#"kernel @window(%x: tensor<{dtype}, 2>, %y: tensor<{dtype}, 2>, %shift: i32, %other: {dtype}) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %k = iota : tile<{block}xi32>
  %p = broadcast %pid to [{block}] : tile<{block}xi32>
  %kp = add %k, %p : tile<{block}xi32>
  %rows = full {ROWS} : tile<{block}xi32>
  %r = rem %kp, %rows : tile<{block}xi32>
  %three = full 3 : tile<{block}xi32>
  %k3 = mul %k, %three : tile<{block}xi32>
  %s = broadcast %shift to [{block}] : tile<{block}xi32>
  %k3s = add %k3, %s : tile<{block}xi32>
  %cols = full {COLS} : tile<{block}xi32>
  %c = rem %k3s, %cols : tile<{block}xi32>
  %two = full 2 : tile<{block}xi32>
  %parity = rem %kp, %two : tile<{block}xi32>
  %ones = full 1 : tile<{block}xi32>
  %odd = cmp eq %parity, %ones : tile<{block}xbool>
  %o = broadcast %other to [{block}] : tile<{block}x{dtype}>
  %g = gather %x[%r, %c], %odd, %o : tile<{block}x{dtype}>
  %vy = partition_view %y [1, {block}] : view<{dtype}, [1, {block}]>
  %g2 = reshape %g to [1, {block}] : tile<1x{block}x{dtype}>
  store %g2, %vy[%pid, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// `%x` transposed in its buffer (strides `[1, ROWS]`), so that the
/// gather's addresses follow the strides; `%y` zeroed.
fn args(dtype: DType, block: usize, shift: i32) -> Vec<Arg> {
    let values: Vec<Scalar> = (0..ROWS * COLS)
        .map(|i| tile_ir::eval::cast(Scalar::I64(i as i64 * 7 % 61 - 20), dtype))
        .collect();
    let bytes: Vec<u8> = values
        .iter()
        .flat_map(|v| {
            let width = dtype.bits().div_ceil(8) as usize;
            v.to_bits().to_le_bytes()[..width].to_vec()
        })
        .collect();
    let x = HostTensor::with_strides(dtype, &[ROWS, COLS], &[1, ROWS as isize], 0, bytes).unwrap();
    vec![
        Arg::Tensor(x),
        Arg::Tensor(HostTensor::zeros(dtype, &[3, block])),
        Arg::Scalar(Scalar::I32(shift)),
        Arg::Scalar(tile_ir::eval::cast(Scalar::I64(-99), dtype)),
    ]
}

fn output(args: &[Arg]) -> Vec<u64> {
    match &args[1] {
        Arg::Tensor(t) => t.to_scalars().iter().map(|v| v.to_bits()).collect(),
        _ => panic!("the output is a tensor"),
    }
}

#[test]
fn every_stage_reads_the_interpreters_elements() {
    for dtype in [DType::F32, DType::F16, DType::I8, DType::I64] {
        for (block, warps) in [(8, 4), (512, 4)] {
            let func = kernel(dtype, block);
            let mut want = args(dtype, block, 4);
            interp::run(&func, [3, 1, 1], &mut want).unwrap();
            let want = output(&want);
            assert!(
                want.iter().any(|&b| b != 0),
                "{dtype}: the reference is all zero"
            );
            let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
            let mut got = args(dtype, block, 4);
            emulate::run(&program, [3, 1, 1], &mut got).unwrap();
            assert_eq!(output(&got), want, "lockstep, {dtype}, block {block}");
            for target in TARGETS {
                let mut got = args(dtype, block, 4);
                emulated::run(&func, target, warps, [3, 1, 1], &mut got)
                    .unwrap_or_else(|e| panic!("{target}, {dtype}, block {block}: {e}"));
                assert_eq!(output(&got), want, "{target}, {dtype}, block {block}");
            }
        }
    }
}

#[test]
fn an_index_outside_the_tensor_fails_the_check_everywhere() {
    // Element k reads column 2k: columns 10 and up are outside.
    let bad = parse_function(
        r#"kernel @bad(%x: tensor<f32, 2>, %y: tensor<f32, 2>) {
  %zero = constant 0 : i32
  %k = iota : tile<8xi32>
  %r = full 1 : tile<8xi32>
  %all = full true : tile<8xbool>
  %o = full 0.0 : tile<8xf32>
  %c = add %k, %k : tile<8xi32>
  %g = gather %x[%r, %c], %all, %o : tile<8xf32>
  %vy = partition_view %y [1, 8] : view<f32, [1, 8]>
  %g2 = reshape %g to [1, 8] : tile<1x8xf32>
  store %g2, %vy[%zero, %zero]
}"#,
    )
    .unwrap();
    verify::verify(&bad).unwrap();
    let bad_args = || {
        vec![
            Arg::Tensor(HostTensor::zeros(DType::F32, &[ROWS, COLS])),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[1, 8])),
        ]
    };
    let err = interp::run(&bad, [1, 1, 1], &mut bad_args()).unwrap_err();
    assert!(
        err.to_string()
            .contains("element [5] reaches index [1, 10], outside the tensor of extents [6, 10]"),
        "{err}"
    );
    let program = lower(&bad, &LowerOptions::warps(4)).unwrap();
    let err = emulate::run(&program, [1, 1, 1], &mut bad_args()).unwrap_err();
    assert!(
        err.to_string()
            .contains("index check failed in kernel `bad`"),
        "{err}"
    );
    for target in TARGETS {
        match emulated::run(&bad, target, 4, [1, 1, 1], &mut bad_args()).unwrap_err() {
            emulated::Failure::Status(status) => {
                assert_eq!(
                    status.code,
                    tile_abi::FaultCode::IndexOutside as u32,
                    "{target}"
                );
                assert_eq!(status.index[0], 1, "{target}");
                assert!(status.index[1] >= COLS as i64, "{target}: {status:?}");
            }
            other => panic!("{target}: {other}"),
        }
    }
}

#[test]
fn gathers_assemble_for_every_sm_and_link_for_every_gfx() {
    let func = kernel(DType::F16, 512);
    emulated::assembles_and_links(&func, 4);
}

/// Program `p` reads the scalar `x[r, c + p]` (`other` -1 past column 9)
/// and stores it to its 8 elements of `y`.
const PICK: &str = r#"kernel @pick(%x: tensor<f32, 2>, %y: tensor<f32, 1>, %r: i32, %c: i32) {
  %pid = program_id 0 : i32
  %cp = add %c, %pid : i32
  %ten = constant 10 : i32
  %m = cmp lt %cp, %ten : bool
  %o = constant -1.0 : f32
  %v = gather %x[%r, %cp], %m, %o : f32
  %b = broadcast %v to [8] : tile<8xf32>
  %vy = partition_view %y [8] : view<f32, [8]>
  store %b, %vy[%pid]
}"#;

#[test]
fn a_gather_of_scalars_is_one_uniform_read() {
    let func = parse_function(PICK).unwrap();
    verify::verify(&func).unwrap();
    let pick_args = |c: i32| {
        let x: Vec<f32> = (0..ROWS * COLS).map(|i| i as f32 * 0.5).collect();
        vec![
            Arg::Tensor(HostTensor::from_vec(&[ROWS, COLS], x).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[8 * 12])),
            Arg::Scalar(Scalar::I32(2)),
            Arg::Scalar(Scalar::I32(c)),
        ]
    };
    let mut want = pick_args(0);
    interp::run(&func, [12, 1, 1], &mut want).unwrap();
    let want = output(&want);
    // Programs 10 and 11 read past the row: masked, -1.
    assert_eq!(f32::from_bits(want[8 * 11] as u32), -1.0);
    assert_eq!(f32::from_bits(want[8 * 3] as u32), 11.5);
    let program = lower(&func, &LowerOptions::warps(2)).unwrap();
    let text = program.to_string();
    assert!(
        !text.contains("shfl") && !text.contains("st.shared"),
        "a scalar read exchanges nothing between threads:\n{text}"
    );
    let mut got = pick_args(0);
    emulate::run(&program, [12, 1, 1], &mut got).unwrap();
    assert_eq!(output(&got), want, "lockstep");
    for target in TARGETS {
        let mut got = pick_args(0);
        emulated::run(&func, target, 2, [12, 1, 1], &mut got)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(output(&got), want, "{target}");
    }
    // A negative column whose mask holds fails the check.
    let err = interp::run(&func, [1, 1, 1], &mut pick_args(-1)).unwrap_err();
    assert!(err.to_string().contains("reaches index [2, -1]"), "{err}");
    for target in TARGETS {
        match emulated::run(&func, target, 2, [1, 1, 1], &mut pick_args(-1)).unwrap_err() {
            emulated::Failure::Status(status) => {
                assert_eq!(
                    status.code,
                    tile_abi::FaultCode::IndexOutside as u32,
                    "{target}"
                );
                assert_eq!(status.index[..2], [2, -1], "{target}");
            }
            other => panic!("{target}: {other}"),
        }
    }
}

/// Program `p` gathers row 1 of `%x` at the 512 columns `%start + k`
/// where they are below `%end` (`other` 0 elsewhere) and stores them to
/// row `p` of `%y`: each thread's consecutive columns are one group.
fn row_gather(dtype: DType) -> Function {
    let text = format!(
        r#"kernel @row(%x: tensor<{dtype}, 2>, %y: tensor<{dtype}, 2>, %start: i32, %end: i32) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %k = iota : tile<512xi32>
  %s = broadcast %start to [512] : tile<512xi32>
  %c = add %k, %s : tile<512xi32>
  %r = full 1 : tile<512xi32>
  %e = broadcast %end to [512] : tile<512xi32>
  %m = cmp lt %c, %e : tile<512xbool>
  %o = full 0 : tile<512x{dtype}>
  %g = gather %x[%r, %c], %m, %o : tile<512x{dtype}>
  %vy = partition_view %y [1, 512] : view<{dtype}, [1, 512]>
  %g2 = reshape %g to [1, 512] : tile<1x512x{dtype}>
  store %g2, %vy[%pid, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// `%x` of 2 contiguous rows of `cols`, element `i` being `i`.
fn row_args(dtype: DType, cols: usize, start: i32, end: i32) -> Vec<Arg> {
    let x: Vec<Scalar> = (0..2 * cols)
        .map(|i| tile_ir::eval::cast(Scalar::I64(i as i64 % 100), dtype))
        .collect();
    vec![
        Arg::Tensor(HostTensor::from_scalars(dtype, &[2, cols], &x).unwrap()),
        Arg::Tensor(HostTensor::zeros(dtype, &[1, 512])),
        Arg::Scalar(Scalar::I32(start)),
        Arg::Scalar(Scalar::I32(end)),
    ]
}

/// A gather of consecutive columns of contiguous rows reads each thread's
/// group of 16 bytes as one vector (in the layout its row is stored in),
/// where the group starts at a multiple
/// of its width and every element is read; elsewhere (a misaligned start,
/// a group the mask cuts) element by element, on every stage; and the one
/// check of a group that crosses the tensor's end reports its first
/// element outside, as checks one element after another would.
#[test]
fn consecutive_columns_are_read_as_vectors_and_checked_once_per_group() {
    for dtype in [DType::F32, DType::F16] {
        let func = row_gather(dtype);
        // One warp: 16 elements a thread, in groups of 16 bytes.
        let program = lower(&func, &LowerOptions::warps(1)).unwrap();
        let width = 16 / dtype.size_bytes();
        let printed = program.to_string();
        assert!(
            printed.contains(&format!("ld.global.v{width} x[")),
            "{printed}"
        );
        // The gather's layout is the store's: no conversion between them.
        assert!(program.shared.is_empty(), "{printed}");
        assert_eq!(
            printed.matches("check.index").count(),
            512 / 32 / width,
            "{printed}"
        );
        // Aligned, misaligned, and cut by the mask in the middle of a group.
        for (start, end) in [(8, 600), (3, 600), (8, 517)] {
            let args = || row_args(dtype, 600, start, end);
            let mut want = args();
            interp::run(&func, [1, 1, 1], &mut want).unwrap();
            let want = output(&want);
            let mut got = args();
            emulate::run(&program, [1, 1, 1], &mut got).unwrap();
            assert_eq!(output(&got), want, "lockstep, {dtype}, {start}..{end}");
            for target in TARGETS {
                let mut got = args();
                emulated::run(&func, target, 1, [1, 1, 1], &mut got)
                    .unwrap_or_else(|e| panic!("{target}, {dtype}: {e}"));
                assert_eq!(output(&got), want, "{target}, {dtype}, {start}..{end}");
            }
        }
        // Columns 8..520 of rows of 518: the last group's elements 518 and
        // 519 are outside; 518 is reported.
        let args = || row_args(dtype, 518, 8, 1000);
        let err = interp::run(&func, [1, 1, 1], &mut args()).unwrap_err();
        assert!(err.to_string().contains("reaches index [1, 518]"), "{err}");
        let err = emulate::run(&program, [1, 1, 1], &mut args()).unwrap_err();
        assert!(err.to_string().contains("[1, 518]"), "{err}");
        for target in TARGETS {
            match emulated::run(&func, target, 1, [1, 1, 1], &mut args()).unwrap_err() {
                emulated::Failure::Status(status) => {
                    let code = tile_abi::FaultCode::IndexOutside as u32;
                    assert_eq!(status.code, code, "{target}");
                    assert_eq!(status.index[..2], [1, 518], "{target}: {status:?}");
                }
                other => panic!("{target}: {other}"),
            }
        }
    }
}
