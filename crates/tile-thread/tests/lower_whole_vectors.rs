//! Gathers and scatters that address whole aligned vectors: rows of an
//! aligned tensor picked by an index tile, columns from an `iota` and an
//! offset known to be a multiple of the vector width. Each vector is one
//! access under one predicate (its first element's mask and bounds), with
//! no element-by-element condition; an offset of unknown alignment keeps
//! the per-element conditions. Both match the interpreter.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::Function;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Copies 16 rows of 32 columns from column `offset` of `table` (rows
/// named by `idx`, skipped where negative) into `out`, reading -1 for a
/// skipped row. `offset` is `constant 8` or the scalar parameter `%c0`.
fn kernel(offset: &str) -> Function {
    let text = format!(
        "kernel @rows(%table: tensor<f32, 2, aligned>, %idx: tensor<i32, 1>, %out: tensor<f32, 2, aligned>, %c0: i32) {{
  %r = iota : tile<16x1xi32>
  %every = full true : tile<16x1xbool>
  %zero = full 0 : tile<16x1xi32>
  %rows = gather %idx[%r], %every, %zero : tile<16x1xi32>
  %live = cmp ge %rows, %zero : tile<16x1xbool>
  %cols = iota : tile<1x32xi32>
  {offset}
  %c = broadcast %k to [1, 32] : tile<1x32xi32>
  %cc = add %cols, %c : tile<1x32xi32>
  %R = broadcast %rows to [16, 32] : tile<16x32xi32>
  %O = broadcast %r to [16, 32] : tile<16x32xi32>
  %C = broadcast %cc to [16, 32] : tile<16x32xi32>
  %M = broadcast %live to [16, 32] : tile<16x32xbool>
  %pad = full -1.0 : tile<16x32xf32>
  %x = gather %table[%R, %C], %M, %pad : tile<16x32xf32>
  %all = full true : tile<16x32xbool>
  scatter %out[%O, %C], %x, %all
}}"
    );
    parse_function(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// A table of 24 rows of 48 columns, the row indices (some negative) and a
/// zeroed output; `c0` is 8.
fn args() -> Vec<Arg> {
    let table: Vec<f32> = (0..24 * 48).map(|i| i as f32 * 0.25 - 7.0).collect();
    let idx: Vec<i32> = (0..16)
        .map(|i| if i % 5 == 3 { -1 } else { (i * 7 + 2) % 24 })
        .collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[24, 48], table).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[16], idx).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[16, 48], vec![0.0f32; 16 * 48]).unwrap()),
        Arg::Scalar(tile_ir::Scalar::I32(8)),
    ]
}

/// The lowered program's text for `warps`, after checking that the
/// lockstep emulator's results equal the interpreter's.
fn lowered(func: &Function, warps: u32) -> String {
    let mut expected = args();
    interp::run(func, [1, 1, 1], &mut expected).unwrap();
    let program = lower(func, &LowerOptions::warps(warps)).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let mut actual = args();
    emulate::run(&program, [1, 1, 1], &mut actual).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(actual, expected, "{} warps", warps);
    program.to_string()
}

/// The distinct registers of each `mask(..)` list on the lines accessing
/// `tensor` with `access` (`ld.global.v4`, `st.global.v4`).
fn masks_per_vector(text: &str, access: &str, tensor: &str) -> Vec<usize> {
    text.lines()
        .filter(|l| l.contains(&format!("{access} {tensor}[")))
        .map(|l| {
            let list = l.split("mask(").nth(1).unwrap_or_default();
            let list = list.split(')').next().unwrap_or_default();
            let mut regs: Vec<&str> = list.split(", ").collect();
            regs.sort_unstable();
            regs.dedup();
            regs.len()
        })
        .collect()
}

#[test]
fn aligned_rows_are_gathered_and_scattered_in_whole_vectors() {
    for warps in [1, 4] {
        let text = lowered(&kernel("%k = constant 8 : i32"), warps);
        for (access, tensor) in [("ld.global.v4", "table"), ("st.global.v4", "out")] {
            let masks = masks_per_vector(&text, access, tensor);
            assert!(!masks.is_empty(), "{access} {tensor}: no vectors\n{text}");
            assert!(
                masks.iter().all(|&n| n == 1),
                "{access} {tensor}: {masks:?}"
            );
        }
    }
}

#[test]
fn an_offset_of_unknown_alignment_keeps_the_element_conditions() {
    for warps in [1, 4] {
        let text = lowered(&kernel("%k = add %c0, %c0 : i32"), warps);
        let masks = masks_per_vector(&text, "ld.global.v4", "table");
        assert!(
            !masks.is_empty() && masks.iter().all(|&n| n == 4),
            "{masks:?}"
        );
    }
}
