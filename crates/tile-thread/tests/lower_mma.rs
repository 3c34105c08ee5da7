//! `dot`s of precision `tensor` on `mma.sync.m16n8k16`: the lowering's
//! choice of instruction and layout, and the lockstep emulator's results
//! against a plain-Rust product summed in the instruction's steps (bit for
//! bit) and against the interpreter's in-order chain (within the bound of
//! `DotPrecision::Tensor`).

mod tensor_check;

use tensor_check::values;
use tile_hw::mma::Fragment;
use tile_ir::interp;
use tile_ir::layout::{IntTuple, Layout};
use tile_ir::{samples, DType, DotPrecision};
use tile_testgen::inputs::{blocks, padded_rows, tensor_of, zeros};
use tile_testgen::products::{loop_case, stepped, within_tensor_bound};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::{LdMatrix, MmaKind, ThreadOpKind};

fn count_mma(program: &tile_thread::Program) -> usize {
    program
        .ops
        .iter()
        .filter(|(_, op)| matches!(op.kind, ThreadOpKind::Mma { .. }))
        .count()
}

/// An `[m, k] × [k, n]` matmul of `dtype` with `bm × bn × bk` tiles on
/// `warps` warps: `mmas` instructions per K tile, the emulator's result the
/// stepped product exactly and the interpreter's within the bound.
fn matmul(dtype: DType, (bm, bn, bk): (usize, usize, usize), warps: u32, mmas: usize) {
    matmul_in_stages(dtype, (bm, bn, bk), warps, mmas, 1);
}

