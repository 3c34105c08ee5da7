//! `dot`s of precision `tensor` on CDNA's MFMA (gfx90a, gfx942, gfx950;
//! wave64): the lowering's choice of instruction (32×32×8 where the tile
//! and the waves allow it, else 16×16×16; on gfx950 first CDNA 4's
//! 32×32×16 and 16×16×32), and the lockstep emulator's results
//! against a plain-Rust product summed in the instruction's steps of `K`
//! (bit for bit) and against the interpreter's in-order chain (within the
//! bound of `DotPrecision::Tensor`).

mod tensor_check;

use tile_ir::{samples, DType};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::{MmaKind, Program, ThreadOpKind};

/// The instructions of `program`'s `mma`s.
fn mmas(program: &tile_thread::Program) -> Vec<MmaKind> {
    program
        .ops
        .iter()
        .filter_map(|(_, op)| match op.kind {
            ThreadOpKind::Mma { kind } => Some(kind),
            _ => None,
        })
        .collect()
}

/// `matmul` with `bm × bn × bk` tiles on `warps` warps (`warps / 2`
/// waves) lowered for CDNA 3's MFMA: `count` instructions of shape `shape`
/// per K tile, with element loads only, bit for bit the product stepped by
/// the instruction's `K`, within the bound of the interpreter's chain.
fn matmul_on_mfma(
    dtype: DType,
    tile: (usize, usize, usize),
    warps: u32,
    expected: ((usize, usize, usize), usize),
) {
    matmul_on(TensorCores::Mfma, dtype, tile, warps, expected);
}

/// [`matmul_on_mfma`] on `cores`.
fn matmul_on(
    cores: TensorCores,
    dtype: DType,
    (bm, bn, bk): (usize, usize, usize),
    warps: u32,
    (shape, count): ((usize, usize, usize), usize),
) {
    let what = format!("{dtype} {bm}x{bn}x{bk} on {warps} warps, {cores:?}");
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let options = LowerOptions::warps(warps).with_tensor_cores(cores);
    let program = lower(&func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let kinds = mmas(&program);
    assert_eq!(kinds.len(), count, "{what}");
    assert!(
        kinds
            .iter()
            .all(|k| k.shape() == shape && k.operand_dtype() == dtype),
        "{what}: {kinds:?}"
    );
    let text = program.to_string();
    let (im, in_, ik) = shape;
    assert!(
        text.contains(&format!("mma.mfma{im}x{in_}x{ik}.{dtype} ")),
        "{text}"
    );
    assert!(!text.contains("ldmatrix") && !text.contains("cp.async"));
    assert_eq!(tile_thread::parse_program(&text).unwrap().to_string(), text);
    let run = tensor_check::check(&func, &program, (bm, bn, bk), dtype, [15, 16], ik, &what);
    // Steps of 8 told from steps of 16, and CDNA 4's from CDNA 3's.
    let other = match ik {
        8 => Some(16),
        _ if cores == TensorCores::Mfma950 => Some(ik / 2),
        _ => None,
    };
    if let Some(other) = other {
        let [a, b, c] = &run.operands;
        assert_ne!(
            run.got,
            tile_testgen::products::stepped(a, b, c, run.dims, other),
            "{what}: the inputs should tell steps of {ik} from steps of {other}"
        );
    }
}

#[test]
fn matmul_on_cdna4_mfma() {
    let cdna4 = TensorCores::Mfma950;
    for dtype in [DType::F16, DType::BF16] {
        // 2 waves on 2×2 blocks of 32×32: each wave 1×2 blocks, 2 k-steps
        // of 16.
        matmul_on(cdna4, dtype, (64, 64, 32), 4, ((32, 32, 16), 4));
        // One 32×32 block cannot feed 2 waves: 2×1 waves of 16×16 blocks,
        // each 1×2 blocks, one k-step of 32.
        matmul_on(cdna4, dtype, (32, 32, 32), 4, ((16, 16, 32), 2));
        // 48 rows: 16×16 blocks, 3×2 per wave, one k-step of 32.
        matmul_on(cdna4, dtype, (48, 32, 32), 2, ((16, 16, 32), 6));
        // `K = 8`: CDNA 3's 32×32×8 on gfx950 too.
        matmul_on(cdna4, dtype, (32, 32, 8), 2, ((32, 32, 8), 1));
    }
}

/// CDNA 3's targets never get CDNA 4's instructions.
#[test]
fn cdna3_keeps_its_own_mfma() {
    let func = samples::matmul(64, 64, 32, DType::F16).unwrap();
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::Mfma);
    let kinds = mmas(&lower(&func, &options).unwrap());
    assert!(kinds
        .iter()
        .all(|k| !k.is_cdna4() && k.shape() == (32, 32, 8)));
}

