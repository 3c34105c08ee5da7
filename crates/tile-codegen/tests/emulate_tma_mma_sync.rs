//! Pipelined `mma.sync` loops whose operands the TMA copies: sm_120a (RTX
//! 50, RTX PRO), which has the TMA but neither `wgmma` nor `tcgen05`. The
//! operands land in the TMA's blocks of 128-byte rows and `ldmatrix` reads
//! them there, wider rows (B's 128 `f16` columns, A's 128 `k`) across two
//! blocks; one thread issues the boxes and every thread waits on the
//! stage's mbarrier. The lockstep emulator gives bit for bit the product
//! stepped by 16 on problems of partial tiles, the emulation target runs
//! sm_120a's module to the same bits, and `ptxas` assembles it without
//! spills.

mod emulated;

use tile_codegen::tools::Tool;
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::{samples, DType};
use tile_testgen::inputs::{blocks, tensor_of, zeros};
use tile_testgen::products::stepped;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::{Program, ThreadOpKind};

fn count(program: &Program, want: impl Fn(&ThreadOpKind) -> bool) -> usize {
    program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
}

/// A tensor argument's elements as `f32`.
fn values(arg: &tile_ir::interp::Arg) -> Vec<f32> {
    match arg {
        tile_ir::interp::Arg::Tensor(t) => {
            t.to_scalars().iter().map(|s| s.to_f64() as f32).collect()
        }
        other => panic!("not a tensor: {other:?}"),
    }
}

/// The matmul sample with `(bm, bn, bk)` tiles of `dtype` on sm_120a,
/// `warps` warps and `stages` stages, lowered with `tma`.
fn lowered(
    dtype: DType,
    (bm, bn, bk): (usize, usize, usize),
    (warps, stages): (u32, u32),
    tma: bool,
) -> (tile_ir::Function, LowerOptions, Program) {
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let target = Target::Nvptx(Sm::Sm120a);
    let lowering = LowerOptions::warps(warps)
        .with_tensor_cores(target.tensor_cores())
        .with_stages(stages)
        .with_tma(tma);
    let program = lower(&func, &lowering).unwrap();
    tile_thread::program::verify(&program).unwrap();
    (func, lowering, program)
}

#[test]
fn pipelined_mma_sync_operands_come_by_the_tma_on_sm_120a() {
    emulated::require(Tool::Ptxas);
    let target = Target::Nvptx(Sm::Sm120a);
    // The tiles, warps and stages, and the boxes of one stage: A's `bk /
    // 64` and B's `bn / 64` (128-byte rows of 16-bit elements).
    let cases = [
        (DType::F16, (128, 128, 64), 8, 3, 3),
        (DType::BF16, (64, 128, 128), 4, 2, 4),
        (DType::F16, (64, 64, 64), 4, 3, 2),
    ];
    for (dtype, tiles, warps, stages, boxes) in cases {
        let what = format!("{dtype} {tiles:?}, {warps} warps, {stages} stages");
        let (func, lowering, program) = lowered(dtype, tiles, (warps, stages), true);
        let loads = count(&program, |k| matches!(k, ThreadOpKind::TmaLoad { .. }));
        assert_eq!(loads, stages as usize * boxes, "{what}");
        let copies = count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. }));
        let mmas = count(&program, |k| matches!(k, ThreadOpKind::Mma { .. }));
        let ldmatrix = count(&program, |k| matches!(k, ThreadOpKind::LdMatrix { .. }));
        assert_eq!(copies, 0, "{what}");
        assert!(mmas > 0 && ldmatrix > 0, "{what}:\n{program}");
        let (bm, bn, bk) = tiles;
        assert_eq!(
            program.tma_maps(),
            [(0, bm as u16), (1, bk as u16)],
            "{what}"
        );

        let (m, k, n) = (2 * bm + 24, 3 * bk - 8, bn + 40);
        let args = vec![
            tensor_of(91, &[m, k], dtype),
            tensor_of(92, &[k, n], dtype),
            zeros(&[m, n]),
        ];
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let mut lockstep = args.clone();
        tile_thread::emulate::run(&program, grid, &mut lockstep)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
        let got = values(&lockstep[2]);
        assert_eq!(got, stepped(&a, &b, &c, (m, k, n), 16), "{what}");

        let module = emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut on_target = args.clone();
        let maps = program.tma_maps();
        emulated::launch_with_maps(&kernel, (grid, warps), &mut on_target, &|_, b| b, &maps)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            values(&on_target[2])
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>(),
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "{what}"
        );
        emulated::assembles(&program, target, "cp.async.bulk.tensor.2d", &what);
        emulated::assembles(&program, target, "ldmatrix.sync.aligned", &what);
    }
}

/// Without `tma`, and for a TF32 B that `mma.sync` reads element by
/// element (where the blocks' swizzle would put a warp's 4 rows on the
/// same banks), the loop keeps `cp.async` and its own swizzles.
#[test]
fn element_read_operands_keep_cp_async() {
    let tf32 = |tma| {
        let func =
            samples::matmul_with(64, 64, 32, DType::F32, tile_ir::DotPrecision::Tf32).unwrap();
        let target = Target::Nvptx(Sm::Sm120a);
        let lowering = LowerOptions::warps(4)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(3)
            .with_tma(tma);
        lower(&func, &lowering).unwrap()
    };
    let (_, _, plain) = lowered(DType::F16, (64, 64, 64), (4, 3), false);
    for (what, program) in [("f16 without tma", plain), ("tf32", tf32(true))] {
        let loads = count(&program, |k| matches!(k, ThreadOpKind::TmaLoad { .. }));
        let copies = count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. }));
        assert_eq!(loads, 0, "{what}");
        assert!(copies > 0, "{what}");
        assert!(program.tma_maps().is_empty(), "{what}");
    }
}
