//! Edge tiles of layout views (masked views) and swizzled views through
//! every GPU stage, against the interpreter: the emulation target runs the
//! LLVM IR an sm_80, gfx942 and gfx1100 receive on every copy and the padded
//! load of `tile_testgen::edges`; an unmasked access to a partial edge tile fails
//! the kernel's bounds check and writes nothing past the edge; and ptxas
//! and ld.lld
//! accept the code of every target.

mod emulated;

use emulated::TARGETS;

use tile_abi::FaultCode;
use tile_ir::interp::{self, Arg};
use tile_testgen::edges::{all_copies, edge_copies, edge_unmasked, swizzled_copies};

fn output(args: &[Arg]) -> Vec<u32> {
    emulated::f32_bits(&args[1])
}

#[test]
fn edge_tiles_on_every_target_match_the_interpreter() {
    for case in all_copies() {
        let mut want = case.args.clone();
        interp::run(&case.func, case.grid, &mut want).unwrap();
        for target in TARGETS {
            for warps in [1, 4] {
                let mut got = case.args.clone();
                emulated::run(&case.func, target, warps, case.grid, &mut got)
                    .unwrap_or_else(|e| panic!("{}, {target}, {warps} warps: {e}", case.name));
                assert_eq!(
                    output(&got),
                    output(&want),
                    "{}, {target}, {warps} warps",
                    case.name
                );
            }
        }
    }
}

#[test]
fn an_unmasked_access_to_a_partial_edge_tile_fails_its_check() {
    let whole = edge_unmasked(1, 1);
    let mut want = whole.args.clone();
    interp::run(&whole.func, whole.grid, &mut want).unwrap();
    for target in TARGETS {
        let mut got = whole.args.clone();
        emulated::run(&whole.func, target, 1, whole.grid, &mut got)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(output(&got), output(&want), "{target}");
    }
    // The tile's extent: rows and columns in the 10×7 tensor.
    for (i, j, rows, cols) in [(0, 2, 4, 1), (2, 0, 2, 3)] {
        let case = edge_unmasked(i, j);
        for target in TARGETS {
            let mut got = case.args.clone();
            match emulated::run(&case.func, target, 1, case.grid, &mut got).unwrap_err() {
                emulated::Failure::Status(status) => assert_eq!(
                    FaultCode::from_u32(status.code),
                    Some(FaultCode::OutsideTensor),
                    "{target}, tile ({i}, {j})"
                ),
                other => panic!("{target}, tile ({i}, {j}): {other}"),
            }
            // The check is per thread: threads whose elements are all in
            // the tile may store theirs, but nothing past the edge moves.
            let past: Vec<u32> = output(&got)
                .into_iter()
                .enumerate()
                .filter(|&(k, _)| k / 3 >= rows || k % 3 >= cols)
                .map(|(_, v)| v)
                .collect();
            assert!(past.iter().all(|&v| v == 0), "{target}: {past:?}");
        }
    }
}

#[test]
fn edge_tiles_assemble_for_every_sm_and_link_for_every_gfx() {
    for case in edge_copies().into_iter().chain(swizzled_copies()) {
        emulated::assembles_and_links(&case.func, 4);
    }
    emulated::assembles_and_links(&edge_unmasked(0, 0).func, 1);
}
