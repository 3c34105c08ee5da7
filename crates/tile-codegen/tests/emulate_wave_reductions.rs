//! Reductions across the warps of a CDNA wave64: a wave is two of the
//! program's warps, so a row spread over them combines its two halves by a
//! 64-lane butterfly (`shfl.bfly … width 64`, `ds_bpermute` across the
//! wave) and shared memory holds one total per wave, not per warp. The
//! results are the interpreter's, bit for bit (maxima, integer sums and
//! argmaxes combine in any order exactly), on the lockstep emulator and
//! the CDNA emulation targets; targets without such waves refuse the
//! shuffle.

mod emulated;

use tile_codegen::gpu::emit_module;
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::{Program, ThreadOpKind};

/// Each program reduces row `p` of `%x` (`[rows, 2048]` f32) to its
/// maximum and the maximum's first column, and of `%n` (`[rows, 2048]`
/// i32) to its sum.
fn row_reductions() -> Function {
    let text = r#"kernel @rows(%x: tensor<f32, 2>, %n: tensor<i32, 2>, %mx: tensor<f32, 2>, %sum: tensor<i32, 2>, %at: tensor<i32, 2>) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [1, 2048] : view<f32, [1, 2048]>
  %vn = partition_view %n [1, 2048] : view<i32, [1, 2048]>
  %t = load %vx[%pid, %zero] : tile<1x2048xf32>
  %u = load %vn[%pid, %zero] : tile<1x2048xi32>
  %m = reduce max %t axis 1 keepdim : tile<1x1xf32>
  %s = reduce sum %u axis 1 keepdim : tile<1x1xi32>
  %a = arg argmax %t axis 1 keepdim : tile<1x1xi32>
  %vm = partition_view %mx [1, 1] : view<f32, [1, 1]>
  %vs = partition_view %sum [1, 1] : view<i32, [1, 1]>
  store %m, %vm[%pid, %zero]
  store %s, %vs[%pid, %zero]
  %va = partition_view %at [1, 1] : view<i32, [1, 1]>
  store %a, %va[%pid, %zero]
}"#;
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

const ROWS: usize = 3;

fn args() -> Vec<Arg> {
    let x: Vec<f32> = (0..ROWS * 2048)
        .map(|i| ((i * 37) % 1009) as f32 * 0.25 - 100.0)
        .collect();
    let n: Vec<i32> = (0..ROWS * 2048)
        .map(|i| ((i * 53) % 211) as i32 - 105)
        .collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[ROWS, 2048], x).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[ROWS, 2048], n).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[ROWS, 1])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[ROWS, 1])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[ROWS, 1])),
    ]
}

fn lowered(cores: TensorCores, warps: u32) -> Program {
    let options = LowerOptions::warps(warps).with_tensor_cores(cores);
    let program = lower(&row_reductions(), &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    program
}

/// The shuffles of `program` of width 64, and the elements of its shared
/// allocations.
fn waves_and_shared(program: &Program) -> (usize, usize) {
    let wide = program
        .ops
        .iter()
        .filter(|(_, op)| matches!(op.kind, ThreadOpKind::Shuffle { width: 64, .. }))
        .count();
    let shared = program
        .shared
        .iter()
        .filter(|(_, s)| s.aliases.is_none())
        .map(|(_, s)| s.len)
        .sum();
    (wide, shared)
}

#[test]
fn rows_over_a_wave_combine_its_halves_by_shuffles() {
    // 8 warps, 4 waves: a total per wave in shared memory, half the warps'.
    let (warp_wide, warp_shared) = waves_and_shared(&lowered(TensorCores::None, 8));
    let (wave_wide, wave_shared) = waves_and_shared(&lowered(TensorCores::Mfma, 8));
    // One for the maximum, one for the sum, two for the argmax's pairs.
    assert_eq!((warp_wide, wave_wide), (0, 4));
    assert_eq!(wave_shared * 2, warp_shared);
    // 2 warps, one wave: no shared memory at all.
    assert_eq!(waves_and_shared(&lowered(TensorCores::Mfma, 2)), (4, 0));
}

#[test]
fn wave_reductions_agree_with_the_interpreter() {
    let func = row_reductions();
    let grid = [ROWS as u32, 1, 1];
    let mut want = args();
    interp::run(&func, grid, &mut want).unwrap();
    let want = emulated::bytes(&want, 2);
    for warps in [2, 4, 8] {
        let mut got = args();
        emulate::run(&lowered(TensorCores::Mfma, warps), grid, &mut got).unwrap();
        assert!(emulated::bytes(&got, 2) == want, "lockstep, {warps} warps");
        for gfx in [Gfx::Gfx90a, Gfx::Gfx942] {
            let mut got = args();
            emulated::run(&func, Target::Amdgpu(gfx), warps, grid, &mut got)
                .unwrap_or_else(|e| panic!("{gfx:?}, {warps} warps: {e}"));
            assert!(emulated::bytes(&got, 2) == want, "{gfx:?}, {warps} warps");
        }
    }
}

#[test]
fn targets_without_wave64_refuse_a_64_lane_shuffle() {
    let program = lowered(TensorCores::Mfma, 8);
    for target in [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx1100)] {
        let error = emit_module(&program, target, &CodegenOptions::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the LLVM emitter does not support a shuffle across 64 lanes on a target whose waves have 32",
            "{target}"
        );
    }
}