#[test]
fn matmul_on_mfma_32x32x8() {
    for dtype in [DType::F16, DType::BF16] {
        // 2 waves on 2×2 blocks of 32×32: each wave 1×2 blocks, 4 k-steps.
        matmul_on_mfma(dtype, (64, 64, 32), 4, ((32, 32, 8), 8));
        // One wave owns the whole 32×32 tile, 2 k-steps.
        matmul_on_mfma(dtype, (32, 32, 16), 2, ((32, 32, 8), 2));
        // 4 waves on 4×2 blocks: 4×1 waves, each 1×2 blocks, 2 k-steps.
        matmul_on_mfma(dtype, (128, 64, 16), 8, ((32, 32, 8), 4));
    }
}

#[test]
fn matmul_on_mfma_16x16x16() {
    for dtype in [DType::F16, DType::BF16] {
        // One 32×32 block cannot feed 2 waves: 2×1 waves of 16×16 blocks,
        // each 1×2 blocks, one k-step.
        matmul_on_mfma(dtype, (32, 32, 16), 4, ((16, 16, 16), 2));
        // 48 rows are no whole 32-row blocks: 16×16 blocks, 3×2 per wave.
        matmul_on_mfma(dtype, (48, 32, 32), 2, ((16, 16, 16), 12));
        // The smallest tile: one block, one wave.
        matmul_on_mfma(dtype, (16, 16, 16), 2, ((16, 16, 16), 1));
    }
}

/// Dots MFMA cannot take stay FMA chains: one warp is half a wave, `K = 8`
/// is no 16×16×16 step on 16-row tiles, and f32 dots are `ieee`.
#[test]
fn other_dots_stay_fma_chains_on_cdna() {
    let count = |dtype, (bm, bn, bk): (usize, usize, usize), warps: u32| {
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let options = LowerOptions::warps(warps).with_tensor_cores(TensorCores::Mfma);
        mmas(&lower(&func, &options).unwrap()).len()
    };
    assert_eq!(count(DType::F16, (32, 32, 16), 1), 0);
    assert_eq!(count(DType::F16, (16, 16, 8), 2), 0);
    assert_eq!(count(DType::F32, (32, 32, 16), 2), 0);
    // More waves than blocks.
    assert_eq!(count(DType::BF16, (16, 16, 16), 4), 0);
}

/// An MFMA is issued by whole 64-lane waves: a one-warp block (half a
/// wave) with one is rejected by the verifier and by the emulator, each
/// with a message.
#[test]
fn mfma_needs_whole_waves() {
    use tile_ir::Scalar;
    let kind = MmaKind::MfmaF16M16N16K16;
    let mut program = Program::new("k", 1);
    let mut constant = |value: Scalar, dtype: DType| {
        let id = program.create_op(ThreadOpKind::Const(value), vec![], &[dtype], vec![]);
        program.body.ops.push(id);
        program.ops[id].results[0]
    };
    let one = constant(
        tile_ir::eval::cast(Scalar::F32(1.0), DType::F16),
        DType::F16,
    );
    let zero = constant(Scalar::F32(0.0), DType::F32);
    let operands = [vec![one; 8], vec![zero; 4]].concat();
    let id = program.create_op(
        ThreadOpKind::Mma { kind },
        operands,
        &[DType::F32; 4],
        vec![],
    );
    program.body.ops.push(id);
    let error = tile_thread::program::verify(&program).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("an `mma` whose lanes do not divide the block's threads"),
        "{error}"
    );
    let error = emulate::run(&program, [1, 1, 1], &mut []).unwrap_err();
    assert!(
        error.to_string().contains("`mma` without whole warps"),
        "{error}"
    );
    program.num_warps = 2;
    tile_thread::program::verify(&program).unwrap();
    emulate::run(&program, [1, 1, 1], &mut []).unwrap();
}
