//! What the emulation target catches: a GPU module with a barrier dropped or
//! a lane exchange broken fails (by a race or by wrong results, never
//! silently), accesses outside every allocation or misaligned for their
//! instruction stop the launch, and the kernel's own checks come back in the
//! status record as they would from a device.

mod emulated;

use emulated::Failure;
use tile_abi::FaultCode;
use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{samples, Function};
use tile_testgen::inputs::{blocks, bytes, tensor, zeros};

const NVIDIA: Target = Target::Nvptx(Sm::Sm80);
const AMD: Target = Target::Amdgpu(Gfx::Gfx942);

/// A kernel, its grid and its arguments.
type Launch = (Function, [u32; 3], Vec<Arg>);

/// Softmax over 37 rows of 200: block reductions through shuffles (or
/// permutes), in registers.
fn softmax() -> Launch {
    let (rows, cols) = (37, 200);
    let func = samples::softmax(4, 256).unwrap();
    let args = vec![tensor(3, &[rows, cols]), zeros(&[rows, cols])];
    (func, [blocks(rows, 4), 1, 1], args)
}

/// A transpose of 40 × 50 in 32 × 32 blocks: through shared memory,
/// between barriers.
fn transpose() -> Launch {
    let (rows, cols) = (40, 50);
    let func = samples::transpose(32, 32).unwrap();
    let args = vec![tensor(4, &[rows, cols]), zeros(&[cols, rows])];
    (func, [blocks(rows, 32), blocks(cols, 32), 1], args)
}

/// Whether a mutated softmax fails on `target`: an emulator error or
/// results other than the interpreter's.
fn mutated_softmax_fails(target: Target, mutate: impl Fn(&str) -> String) -> String {
    mutated_fails(softmax(), target, mutate)
}

/// Whether the kernel of `launch`, mutated, fails on `target`.
fn mutated_fails(launch: Launch, target: Target, mutate: impl Fn(&str) -> String) -> String {
    let (func, grid, args) = launch;
    let mut expected = args.clone();
    interp::run(&func, grid, &mut expected).unwrap();
    let mut actual = args;
    match emulated::run_mutated(&func, target, 4, grid, &mut actual, mutate) {
        Err(e) => e.to_string(),
        Ok(()) => {
            assert!(
                bytes(&actual) != bytes(&expected),
                "the mutant agrees on {target}"
            );
            "results differ".to_string()
        }
    }
}

/// `text` with every line `l` replaced by `f(l)`.
fn map_lines(text: &str, f: impl Fn(&str) -> String) -> String {
    text.lines().map(f).collect::<Vec<_>>().join("\n")
}

/// `text` with `from` replaced by `to` in the lines that contain `what`.
fn replace_in_lines(text: &str, what: &str, from: &str, to: &str) -> String {
    map_lines(text, |l| {
        if l.contains(what) {
            l.replace(from, to)
        } else {
            l.to_string()
        }
    })
}

/// `text` without the lines that contain `what`.
fn without_lines(text: &str, what: &str) -> String {
    text.lines()
        .filter(|l| !l.contains(what))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_unmutated_softmax_agrees() {
    let (func, grid, args) = softmax();
    let mut expected = args.clone();
    interp::run(&func, grid, &mut expected).unwrap();
    for target in [NVIDIA, AMD] {
        let mut actual = args.clone();
        emulated::run(&func, target, 4, grid, &mut actual).unwrap();
        assert!(bytes(&actual) == bytes(&expected), "{target}");
    }
}

#[test]
fn dropping_the_barriers_fails() {
    let why = mutated_fails(transpose(), NVIDIA, |t| {
        without_lines(
            t,
            "call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)",
        )
    });
    assert!(why.contains("shared-memory race"), "{why}");
    let why = mutated_fails(transpose(), AMD, |t| {
        without_lines(t, "call void @llvm.amdgcn.s.barrier()")
    });
    assert!(why.contains("shared-memory race"), "{why}");
}

#[test]
fn breaking_a_lane_exchange_fails() {
    // A butterfly becomes a shift down: lanes read the wrong partner.
    let why = mutated_softmax_fails(NVIDIA, |t| {
        t.replace(
            "@llvm.nvvm.shfl.sync.bfly.i32(",
            "@llvm.nvvm.shfl.sync.down.i32(",
        )
    });
    assert_eq!(why, "results differ");
    // Every swizzle reads lane 0 of its 32 (all masks 0).
    let why = mutated_softmax_fails(AMD, |t| {
        map_lines(t, |l| match l.find("@llvm.amdgcn.ds.swizzle(i32 ") {
            Some(at) if l.contains(" = ") => {
                let operands = at + "@llvm.amdgcn.ds.swizzle(i32 ".len();
                let start = operands + l[operands..].find(", i32 ").unwrap_or(0) + ", i32 ".len();
                let end = start + l[start..].find(')').unwrap_or(0);
                format!("{}0{}", &l[..start], &l[end..])
            }
            _ => l.to_string(),
        })
    });
    assert_eq!(why, "results differ");
}

/// An MFMA whose broadcast controls are not 0 (here `cbsz = 1`: A taken
/// from another block of lanes) is no instruction the emulators model:
/// the launch stops, naming it.
#[test]
fn an_mfma_with_broadcast_controls_stops_the_launch() {
    let dtype = tile_ir::DType::F16;
    let func = samples::matmul(32, 32, 16, dtype).unwrap();
    let mut args = vec![
        tile_testgen::inputs::tensor_of(1, &[32, 16], dtype),
        tile_testgen::inputs::tensor_of(2, &[16, 32], dtype),
        zeros(&[32, 32]),
    ];
    let error = emulated::run_mutated(&func, AMD, 2, [1, 1, 1], &mut args, |t| {
        let call = "call <16 x float> @llvm.amdgcn.mfma.";
        replace_in_lines(t, call, "i32 0, i32 0, i32 0)", "i32 1, i32 0, i32 0)")
    })
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("mfma32x32x8.f16 with broadcast controls 0x1"),
        "{message}"
    );
}