/// [`matmul`] with its K loop pipelined over `stages` stages.
fn matmul_in_stages(
    dtype: DType,
    (bm, bn, bk): (usize, usize, usize),
    warps: u32,
    mmas: usize,
    stages: u32,
) {
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let options = LowerOptions::warps(warps)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(stages);
    let program = lower(&func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    assert_eq!(count_mma(&program), mmas, "{bm}x{bn}x{bk} on {warps} warps");
    let what = format!("{dtype} {bm}x{bn}x{bk}");
    tensor_check::check(&func, &program, (bm, bn, bk), dtype, [11, 12], 16, &what);
}

#[test]
fn matmul_f16_and_bf16_on_tensor_cores() {
    for dtype in [DType::F16, DType::BF16] {
        // 32×32 over 4 warps: 2×2 warps, each 1×2 blocks per k-step.
        matmul(dtype, (32, 32, 16), 4, 2);
        // 64×64×32 over 4 warps: each 2×4 blocks, two k-steps.
        matmul(dtype, (64, 64, 32), 4, 16);
        // One warp owns the whole 16×8 tile.
        matmul(dtype, (16, 8, 16), 1, 1);
        // 8 warps on 128×64: 4×2 warps, each 2×4 blocks.
        matmul(dtype, (128, 64, 16), 8, 8);
        // Three block columns for one warp: a pair of B fragments from one
        // `ldmatrix.x4.trans`, the third from an `x2.trans`.
        matmul(dtype, (16, 24, 16), 1, 3);
    }
}

/// The K loop's operand copies run 1, 2 or 3 iterations ahead: the same
/// results, from a ring of stage buffers.
#[test]
fn pipelined_k_loops_agree() {
    for stages in [2, 3, 4] {
        matmul_in_stages(DType::F16, (32, 32, 16), 4, 2, stages);
        matmul_in_stages(DType::BF16, (64, 64, 32), 4, 16, stages);
    }
}

/// Precision `tf32` on f32 operands: `mma.m16n8k8.tf32` steps, A through
/// `ldmatrix.x4` of 32-bit elements, B element by element, each operand
/// rounded to TF32 before the step (the instruction would truncate it):
/// bit for bit the product of the rounded operands stepped by 8, pipelined
/// or not; the program prints and parses back.
#[test]
fn tf32_matmuls_on_mma_sync() {
    // 32×32×16 on 4 warps: 2×2 warps, each 1×2 blocks per k-step, two
    // k-steps; 64×64×32: 2×4 blocks, four k-steps; one warp, one block.
    for ((bm, bn, bk), warps, mmas, stages) in [
        ((32, 32, 16), 4, 4, 1),
        ((64, 64, 32), 4, 32, 3),
        ((16, 8, 8), 1, 1, 2),
    ] {
        let func = samples::matmul_with(bm, bn, bk, DType::F32, DotPrecision::Tf32).unwrap();
        let options = LowerOptions::warps(warps)
            .with_tensor_cores(TensorCores::MmaSync)
            .with_stages(stages);
        let program = lower(&func, &options).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let what = format!("tf32 {bm}x{bn}x{bk} on {warps} warps, {stages} stages");
        assert_eq!(count_mma(&program), mmas, "{what}");
        let (mut ldmatrix, mut rounds) = (0, 0);
        for (_, op) in program.ops.iter() {
            match op.kind {
                ThreadOpKind::Mma { kind } => assert_eq!(kind, MmaKind::Tf32M16N8K8),
                ThreadOpKind::LdMatrix { shape, .. } => {
                    assert_eq!((shape.count, shape.trans), (4, false), "{what}");
                    ldmatrix += 1;
                }
                ThreadOpKind::Unary(tile_ir::UnaryOp::RoundTf32) => rounds += 1,
                _ => {}
            }
        }
        // Whether every operand is rounded, the stepped product below says.
        assert!(ldmatrix > 0 && rounds > 0, "{what}");
        let text = program.to_string();
        assert!(text.contains("mma.m16n8k8.tf32"), "{what}");
        let parsed = tile_thread::parse_program(&text).unwrap();
        assert_eq!(parsed.to_string(), text, "{what}");
        tensor_check::check_reading(
            &func,
            &program,
            (bm, bn, bk),
            (DType::F32, tile_ir::eval::round_tf32),
            [21, 22],
            8,
            &what,
        );
    }
}

/// Precision `tensor` on FP8 operands of one format, where the target has
/// `mma.sync`'s FP8 form: `mma.m16n8k32` steps, A through `ldmatrix.x4`
/// of 8-bit elements (16 to a row), B element by element; bit for bit the
/// product stepped by 32, pipelined or not. Without the FP8 form (sm_80's
/// `MmaSync`) the same dot runs on f16's `m16n8k16`, its operands cast
/// exactly: bit for bit the product stepped by 16.
#[test]
fn fp8_matmuls_on_mma_sync() {
    for (dtype, kind) in [
        (DType::F8E4M3, MmaKind::E4m3M16N8K32),
        (DType::F8E5M2, MmaKind::E5m2M16N8K32),
    ] {
        for ((bm, bn, bk), warps, mmas, stages) in [
            ((32, 32, 32), 4, 2, 1),
            ((64, 64, 64), 4, 16, 3),
            ((16, 8, 32), 1, 1, 2),
            ((16, 24, 32), 1, 3, 1),
        ] {
            let func = samples::matmul(bm, bn, bk, dtype).unwrap();
            let options = LowerOptions::warps(warps)
                .with_tensor_cores(TensorCores::MmaSyncFp8)
                .with_stages(stages);
            let program = lower(&func, &options).unwrap();
            tile_thread::program::verify(&program).unwrap();
            let what = format!("{dtype} {bm}x{bn}x{bk} on {warps} warps, {stages} stages");
            assert_eq!(count_mma(&program), mmas, "{what}");
            let mut ldmatrix = 0;
            for (_, op) in program.ops.iter() {
                match op.kind {
                    ThreadOpKind::Mma { kind: k } => assert_eq!(k, kind, "{what}"),
                    ThreadOpKind::LdMatrix { shape, .. } => {
                        assert_eq!((shape.count, shape.trans), (4, false), "{what}");
                        ldmatrix += 1;
                    }
                    _ => {}
                }
            }
            assert!(ldmatrix > 0, "{what}");
            let text = program.to_string();
            assert!(text.contains(&format!("mma.{}", kind.name())), "{what}");
            let parsed = tile_thread::parse_program(&text).unwrap();
            assert_eq!(parsed.to_string(), text, "{what}");
            tensor_check::check_stepped(&func, &program, (bm, bn, bk), dtype, [31, 32], 32, &what);
            // sm_80 has no FP8 instruction: the operands are cast to f16,
            // which takes twice the `k`-steps of 16.
            let sm80 = LowerOptions::warps(warps).with_tensor_cores(TensorCores::MmaSync);
            let widened = lower(&func, &sm80).unwrap();
            assert_eq!(count_mma(&widened), 2 * mmas, "{what}");
            let f16 = widened.ops.iter().all(|(_, op)| match op.kind {
                ThreadOpKind::Mma { kind: k } => k == MmaKind::F16M16N8K16,
                _ => true,
            });
            assert!(f16, "{what}");
            tensor_check::check_stepped(&func, &widened, (bm, bn, bk), dtype, [31, 32], 16, &what);
        }
    }
}

/// RDNA 4's and CDNA 4's FP8 forms (OCP formats): FP8 dots run on them as
/// they are, bit for bit the product stepped by their `K`; an FP8 dot no
/// FP8 form takes (its `K` too short) is widened to f16 instead of left a
/// chain, on these targets and on `mma.sync` alike.
#[test]
fn fp8_matmuls_on_amd_tensor_cores_and_widened_leftovers() {
    // (cores, instruction, tile, warps, instructions a warp issues): 2
    // warps on 2×2 blocks, 2 k-steps; one block, one step; 4 waves on 2×2
    // blocks of 32×32, 2 k-steps; 2 waves on 2×2 blocks of 16×16, one step.
    let cases = [
        (
            TensorCores::Wmma12,
            MmaKind::Wmma12E4m3M16N16K16,
            (32, 32, 32),
            2,
            4,
        ),
        (
            TensorCores::Wmma12,
            MmaKind::Wmma12E5m2M16N16K16,
            (16, 16, 16),
            1,
            1,
        ),
        (
            TensorCores::Mfma950,
            MmaKind::MfmaE4m3M32N32K16,
            (64, 64, 32),
            8,
            2,
        ),
        (
            TensorCores::Mfma950,
            MmaKind::MfmaE5m2M16N16K32,
            (32, 32, 32),
            4,
            2,
        ),
    ];
    for (cores, kind, (bm, bn, bk), warps, mmas) in cases {
        let dtype = kind.operand_dtype();
        let what = format!("{dtype} {bm}x{bn}x{bk} on {warps} warps, {cores:?}");
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let options = LowerOptions::warps(warps).with_tensor_cores(cores);
        let program = lower(&func, &options).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let kinds: Vec<MmaKind> = program
            .ops
            .iter()
            .filter_map(|(_, op)| match op.kind {
                ThreadOpKind::Mma { kind } => Some(kind),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, vec![kind; mmas], "{what}");
        let text = program.to_string();
        assert_eq!(tile_thread::parse_program(&text).unwrap().to_string(), text);
        let step = kind.shape().2;
        tensor_check::check_stepped(&func, &program, (bm, bn, bk), dtype, [31, 32], step, &what);
    }
    // `K = 16`: no FP8 `mma.sync` step (32), nor CDNA 4's 16×16×32 on 2
    // waves: f16's instructions, the operands cast exactly.
    for (cores, warps, widened) in [
        (TensorCores::MmaSyncFp8, 4, MmaKind::F16M16N8K16),
        (TensorCores::Mfma950, 4, MmaKind::MfmaF16M16N16K16),
    ] {
        let func = samples::matmul(32, 32, 16, DType::F8E4M3).unwrap();
        let options = LowerOptions::warps(warps).with_tensor_cores(cores);
        let program = lower(&func, &options).unwrap();
        let f16 = program.ops.iter().all(|(_, op)| match op.kind {
            ThreadOpKind::Mma { kind } => kind == widened,
            _ => true,
        });
        assert!(f16 && count_mma(&program) > 0, "{cores:?}:\n{program}");
        let what = format!("f8e4m3 32x32x16 widened on {cores:?}");
        let step = widened.shape().2;
        tensor_check::check_stepped(
            &func,
            &program,
            (32, 32, 16),
            DType::F8E4M3,
            [31, 32],
            step,
            &what,
        );
    }
}

#[test]
fn other_dots_stay_fma_chains() {
    let ieee = |dtype, tiles: (usize, usize, usize), warps: u32, cores| {
        let func = samples::matmul(tiles.0, tiles.1, tiles.2, dtype).unwrap();
        let options = LowerOptions::warps(warps).with_tensor_cores(cores);
        count_mma(&lower(&func, &options).unwrap())
    };
    // f32 dots are `ieee`; no tensor cores on the target; K not a whole step;
    // more warps than 16×8 blocks.
    assert_eq!(ieee(DType::F32, (32, 32, 16), 4, TensorCores::MmaSync), 0);
    assert_eq!(ieee(DType::F16, (32, 32, 16), 4, TensorCores::None), 0);
    assert_eq!(ieee(DType::F16, (32, 32, 8), 4, TensorCores::MmaSync), 0);
    assert_eq!(ieee(DType::F16, (16, 8, 16), 2, TensorCores::MmaSync), 0);
}

/// The fragment formulas of `tile_hw::mma` against CuTe's layouts of
/// `SM80_16x8x16_F32F16F16F32_TN` (thread, value) → column-major index:
/// `ALayout ((4,8),(2,2,2)):((32,1),(16,8,128))` into the 16×16 `A`,
/// `BLayout ((4,8),(2,2)):((16,1),(8,64))` into `B` as `N × K`,
/// `CLayout ((4,8),(2,2)):((32,1),(16,8))` into the 16×8 `C`.
#[test]
fn fragments_match_cute() {
    let layout = |shape: &[i64], stride: &[i64]| {
        Layout::new(IntTuple::flat(shape), IntTuple::flat(stride)).unwrap()
    };
    let a = layout(&[4, 8, 2, 2, 2], &[32, 1, 16, 8, 128]);
    let b = layout(&[4, 8, 2, 2], &[16, 1, 8, 64]);
    let c = layout(&[4, 8, 2, 2], &[32, 1, 16, 8]);
    for kind in [MmaKind::F16M16N8K16, MmaKind::Bf16M16N8K16] {
        for lane in 0..32 {
            for i in 0..8 {
                let (row, col) = kind.element(Fragment::A, lane, i);
                assert_eq!(a.call((lane + 32 * i) as i64) as usize, row + 16 * col);
            }
            for i in 0..4 {
                let (k, n) = kind.element(Fragment::B, lane, i);
                assert_eq!(b.call((lane + 32 * i) as i64) as usize, n + 8 * k);
                let (row, col) = kind.element(Fragment::C, lane, i);
                assert_eq!(c.call((lane + 32 * i) as i64) as usize, row + 16 * col);
            }
        }
    }
}

/// `ldmatrix`'s layout against CuTe's `SM75_U32x4_LDSM_N`: its `DstLayout
/// (32,(32,4)):(32,(1,1024))` maps (thread, bit of register j) to a bit of
/// the four row-major 8×8 matrices of 16-bit elements (1024 bits each).
#[test]
fn ldmatrix_matches_cute() {
    let dst = Layout::new(IntTuple::flat(&[32, 32, 4]), IntTuple::flat(&[32, 1, 1024])).unwrap();
    for trans in [false, true] {
        let shape = LdMatrix { count: 4, trans };
        for lane in 0..32 {
            for reg in 0..4 {
                for half in 0..2 {
                    let bit = dst.call((lane + 32 * (16 * half) + 32 * 32 * reg) as i64) as usize;
                    let (matrix, row, col) = (bit / 1024, bit % 1024 / 16 / 8, bit % 1024 / 16 % 8);
                    // `.trans` reads the same registers from the transposed matrix.
                    let want = if trans {
                        (matrix, col, row)
                    } else {
                        (matrix, row, col)
                    };
                    assert_eq!(
                        shape.element(lane, reg, half),
                        want,
                        "lane {lane} reg {reg}"
                    );
                }
            }
        }
    }
}

/// The lowering loads every operand fragment with `ldmatrix`: an x4 per
/// 16×16 block of A and an x4.trans per two 16×8 blocks of B, no element
/// loads.
#[test]
fn fragments_come_from_ldmatrix() {
    let func = samples::matmul(64, 64, 32, DType::F16).unwrap();
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(&func, &options).unwrap();
    let count = |want: fn(&ThreadOpKind) -> bool| {
        program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
    };
    // 2×2 warps, each 2×4 blocks, two k-steps.
    assert_eq!(
        count(|k| matches!(
            k,
            ThreadOpKind::LdMatrix {
                shape: LdMatrix {
                    count: 4,
                    trans: false
                },
                ..
            }
        )),
        4
    );
    assert_eq!(
        count(|k| matches!(
            k,
            ThreadOpKind::LdMatrix {
                shape: LdMatrix {
                    count: 4,
                    trans: true
                },
                ..
            }
        )),
        4
    );
    assert_eq!(count(|k| matches!(k, ThreadOpKind::LoadShared { .. })), 0);
    let text = program.to_string();
    assert!(
        text.contains("ldmatrix.x4 @s0[") && text.contains("ldmatrix.x4.trans @s1["),
        "{text}"
    );
    assert_eq!(tile_thread::parse_program(&text).unwrap().to_string(), text);

    // One warp, three block columns: a pair and a last odd one per k-step.
    let func = samples::matmul(16, 24, 16, DType::F16).unwrap();
    let program = lower(
        &func,
        &LowerOptions::warps(1).with_tensor_cores(TensorCores::MmaSync),
    )
    .unwrap();
    let shapes: Vec<(u8, bool)> = program
        .ops
        .iter()
        .filter_map(|(_, op)| match op.kind {
            ThreadOpKind::LdMatrix { shape, .. } => Some((shape.count, shape.trans)),
            _ => None,
        })
        .collect();
    assert_eq!(shapes, [(4, false), (4, true), (2, true)]);
}

/// With rows 16-byte aligned, the operands go straight from global to
/// shared memory by `cp.async` (zero-filling the parts of edge chunks
/// outside the tensor), bit for bit the stepped product; with unaligned
/// rows the same program takes its `ld.global` path.
#[test]
fn operands_are_copied_asynchronously_when_rows_are_aligned() {
    for dtype in [DType::F16, DType::BF16] {
        for (bm, bn, bk, warps) in [(32, 32, 16, 4), (64, 64, 32, 4), (16, 8, 16, 1)] {
            let func = samples::matmul(bm, bn, bk, dtype).unwrap();
            let options = LowerOptions::warps(warps).with_tensor_cores(TensorCores::MmaSync);
            let program = lower(&func, &options).unwrap();
            let copies = program
                .ops
                .iter()
                .filter(|(_, op)| matches!(op.kind, ThreadOpKind::CopyAsync { .. }))
                .count();
            // Each operand's chunks of 8 elements dealt out to the threads.
            let threads = 32 * warps as usize;
            let per_thread = |elements: usize| (elements / 8).div_ceil(threads);
            assert_eq!(
                copies,
                per_thread(bm * bk) + per_thread(bk * bn),
                "{bm}x{bn}x{bk}"
            );
            let (m, k, n) = (2 * bm + 3, 2 * bk + 5, bn + 3);
            let args = vec![
                padded_rows(21, m, k, k.next_multiple_of(8) + 8, dtype),
                padded_rows(22, k, n, n.next_multiple_of(8), dtype),
                zeros(&[m, n]),
            ];
            let grid = [blocks(m, bm), blocks(n, bn), 1];
            let mut emulated = args.clone();
            emulate::run(&program, grid, &mut emulated).unwrap();
            let mut reference = args.clone();
            interp::run(&func, grid, &mut reference).unwrap();
            let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
            let got = values(&emulated[2]);
            assert_eq!(
                got,
                stepped(&a, &b, &c, (m, k, n), 16),
                "{dtype} {bm}x{bn}x{bk}"
            );
            within_tensor_bound(&got, &values(&reference[2]), &a, &b, &c, (m, k, n)).unwrap();
        }
    }
}

/// The operands' swizzle leaves every `ldmatrix` phase conflict-free (the
/// lockstep emulator counts each phase's 8 rows as one warp access); the
/// unswizzled staging has 8 rows of one 16-byte chunk in the same banks.
/// On the 64×64×32 matmul on 4 warps: f16 through `ldmatrix` alone, TF32
/// its A through `ldmatrix` and its B element by element (its own
/// swizzle).
#[test]
fn swizzled_operands_make_ldmatrix_conflict_free() {
    let (bm, bn, bk) = (64, 64, 32);
    // The operands' dtype, the dot's precision, the instruction's `K`, and
    // how it reads an operand element.
    type Case = (DType, DotPrecision, usize, fn(f32) -> f32);
    let cases: [Case; 3] = [
        (DType::F16, DotPrecision::Tensor, 16, |x| x),
        (DType::F32, DotPrecision::Tf32, 8, tile_ir::eval::round_tf32),
        (DType::F8E4M3, DotPrecision::Tensor, 32, |x| x),
    ];
    for (dtype, precision, step, read) in cases {
        let func = samples::matmul_with(bm, bn, bk, dtype, precision).unwrap();
        let (m, k, n) = (bm, bk, bn);
        let args = vec![
            padded_rows(41, m, k, k, dtype),
            padded_rows(42, k, n, n, dtype),
            zeros(&[m, n]),
        ];
        let conflicts = |swizzle: bool| {
            let options = LowerOptions::warps(4)
                .with_tensor_cores(TensorCores::MmaSyncFp8)
                .with_swizzle_shared(swizzle);
            let program = lower(&func, &options).unwrap();
            let mut out = args.clone();
            let stats = emulate::run_with_stats(&program, [1, 1, 1], &mut out).unwrap();
            let read_all = |v: Vec<f32>| -> Vec<f32> { v.into_iter().map(read).collect() };
            let (a, b) = (read_all(values(&args[0])), read_all(values(&args[1])));
            let c = values(&args[2]);
            assert_eq!(values(&out[2]), stepped(&a, &b, &c, (m, k, n), step));
            stats.bank_conflicts
        };
        let (with, without) = (conflicts(true), conflicts(false));
        assert_eq!(with, 0, "{dtype}");
        assert!(without > 0, "{dtype}: {without}");
    }
}

/// `matmul` lowered for RDNA3's WMMA (gfx1100, wave32): one
/// `wmma16x16x16` per 16×16 block and k-step, operands from element loads
/// (no `ldmatrix`, no `cp.async` there), bit for bit the stepped product.
#[test]
fn matmul_on_wmma() {
    for dtype in [DType::F16, DType::BF16] {
        for (bm, bn, bk, warps, wmmas) in
            [(32, 32, 16, 4, 1), (64, 64, 32, 4, 8), (16, 16, 16, 1, 1)]
        {
            let func = samples::matmul(bm, bn, bk, dtype).unwrap();
            let options = LowerOptions::warps(warps).with_tensor_cores(TensorCores::Wmma);
            let program = lower(&func, &options).unwrap();
            tile_thread::program::verify(&program).unwrap();
            assert_eq!(count_mma(&program), wmmas, "{bm}x{bn}x{bk}");
            let text = program.to_string();
            assert!(
                text.contains(&format!("mma.wmma16x16x16.{dtype} ")),
                "{text}"
            );
            assert!(!text.contains("ldmatrix") && !text.contains("cp.async"));
            let (m, n, k) = (2 * bm + 3, bn + 5, 3 * bk - 7);
            let args = vec![
                tensor_of(13, &[m, k], dtype),
                tensor_of(14, &[k, n], dtype),
                zeros(&[m, n]),
            ];
            let grid = [blocks(m, bm), blocks(n, bn), 1];
            let mut emulated = args.clone();
            emulate::run(&program, grid, &mut emulated).unwrap();
            let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
            assert_eq!(
                values(&emulated[2]),
                stepped(&a, &b, &c, (m, k, n), 16),
                "{dtype}"
            );
        }
    }
}

/// The WMMA accumulator layout holds, in register `r + 8·block` of lane
/// `l`, row `2r + l/16` and column `l % 16` of its warp's block (the AMD
/// matrix instruction calculator's table for `v_wmma_f32_16x16x16_f16`,
/// wave32).
#[test]
fn wmma_accumulator_is_the_calculators_layout() {
    use tile_thread::layout_assign::DistLayout;
    let kind = MmaKind::WmmaF16M16N16K16;
    let layout = DistLayout::mma_accumulator(kind, 32, 64, [2, 2]).unwrap();
    for t in 0..128 {
        let (lane, warp) = (t % 32, t / 32);
        let (warp_m, warp_n) = (warp / 2, warp % 2);
        for v in 0..layout.registers() {
            let (r, block) = (v % 8, v / 8);
            let want = vec![
                16 * warp_m + 2 * r + lane / 16,
                16 * (warp_n + 2 * block) + lane % 16,
            ];
            assert_eq!(layout.coordinate(t, v), (want, true, true), "t{t} v{v}");
        }
    }
}

/// Random K-loop matmuls (`products::loop_case`: tiles, extents with
/// partial tiles, warps, 1 to 4 stages, aligned rows copied by `cp.async`
/// and unaligned ones element by element): the emulator's result is the
/// stepped product exactly, and no copy is touched while in flight.
#[test]
fn random_pipelined_matmuls_agree() {
    let mut pipelined = 0;
    for seed in 0..24 {
        let case = loop_case(seed);
        let options = LowerOptions::warps(case.warps)
            .with_tensor_cores(TensorCores::MmaSync)
            .with_stages(case.stages);
        let program = lower(&case.func, &options).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let waits: Vec<u8> = program
            .ops
            .iter()
            .filter_map(|(_, op)| match op.kind {
                ThreadOpKind::WaitAsync { pending } => Some(pending),
                _ => None,
            })
            .collect();
        // Tiles too small for every thread's chunk, or for the warps to
        // share, are copied in place or multiplied by FMAs.
        if case.stages > 1 && waits.contains(&(case.stages as u8 - 2)) {
            pipelined += 1;
        }
        let mut emulated = case.args.clone();
        emulate::run(&program, case.grid, &mut emulated)
            .unwrap_or_else(|e| panic!("seed {seed} ({:?}): {e}", case.tiles));
        let (m, k, n) = case.dims;
        let want = if count_mma(&program) > 0 {
            stepped(
                &case.values[0],
                &case.values[1],
                &vec![0.0; m * n],
                (m, k, n),
                16,
            )
        } else {
            // FMA chains: the interpreter's order.
            let mut reference = case.args.clone();
            interp::run(&case.func, case.grid, &mut reference).unwrap();
            values(&reference[2])
        };
        assert_eq!(values(&emulated[2]), want, "seed {seed}");
    }
    assert!(pipelined >= 10, "{pipelined} of 24 cases pipelined");
}

/// A pipeline that waits for one group too few reads a stage whose copies
/// are still in flight: the emulator says so.
#[test]
fn a_pipeline_that_waits_too_little_is_caught() {
    let func = samples::matmul(32, 32, 16, DType::F16).unwrap();
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(3);
    let mut program = lower(&func, &options).unwrap();
    let wait = program
        .ops
        .iter()
        .find(|(_, op)| op.kind == ThreadOpKind::WaitAsync { pending: 1 })
        .map(|(id, _)| id)
        .expect("the loop's wait");
    program.ops[wait].kind = ThreadOpKind::WaitAsync { pending: 2 };
    let (m, k, n) = (64, 80, 40);
    let mut args = vec![
        tensor_of(31, &[m, k], DType::F16),
        tensor_of(32, &[k, n], DType::F16),
        zeros(&[m, n]),
    ];
    let error = emulate::run(&program, [2, 2, 1], &mut args).unwrap_err();
    assert!(
        matches!(*error.fault, emulate::LockstepFault::CopyInFlight { .. }),
        "{error}"
    );
}