/// Each program scans row `p` of `%x` (`[rows, cols]`) with `kind` into
/// `%y`.
fn row_scan(kind: &str, dtype: &str, cols: usize) -> Function {
    block_scan(kind, dtype, [1, cols])
}

/// Each program scans the `[rows, cols]` block `p` of `%x` with `kind`
/// along its rows into `%y`.
fn block_scan(kind: &str, dtype: &str, [rows, cols]: [usize; 2]) -> Function {
    let text = format!(
        "kernel @scan(%x: tensor<{dtype}, 2>, %y: tensor<{dtype}, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<{dtype}, [{rows}, {cols}]>
  %t = load_masked %vx[%pid, %zero] pad(zero) : tile<{rows}x{cols}x{dtype}>
  %s = scan {kind} %t axis 1 : tile<{rows}x{cols}x{dtype}>
  %vy = partition_view %y [{rows}, {cols}] : view<{dtype}, [{rows}, {cols}]>
  store_masked %s, %vy[%pid, %zero]
}}"
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// Scans chained through the lanes (`tile-thread/src/lower/scan_chain.rs`):
/// a row over a whole CDNA wave passes its carry by 64-lane shuffles, which
/// LLVM turns into `v_readlane` where every lane reads the same lane; on
/// every emulation target the results are the interpreter's bits.
#[test]
fn chained_scans_agree_on_every_target() {
    // Sums of values a tenth apart and far apart in magnitude round
    // differently in any other order.
    let floats = |n: usize, scale: f32| -> Arg {
        let v = (0..n)
            .map(|i| ((i * 37) % 1009) as f32 * 0.1 * scale - 50.0 * scale.sqrt())
            .collect();
        Arg::Tensor(HostTensor::from_vec(&[3, n / 3], v).unwrap())
    };
    for (kind, dtype, cols, x) in [
        ("cumsum", "f32", 256, floats(3 * 250, 1.0e3)),
        ("cumprod", "f32", 64, floats(3 * 64, 1.0e-2)),
        (
            "cumsum",
            "i32",
            512,
            emulated::small_ints(DType::I32, &[3, 500], 7),
        ),
    ] {
        let func = row_scan(kind, dtype, cols);
        let shape = match &x {
            Arg::Tensor(t) => t.shape().to_vec(),
            _ => unreachable!("x is a tensor"),
        };
        let dt: DType = dtype.parse().unwrap();
        let args = || vec![x.clone(), Arg::Tensor(HostTensor::zeros(dt, &shape))];
        emulated::agrees(&func, args, 1, [3, 1, 1]);
        let program = lower(
            &func,
            &LowerOptions::warps(2).with_tensor_cores(TensorCores::Mfma),
        )
        .unwrap();
        assert_eq!(program.shared.len(), 0, "{kind} {dtype}: {program}");
    }
}

/// Chains whose lanes along the axis are the low bits of the lane index
/// (a `[16, 128]` f32 block on 4 warps: each warp's 32 lanes across its
/// rows, as FlagGems' `cumsum_dim`; a `[32, 64]` block: 16 lanes, two rows
/// a warp) shuffle from constant lanes of segments that wide: on AMD each
/// turn reads its lane through `ds_swizzle_b32`'s bit mode, with no
/// `ds_bpermute` address in a register. On every emulation target the
/// results are the interpreter's bits.
#[test]
fn low_lane_chains_read_their_turns_lane_by_pattern() {
    for (rows, cols) in [(16, 128), (32, 64)] {
        let func = block_scan("cumsum", "f32", [rows, cols]);
        let x: Vec<f32> = (0..2 * rows * cols)
            .map(|i| ((i * 37) % 1009) as f32 * 100.0 - 5.0e4)
            .collect();
        let x = Arg::Tensor(HostTensor::from_vec(&[2 * rows, cols], x).unwrap());
        let y = || Arg::Tensor(HostTensor::zeros(DType::F32, &[2 * rows, cols]));
        emulated::agrees(&func, || vec![x.clone(), y()], 1, [2, 1, 1]);
        let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::Mfma);
        let program = lower(&func, &options).unwrap();
        assert_eq!(program.shared.len(), 0, "{program}");
        let options = CodegenOptions::default();
        let module = emit_module(&program, Target::Amdgpu(Gfx::Gfx942), &options);
        let ir = module.unwrap().llvm_ir;
        assert!(
            ir.contains("@llvm.amdgcn.ds.swizzle("),
            "{rows}x{cols}: {ir}"
        );
        assert!(
            !ir.contains("@llvm.amdgcn.ds.bpermute("),
            "{rows}x{cols}: {ir}"
        );
    }
}
