//! `print` through every GPU stage, against the interpreter: the lockstep
//! emulator's records and the print area the sm_80, gfx942 and gfx1100
//! emulation targets fill give the interpreter's lines (as a set: a GPU's
//! threads write in any order); ptxas and ld.lld accept the code.
//!
//! Tiles of 8 elements over 4 warps make the layout replicate elements
//! (only the owner may print); tiles of 512 give each thread several.

mod emulated;

use emulated::TARGETS;

use tile_ir::device_print::PrintSpec;
use tile_ir::interp::{self, Arg, HostTensor, Options};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Each program prints a line of scalars, then a line per element of its
/// `block` values with their index (an `f32` and an `i32` tile) and a
/// `u8` scalar.
fn kernel(block: usize) -> Function {
    let text = format!(
        r#"kernel @show(%x: tensor<f32, 1>, %tag: u8) {{
  %pid = program_id 0 : i32
  %vx = partition_view %x [{block}] : view<f32, [{block}]>
  %t = load %vx[%pid] : tile<{block}xf32>
  %i = iota : tile<{block}xi32>
  print 0 "program {{}} tag {{}}" %pid, %tag
  print 1 "x = {{}} at {{}} (tag {{}})" %t, %i, %tag
}}"#
    );
    let func = parse_function(&text).unwrap();
    verify::verify(&func).unwrap();
    func
}

fn args(block: usize) -> Vec<Arg> {
    let x: Vec<f32> = (0..3 * block).map(|i| i as f32 * 0.5 - 3.0).collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[3 * block], x).unwrap()),
        Arg::Scalar(Scalar::U8(250)),
    ]
}

/// Records as the runtime formats them, sorted.
fn lines(func: &Function, records: &[tile_abi::device_print::PrintRecord]) -> Vec<String> {
    let mut lines: Vec<String> = records
        .iter()
        .map(|r| {
            PrintSpec::find(func, r.id)
                .expect("a print of the kernel")
                .line(r.program, r.element as usize, &r.values)
                .to_string()
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn every_stage_prints_the_interpreters_lines() {
    for (block, warps) in [(8, 4), (512, 4), (64, 1)] {
        let func = kernel(block);
        let mut want = Vec::new();
        interp::run_printing(
            &func,
            [3, 1, 1],
            &mut args(block),
            &Options::default(),
            &mut |l| want.push(l.to_string()),
        )
        .unwrap();
        assert_eq!(want.len(), 3 * (1 + block));
        assert_eq!(want[0], "program (0, 0, 0): program 0 tag 250");
        assert_eq!(
            want[2],
            "program (0, 0, 0) element [1]: x = -2.5 at 1 (tag 250)"
        );
        want.sort();
        let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
        let (records, result) = emulate::run_printing(&program, [3, 1, 1], &mut args(block));
        result.unwrap();
        assert_eq!(lines(&func, &records), want, "lockstep, block {block}");
        for target in TARGETS {
            let (records, result) =
                emulated::run_printing(&func, target, warps, [3, 1, 1], &mut args(block));
            result.unwrap_or_else(|e| panic!("{target}: {e}"));
            assert_eq!(lines(&func, &records), want, "{target}, block {block}");
        }
    }
}

#[test]
fn prints_assemble_for_every_sm_and_link_for_every_gfx() {
    let func = kernel(512);
    emulated::assembles_and_links(&func, 4);
}
