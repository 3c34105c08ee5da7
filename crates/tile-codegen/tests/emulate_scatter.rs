//! `scatter` through every GPU stage, against the interpreter: the lockstep
//! emulator runs the thread-level program, the emulation target runs the
//! LLVM IR the GPU targets receive, and ptxas and ld.lld accept the code of
//! every target.
//!
//! A 1-D scatter into a strided tensor at a permutation of each program's
//! row, masked on a checkerboard, in tiles of 8 elements over 4 warps
//! (every element held by several threads: only its owner writes) and of
//! 512 (several per thread), for one dtype of each width; rows written at
//! index rows and consecutive columns (a mixture of experts' output), as
//! vectors where the tensor allows; and an index outside the tensor, which
//! fails the check on every stage, before anything is written, unless its
//! mask is off.

mod emulated;

use emulated::TARGETS;

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Program `p` writes element `k` of its values (`k - 40 + p`, in the
/// dtype) to row `p` of `%y`, column `(5k + %shift) mod block` (`block` a
/// power of two, so a permutation), where `k + p` is odd.
fn permuted(dtype: DType, block: usize) -> Function {
    let text = format!(
        r#"kernel @permuted(%y: tensor<{dtype}, 2>, %shift: i32) {{
  %pid = program_id 0 : i32
  %k = iota : tile<{block}xi32>
  %p = broadcast %pid to [{block}] : tile<{block}xi32>
  %kp = add %k, %p : tile<{block}xi32>
  %forty = full 40 : tile<{block}xi32>
  %v32 = sub %kp, %forty : tile<{block}xi32>
  %v = cast %v32 to {dtype} : tile<{block}x{dtype}>
  %five = full 5 : tile<{block}xi32>
  %k5 = mul %k, %five : tile<{block}xi32>
  %s = broadcast %shift to [{block}] : tile<{block}xi32>
  %k5s = add %k5, %s : tile<{block}xi32>
  %n = full {block} : tile<{block}xi32>
  %c = rem %k5s, %n : tile<{block}xi32>
  %two = full 2 : tile<{block}xi32>
  %parity = rem %kp, %two : tile<{block}xi32>
  %one = full 1 : tile<{block}xi32>
  %odd = cmp eq %parity, %one : tile<{block}xbool>
  scatter %y[%p, %c], %v, %odd
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// `%y` of 3 rows of `block`, transposed in its buffer (strides `[1, 3]`),
/// every element -1.
fn permuted_args(dtype: DType, block: usize) -> Vec<Arg> {
    let minus_one = tile_ir::eval::cast(Scalar::I64(-1), dtype);
    let width = dtype.bits().div_ceil(8) as usize;
    let bytes: Vec<u8> = (0..3 * block)
        .flat_map(|_| minus_one.to_bits().to_le_bytes()[..width].to_vec())
        .collect();
    let y = HostTensor::with_strides(dtype, &[3, block], &[1, 3], 0, bytes).unwrap();
    vec![Arg::Tensor(y), Arg::Scalar(Scalar::I32(3))]
}

fn bits(arg: &Arg) -> Vec<u64> {
    match arg {
        Arg::Tensor(t) => t.to_scalars().iter().map(|v| v.to_bits()).collect(),
        _ => panic!("a tensor"),
    }
}

#[test]
fn every_stage_writes_the_interpreters_elements() {
    for dtype in [DType::F32, DType::F16, DType::I8, DType::I64] {
        for (block, warps) in [(8, 4), (512, 4)] {
            let func = permuted(dtype, block);
            let mut want = permuted_args(dtype, block);
            interp::run(&func, [3, 1, 1], &mut want).unwrap();
            let want = bits(&want[0]);
            let untouched = tile_ir::eval::cast(Scalar::I64(-1), dtype).to_bits();
            let written = want.iter().filter(|&&b| b != untouched).count();
            assert!(written > block && written < 3 * block, "{dtype}: {written}");
            let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
            let mut got = permuted_args(dtype, block);
            emulate::run(&program, [3, 1, 1], &mut got).unwrap();
            assert_eq!(bits(&got[0]), want, "lockstep, {dtype}, block {block}");
            for target in TARGETS {
                let mut got = permuted_args(dtype, block);
                emulated::run(&func, target, warps, [3, 1, 1], &mut got)
                    .unwrap_or_else(|e| panic!("{target}, {dtype}, block {block}: {e}"));
                assert_eq!(bits(&got[0]), want, "{target}, {dtype}, block {block}");
            }
        }
    }
}

/// Program `p` writes its `[16, 64]` tile (element `(r, c)` is `100 p + r +
/// c / 64`, in the dtype) to the rows `%ids[16 p + r]` of `%y`, columns
/// `0..64`, where the id is below `%n`.
fn rows(dtype: DType) -> Function {
    let text = format!(
        r#"kernel @rows(%ids: tensor<i32, 1>, %y: tensor<{dtype}, 2>, %n: i32) {{
  %pid = program_id 0 : i32
  %vi = partition_view %ids [16] : view<i32, [16]>
  %id = load %vi[%pid] : tile<16xi32>
  %r = reshape %id to [16, 1] : tile<16x1xi32>
  %rr = broadcast %r to [16, 64] : tile<16x64xi32>
  %c = iota : tile<1x64xi32>
  %cc = broadcast %c to [16, 64] : tile<16x64xi32>
  %nn = broadcast %n to [16, 64] : tile<16x64xi32>
  %m = cmp lt %rr, %nn : tile<16x64xbool>
  %e = iota : tile<16x64xi32>
  %sixty4 = full 64 : tile<16x64xi32>
  %row = div %e, %sixty4 : tile<16x64xi32>
  %col = rem %e, %sixty4 : tile<16x64xi32>
  %hundred = full 100 : tile<16x64xi32>
  %p = broadcast %pid to [16, 64] : tile<16x64xi32>
  %base = mul %p, %hundred : tile<16x64xi32>
  %rc = add %row, %col : tile<16x64xi32>
  %v32 = add %base, %rc : tile<16x64xi32>
  %v = cast %v32 to {dtype} : tile<16x64x{dtype}>
  scatter %y[%rr, %cc], %v, %m
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// 32 ids, a permutation of `0..32` (the output's rows), `%y` zeroed:
/// contiguous, or transposed in its buffer.
fn rows_args(dtype: DType, n: i32, transposed: bool) -> Vec<Arg> {
    let ids: Vec<i32> = (0..32).map(|i| (i * 13 + 5) % 32).collect();
    let y = if transposed {
        let bytes = vec![0; 32 * 64 * dtype.size_bytes()];
        HostTensor::with_strides(dtype, &[32, 64], &[1, 32], 0, bytes).unwrap()
    } else {
        HostTensor::zeros(dtype, &[32, 64])
    };
    vec![
        Arg::Tensor(HostTensor::from_vec(&[32], ids).unwrap()),
        Arg::Tensor(y),
        Arg::Scalar(Scalar::I32(n)),
    ]
}

/// Whole rows at consecutive columns are one vector store per thread's
/// group of 16 bytes where the tensor's rows are contiguous and aligned,
/// and element by element where they are not (a transposed tensor), with
/// one index check per group; the ids at or past `n` write nothing.
#[test]
fn rows_at_index_rows_are_written_as_vectors() {
    for dtype in [DType::F32, DType::F16] {
        let func = rows(dtype);
        let program = lower(&func, &LowerOptions::warps(4)).unwrap();
        let printed = program.to_string();
        let width = 16 / dtype.size_bytes();
        assert!(
            printed.contains(&format!("st.global.v{width} y[")),
            "{printed}"
        );
        let groups = 16 * 64 / 128 / width;
        assert_eq!(printed.matches("check.index").count(), groups, "{printed}");
        for (n, transposed) in [(32, false), (20, false), (32, true)] {
            let mut want = rows_args(dtype, n, transposed);
            interp::run(&func, [2, 1, 1], &mut want).unwrap();
            let want = bits(&want[1]);
            let mut got = rows_args(dtype, n, transposed);
            emulate::run(&program, [2, 1, 1], &mut got).unwrap();
            assert_eq!(bits(&got[1]), want, "lockstep, {dtype}, n {n}");
            for target in TARGETS {
                let mut got = rows_args(dtype, n, transposed);
                emulated::run(&func, target, 4, [2, 1, 1], &mut got)
                    .unwrap_or_else(|e| panic!("{target}, {dtype}: {e}"));
                assert_eq!(bits(&got[1]), want, "{target}, {dtype}, n {n}");
            }
        }
    }
}

/// `%y` rows `%ids[r]` ← the f16 product of `%a` (`[32, 16]`) and `%b`
/// (`[16, 64]`), where the id is below `%n`: a value in a tensor-core
/// accumulator's layout.
const PRODUCT_ROWS: &str = r#"kernel @product_rows(%a: tensor<f16, 2>, %b: tensor<f16, 2>, %ids: tensor<i32, 1>, %y: tensor<f16, 2>, %n: i32) {
  %zero = constant 0 : i32
  %va = partition_view %a [32, 16] : view<f16, [32, 16]>
  %vb = partition_view %b [16, 64] : view<f16, [16, 64]>
  %ta = load %va[%zero, %zero] : tile<32x16xf16>
  %tb = load %vb[%zero, %zero] : tile<16x64xf16>
  %c0 = full 0.0 : tile<32x64xf32>
  %c = dot tensor %ta, %tb, %c0 : tile<32x64xf32>
  %h = cast %c to f16 : tile<32x64xf16>
  %vi = partition_view %ids [32] : view<i32, [32]>
  %id = load %vi[%zero] : tile<32xi32>
  %r = reshape %id to [32, 1] : tile<32x1xi32>
  %rr = broadcast %r to [32, 64] : tile<32x64xi32>
  %col = iota : tile<1x64xi32>
  %cc = broadcast %col to [32, 64] : tile<32x64xi32>
  %nn = broadcast %n to [32, 64] : tile<32x64xi32>
  %m = cmp lt %rr, %nn : tile<32x64xbool>
  scatter %y[%rr, %cc], %h, %m
}"#;

/// A product's rows, which `mma.sync` holds in pairs of columns, are
/// written from 16-byte vectors, as a store of them would be; on every
/// target as the interpreter writes them.
#[test]
fn an_accumulators_rows_are_written_as_vectors() {
    use tile_thread::lower::TensorCores;
    let func = parse_function(PRODUCT_ROWS).unwrap();
    verify::verify(&func).unwrap();
    let lowering = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(&func, &lowering).unwrap();
    let printed = program.to_string();
    assert!(printed.contains("st.global.v8 y["), "{printed}");
    assert!(!printed.contains("st.global.v2 y["), "{printed}");
    let args = |n: i32| {
        let small = |len: usize, mul: usize| -> Vec<Scalar> {
            (0..len)
                .map(|i| tile_ir::eval::cast(Scalar::I64((i * mul % 7) as i64 - 3), DType::F16))
                .collect()
        };
        let ids: Vec<i32> = (0..32).map(|i| (i * 7 + 3) % 32).collect();
        vec![
            Arg::Tensor(HostTensor::from_scalars(DType::F16, &[32, 16], &small(512, 5)).unwrap()),
            Arg::Tensor(HostTensor::from_scalars(DType::F16, &[16, 64], &small(1024, 3)).unwrap()),
            Arg::Tensor(HostTensor::from_vec(&[32], ids).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F16, &[32, 64])),
            Arg::Scalar(Scalar::I32(n)),
        ]
    };
    for n in [32, 19] {
        let mut want = args(n);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        let want = bits(&want[3]);
        let mut got = args(n);
        emulate::run(&program, [1, 1, 1], &mut got).unwrap();
        assert_eq!(bits(&got[3]), want, "lockstep, n {n}");
        for target in TARGETS {
            let mut got = args(n);
            emulated::run(&func, target, 4, [1, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{target}: {e}"));
            assert_eq!(bits(&got[3]), want, "{target}, n {n}");
        }
    }
}

#[test]
fn an_index_outside_the_tensor_fails_the_check_everywhere() {
    // Element k writes column 2k: columns 10 and up are outside; the
    // masked-off elements past them are not checked.
    let bad = |limit: i32| {
        let text = format!(
            r#"kernel @bad(%y: tensor<f32, 2>) {{
  %k = iota : tile<8xi32>
  %r = full 1 : tile<8xi32>
  %c = add %k, %k : tile<8xi32>
  %lim = full {limit} : tile<8xi32>
  %m = cmp lt %c, %lim : tile<8xbool>
  %v = full 7.0 : tile<8xf32>
  scatter %y[%r, %c], %v, %m
}}"#
        );
        let func = parse_function(&text).unwrap();
        verify::verify(&func).unwrap();
        func
    };
    let args = || vec![Arg::Tensor(HostTensor::zeros(DType::F32, &[6, 10]))];
    // Masked off past the tensor: every element inside is written.
    let mut ok = args();
    interp::run(&bad(10), [1, 1, 1], &mut ok).unwrap();
    let sevens = bits(&ok[0])
        .iter()
        .filter(|&&b| f32::from_bits(b as u32) == 7.0)
        .count();
    assert_eq!(sevens, 5);
    for target in TARGETS {
        let mut got = args();
        emulated::run(&bad(10), target, 4, [1, 1, 1], &mut got)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(bits(&got[0]), bits(&ok[0]), "{target}");
    }
    let err = interp::run(&bad(100), [1, 1, 1], &mut args()).unwrap_err();
    assert!(
        err.to_string()
            .contains("element [5] reaches index [1, 10], outside the tensor of extents [6, 10]"),
        "{err}"
    );
    let program = lower(&bad(100), &LowerOptions::warps(4)).unwrap();
    let err = emulate::run(&program, [1, 1, 1], &mut args()).unwrap_err();
    assert!(
        err.to_string()
            .contains("index check failed in kernel `bad`"),
        "{err}"
    );
    for target in TARGETS {
        match emulated::run(&bad(100), target, 4, [1, 1, 1], &mut args()).unwrap_err() {
            emulated::Failure::Status(status) => {
                let code = tile_abi::FaultCode::IndexOutside as u32;
                assert_eq!(status.code, code, "{target}");
                assert_eq!(status.index[0], 1, "{target}");
                assert!(status.index[1] >= 10, "{target}: {status:?}");
            }
            other => panic!("{target}: {other}"),
        }
    }
}

#[test]
fn scatters_assemble_for_every_sm_and_link_for_every_gfx() {
    emulated::assembles_and_links(&permuted(DType::F16, 512), 4);
    emulated::assembles_and_links(&rows(DType::F16), 4);
}

/// Two elements of one scatter at one address race, as two programs'
/// stores do: every emulator reports it (the interpreter, which writes in
/// row-major order, keeps the later).
#[test]
fn two_elements_at_one_address_race() {
    let func = parse_function(
        r#"kernel @dup(%y: tensor<f32, 1>) {
  %k = iota : tile<256xi32>
  %half = full 128 : tile<256xi32>
  %i = rem %k, %half : tile<256xi32>
  %v = cast %k to f32 : tile<256xf32>
  %m = full true : tile<256xbool>
  scatter %y[%i], %v, %m
}"#,
    )
    .unwrap();
    verify::verify(&func).unwrap();
    let args = || vec![Arg::Tensor(HostTensor::zeros(DType::F32, &[128]))];
    let mut want = args();
    interp::run(&func, [1, 1, 1], &mut want).unwrap();
    assert_eq!(f32::from_bits(bits(&want[0])[5] as u32), 133.0);
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    let err = emulate::run(&program, [1, 1, 1], &mut args()).unwrap_err();
    assert!(format!("{err:?}").contains("GlobalRace"), "{err:?}");
    for target in TARGETS {
        let err = emulated::run(&func, target, 4, [1, 1, 1], &mut args()).unwrap_err();
        assert!(
            err.to_string().contains("global-memory race"),
            "{target}: {err}"
        );
    }
}