#[test]
fn an_access_outside_every_allocation_stops_the_launch() {
    let func = samples::vector_add(256).unwrap();
    for target in [NVIDIA, AMD] {
        let module = emulated::module(&func, target, 4, &Default::default()).unwrap();
        let kernel = emulated::image(&module).unwrap();
        // `y` claims 1,000 elements, but only its first 100 are memory.
        let mut args = vec![tensor(1, &[1000]), tensor(2, &[1000]), zeros(&[1000])];
        let reach = |i: usize, bytes: u64| if i == 1 { 400 } else { bytes };
        let error =
            emulated::launch_reaching(&kernel, [4, 1, 1], 4, &mut args, &reach).unwrap_err();
        assert!(
            matches!(
                error,
                Failure::Emulator(tile_emu::EmuError::OutOfBounds { .. })
            ),
            "{target}: {error}"
        );
        // Nothing past the first failing access was stored.
        let Arg::Tensor(out) = &args[2] else {
            unreachable!("the output is a tensor")
        };
        assert!(
            out.to_vec::<f32>().unwrap()[256..]
                .iter()
                .all(|&v| v == 0.0),
            "{target}"
        );
    }
}

#[test]
fn a_misaligned_access_stops_the_launch() {
    // The loads claim 16-byte alignment; a tensor 4 bytes past a boundary
    // breaks the claim, as a misaligned `ld.v4` would fault. (AMD's masked
    // loads are LLVM's own; NVIDIA's are inline PTX, whose replacements a
    // mutation of the kernel's text does not reach.)
    let func = samples::vector_add(256).unwrap();
    let x =
        HostTensor::with_strides(tile_ir::DType::F32, &[512], &[1], 1, vec![0; 4 * 520]).unwrap();
    let mut args = vec![Arg::Tensor(x), tensor(2, &[512]), zeros(&[512])];
    let error = emulated::run_mutated(&func, AMD, 4, [2, 1, 1], &mut args, |t| {
        replace_in_lines(t, "load float, ptr addrspace(1)", ", align 4", ", align 16")
    })
    .unwrap_err();
    assert!(
        matches!(
            error,
            Failure::Emulator(tile_emu::EmuError::Misaligned { align: 16, .. })
        ),
        "{error}"
    );
}

#[test]
fn the_kernels_checks_come_back_in_the_status_record() {
    // An unmasked load of a partition that reaches past the tensor.
    let func = tile_ir::text::parse_function(
        "kernel @k(%x: tensor<f32, 1>, %out: tensor<f32, 1>) {
  %pid = program_id 0 : i32
  %vx = partition_view %x [64] : view<f32, [64]>
  %t = load %vx[%pid] : tile<64xf32>
  %vo = partition_view %out [64] : view<f32, [64]>
  store_masked %t, %vo[%pid]
}",
    )
    .unwrap();
    for target in [NVIDIA, AMD] {
        let mut args = vec![tensor(1, &[100]), zeros(&[128])];
        let error = emulated::run(&func, target, 2, [2, 1, 1], &mut args).unwrap_err();
        let Failure::Status(status) = error else {
            panic!("{target}: {error}")
        };
        assert_eq!(
            FaultCode::from_u32(status.code),
            Some(FaultCode::OutsideTensor)
        );
        assert_eq!((status.check, status.index[0]), (0, 1), "{target}");
    }
}
