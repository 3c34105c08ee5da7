//! `dot`s of precision `tensor` on Blackwell's `tcgen05.mma` (sm_100a):
//! the operands staged as for `wgmma`, one instruction per 128-row block,
//! `n` columns and `k`-step issued by thread 0 into tensor memory, and the
//! lockstep emulator modelling tensor memory (`tile_hw::tcgen05`): bit for
//! bit the product stepped by 16 and within the `tensor` bound of the
//! interpreter, with and without a software pipeline; and what the
//! emulator says of programs that break tensor memory's rules.

mod tensor_check;

use tile_ir::{samples, DType};
use tile_testgen::inputs::{tensor_of, zeros};
use tile_thread::emulate::{self, LockstepFault};
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::{parse_program, Program, ThreadOpKind};

fn count(program: &Program, want: fn(&ThreadOpKind) -> bool) -> usize {
    program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
}

fn lowered(tiles: (usize, usize, usize), dtype: DType, warps: u32, stages: u32) -> Program {
    let (bm, bn, bk) = tiles;
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let options = LowerOptions::warps(warps)
        .with_tensor_cores(TensorCores::Tcgen05)
        .with_stages(stages);
    lower(&func, &options).unwrap()
}

/// The matmul sample with `tiles` on `warps` warps and `stages` stages:
/// `mmas` instructions per K tile, checked as every tensor-core dot is.
fn matmul(dtype: DType, tiles: (usize, usize, usize), warps: u32, stages: u32, mmas: usize) {
    let (bm, bn, bk) = tiles;
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let program = lowered(tiles, dtype, warps, stages);
    let what = format!("{dtype} {bm}x{bn}x{bk} on {warps} warps, {stages} stages");
    let is_mma = |k: &ThreadOpKind| matches!(k, ThreadOpKind::Tcgen05Mma { .. });
    assert_eq!(count(&program, is_mma), mmas, "{what}");
    for other in [
        |k: &ThreadOpKind| matches!(k, ThreadOpKind::Mma { .. }),
        |k: &ThreadOpKind| matches!(k, ThreadOpKind::Wgmma { .. }),
    ] {
        assert_eq!(count(&program, other), 0, "{what}");
    }
    let text = program.to_string();
    assert_eq!(parse_program(&text).unwrap().to_string(), text);
    tensor_check::check(&func, &program, tiles, dtype, [61, 62], 16, &what);
}

#[test]
fn matmuls_run_on_tcgen05() {
    for dtype in [DType::F16, DType::BF16] {
        // One row block, two 64-column instructions, four k-steps.
        matmul(dtype, (128, 128, 64), 4, 1, 8);
        // Two warpgroups sharing the columns; two row blocks.
        matmul(dtype, (256, 64, 64), 8, 1, 8);
        // K of 32 and 16: A's rows of 64 and 32 bytes.
        matmul(dtype, (128, 64, 32), 4, 1, 2);
        matmul(dtype, (128, 64, 16), 4, 1, 1);
    }
}

#[test]
fn pipelined_matmuls_run_on_tcgen05() {
    for stages in [2, 3] {
        matmul(DType::F16, (128, 128, 64), 4, stages, 8);
        matmul(DType::BF16, (128, 64, 128), 8, stages, 8);
    }
}

/// Tiles `tcgen05.mma` does not fit (`M` of 64, `N` of 48) take `mma.sync`.
#[test]
fn other_tiles_take_mma_sync() {
    for tiles in [(64, 64, 64), (128, 48, 64)] {
        let program = lowered(tiles, DType::F16, 4, 1);
        let is_mma = |k: &ThreadOpKind| matches!(k, ThreadOpKind::Tcgen05Mma { .. });
        assert_eq!(count(&program, is_mma), 0);
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::TmemAlloc { .. })),
            0
        );
        assert!(count(&program, |k| matches!(k, ThreadOpKind::Mma { .. })) > 0);
    }
}

/// The tensor memory's lifetime in the program: one allocation at the
/// start, freed at the end, of the widest accumulator's columns.
#[test]
fn tensor_memory_is_allocated_once_and_freed() {
    let program = lowered((256, 128, 64), DType::F16, 4, 2);
    let text = program.to_string();
    assert!(text.contains("tmem.alloc 256 @s"), "{text}");
    assert!(text.contains("tmem.dealloc 256 %"), "{text}");
    let last = program.body.ops.last().unwrap();
    assert!(matches!(
        program.ops[*last].kind,
        ThreadOpKind::TmemDealloc { columns: 256 }
    ));
    // 256 columns as two row blocks of 128 columns, each thread's row
    // loaded and stored in one 128-column access.
    assert!(text.contains("tmem.load.x128 "), "{text}");
}

/// A 128×128 f16 product on 4 warps, as text, with `edit` applied.
fn edited(edit: impl Fn(&str) -> String) -> Program {
    let text = lowered((128, 128, 64), DType::F16, 4, 1).to_string();
    let changed = edit(&text);
    assert_ne!(changed, text, "the edit changes the program");
    parse_program(&changed).unwrap()
}

fn run_error(program: &Program) -> String {
    let (m, k, n) = (128, 64, 128);
    let mut args = vec![
        tensor_of(1, &[m, k], DType::F16),
        tensor_of(2, &[k, n], DType::F16),
        zeros(&[m, n]),
    ];
    let error = emulate::run(program, [1, 1, 1], &mut args).unwrap_err();
    match *error.fault {
        LockstepFault::TensorMemory(what) | LockstepFault::Mbarrier(what) => what,
        other => panic!("not a tensor-memory error: {other}"),
    }
}

/// Each line of `text` that starts (after its indent) with `prefix`,
/// dropped.
fn without(text: &str, prefix: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with(prefix))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn tensor_memory_never_freed_is_caught() {
    let program = edited(|t| without(t, "tmem.dealloc"));
    let what = run_error(&program);
    assert_eq!(
        what,
        "128 columns of tensor memory are still allocated when the block ends"
    );
}

#[test]
fn a_load_before_the_products_land_is_caught() {
    let program = edited(|t| without(t, "tcgen05.commit_wait"));
    let what = run_error(&program);
    assert!(
        what.contains("while a tcgen05.mma is still writing it"),
        "{what}"
    );
}

#[test]
fn a_product_issued_before_the_stores_are_ordered_is_caught() {
    // The barriers between the accumulator's stores and the first product.
    let program = edited(|text| {
        let lines: Vec<&str> = text.lines().collect();
        let store = lines.iter().position(|l| l.contains("tmem.store")).unwrap();
        let mma = lines
            .iter()
            .position(|l| l.contains("tcgen05.mma"))
            .unwrap();
        lines
            .iter()
            .enumerate()
            .filter(|&(i, l)| !(store..mma).contains(&i) || l.trim() != "barrier")
            .map(|(_, l)| format!("{l}\n"))
            .collect()
    });
    let what = run_error(&program);
    assert!(what.contains("with no barrier between"), "{what}");
}

/// Pipelined `tcgen05.mma` operands copied by the TMA, as `wgmma`'s are
/// (the same blocks): thread 0 issues the boxes, every thread waits on
/// the stage's mbarrier, no `cp.async` is left, and the products' own
/// mbarrier is another. On a problem of partial tiles, bit for bit the
/// product stepped by 16.
#[test]
fn pipelined_tcgen05_operands_come_by_the_tma() {
    use tile_testgen::products::stepped;
    let (bm, bn, bk) = (128, 128, 64);
    let func = samples::matmul(bm, bn, bk, DType::F16).unwrap();
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::Tcgen05)
        .with_stages(3)
        .with_tma(true);
    let program = lower(&func, &options).unwrap();
    let tma = count(&program, |k| matches!(k, ThreadOpKind::TmaLoad { .. }));
    // Each of the 3 issues copies A's one box and B's two.
    assert_eq!(tma, 9);
    assert_eq!(
        count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. })),
        0
    );
    assert_eq!(
        count(&program, |k| matches!(k, ThreadOpKind::MbarrierInit { .. })),
        4
    );
    let (m, k, n) = (2 * bm + 24, 3 * bk - 8, bn + 40);
    let args = vec![
        tensor_of(73, &[m, k], DType::F16),
        tensor_of(74, &[k, n], DType::F16),
        zeros(&[m, n]),
    ];
    let grid = [m.div_ceil(bm) as u32, n.div_ceil(bn) as u32, 1];
    let mut got = args.clone();
    emulate::run(&program, grid, &mut got).unwrap();
    let [a, b, c] = [0, 1, 2].map(|i| tensor_check::values(&args[i]));
    let want = stepped(&a, &b, &c, (m, k, n), 16);
    assert_eq!(tensor_check::values(&got[2]), want);
}

/// The K loop's accumulator stays in tensor memory: stored once before
/// the loop, loaded once after it, and the loop carries no register of
/// it (only its counter's and the pipeline's stage).
#[test]
fn the_k_loops_accumulator_stays_in_tensor_memory() {
    let program = lowered((128, 128, 64), DType::F16, 4, 3);
    let is = |want: fn(&ThreadOpKind) -> bool| count(&program, want);
    assert_eq!(is(|k| matches!(k, ThreadOpKind::TmemStore)), 1);
    assert_eq!(is(|k| matches!(k, ThreadOpKind::TmemLoad { .. })), 1);
    let has_mma = |o: &tile_thread::Op| {
        o.regions[0]
            .ops
            .iter()
            .any(|&i| matches!(program.ops[i].kind, ThreadOpKind::Tcgen05Mma { .. }))
    };
    let (_, for_op) = program
        .ops
        .iter()
        .find(|(_, op)| op.kind == ThreadOpKind::For && has_mma(op))
        .expect("the K loop");
    // Nothing of the accumulator is carried.
    let f32s = |regs: &[tile_thread::Reg]| {
        regs.iter()
            .filter(|&&r| program.dtype(r) == DType::F32)
            .count()
    };
    assert_eq!(f32s(&for_op.operands), 0);
    assert_eq!(f32s(&for_op.results), 0);
    let body = &for_op.regions[0].ops;
    let in_body = |want: fn(&ThreadOpKind) -> bool| {
        body.iter().filter(|&&o| want(&program.ops[o].kind)).count()
    };
    assert_eq!(in_body(|k| matches!(k, ThreadOpKind::TmemStore)), 0);
    assert_eq!(in_body(|k| matches!(k, ThreadOpKind::TmemLoad { .. })), 0);
    assert_eq!(in_body(|k| matches!(k, ThreadOpKind::Tcgen05Mma { .. })), 8);
}
