//! Static bounds proofs: unmasked accesses whose partition index is proven in
//! bounds (from `dim`, `for` ranges, `while` conditions, `if` guards) carry
//! no check, partially
//! proven ones check only the other axes, and the emulator (which faults on
//! any global access outside a tensor) agrees with the interpreter on shapes
//! that leave partial edge tiles.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::Function;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Copies the full `[4, 8]` tiles of `x` into `out` with unmasked accesses:
/// program `pid` takes row tile `pid` when `pid < min(rows(x), rows(out)) / 4`
/// (`guard`), and loops over the column tiles below
/// `min(cols(x), cols(out)) / 8`.
fn full_tiles(guard: &str) -> Function {
    let column_loop = "    for %k = %zero to %col_tiles step %one {
      %t = load %vx[%pid, %k] : tile<4x8xf32>
      store %t, %vo[%pid, %k]
      yield
    }";
    tiles_in_rows(guard, column_loop)
}

/// The kernel of [`full_tiles`] with `column_loop` inside the row guard.
fn tiles_in_rows(guard: &str, column_loop: &str) -> Function {
    parse_function(&format!(
        "kernel @full_tiles(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %four = constant 4 : i32
  %eight = constant 8 : i32
  %xr = dim %x axis 0 : i32
  %or = dim %out axis 0 : i32
  %xc = dim %x axis 1 : i32
  %oc = dim %out axis 1 : i32
  %rows = min %xr, %or : i32
  %cols = min %xc, %oc : i32
  %row_tiles = div %rows, %four : i32
  %col_tiles = div %cols, %eight : i32
  %vx = partition_view %x [4, 8] : view<f32, [4, 8]>
  %vo = partition_view %out [4, 8] : view<f32, [4, 8]>
  %inside = cmp {guard} : bool
  if %inside {{
{column_loop}
    yield
  }} else {{
    yield
  }}
}}"
    ))
    .unwrap()
}

/// As [`full_tiles`] with the column loop a `while` over a carried `%kc`
/// whose condition is `cond` and whose body steps it by `step` (`add` or
/// `sub` 1).
fn full_tiles_while(cond: &str, step: &str) -> Function {
    let column_loop = format!(
        "    %kend = while iter(%kc = %zero) : i32 {{
      %go = cmp {cond} : bool
      yield %go
    }} do(%kb) {{
      %t = load %vx[%pid, %kb] : tile<4x8xf32>
      store %t, %vo[%pid, %kb]
      %kn = {step} %kb, %one : i32
      yield %kn
    }}"
    );
    tiles_in_rows("lt %pid, %row_tiles", &column_loop)
}

fn args(rows: usize, cols: usize) -> Vec<Arg> {
    let x: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[rows, cols], x).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[rows, cols], vec![-1.0f32; rows * cols]).unwrap()),
    ]
}

/// Lowers `func` with `warps` warps and checks the emulator against the
/// interpreter on `[rows, cols]` tensors over `programs` programs.
fn agrees(func: &Function, warps: u32, rows: usize, cols: usize, programs: u32) -> String {
    let program = lower(func, &LowerOptions::warps(warps)).unwrap();
    let mut expected = args(rows, cols);
    interp::run(func, [programs, 1, 1], &mut expected).unwrap();
    let mut actual = args(rows, cols);
    emulate::run(&program, [programs, 1, 1], &mut actual)
        .unwrap_or_else(|e| panic!("{rows}x{cols}, {warps} warps: {e}"));
    assert_eq!(actual, expected, "{rows}x{cols}, {warps} warps");
    program.to_string()
}

#[test]
fn accesses_guarded_by_the_extents_are_proven_and_carry_no_check() {
    let func = full_tiles("lt %pid, %row_tiles");
    // More programs than row tiles and partial edge tiles on both axes: the
    // guards skip them, so every access that runs lies inside.
    for (rows, cols, warps) in [(10, 21, 1), (13, 16, 2), (4, 8, 1), (3, 7, 1)] {
        let text = agrees(&func, warps, rows, cols, 5);
        assert!(!text.contains("check.bounds"), "{text}");
    }
    let text = agrees(&func, 1, 10, 21, 5);
    insta::assert_snapshot!("proven_full_tiles", text);
}

#[test]
fn a_while_condition_proves_the_body_its_guards() {
    let func = full_tiles_while("lt %kc, %col_tiles", "add");
    for (rows, cols, warps) in [(10, 21, 1), (13, 16, 2), (3, 7, 1)] {
        let text = agrees(&func, warps, rows, cols, 5);
        assert!(text.contains("while iter("), "{text}");
        assert!(!text.contains("check.bounds"), "{text}");
    }
    insta::assert_snapshot!("proven_while_tiles", agrees(&func, 1, 10, 21, 5));
    // `kc ≤ col_tiles` admits one column tile too many, and a counter
    // that steps down does not keep its initial lower bound (the induction
    // fails): the columns stay checked.
    for (cond, step) in [("le %kc, %col_tiles", "add"), ("lt %kc, %col_tiles", "sub")] {
        let func = full_tiles_while(cond, step);
        let text = lower(&func, &LowerOptions::warps(1)).unwrap().to_string();
        assert!(
            text.contains("// bounds: axes [0] proven, [1] checked"),
            "{cond}, {step}: {text}"
        );
    }
}

#[test]
fn an_unguarded_axis_keeps_its_check_and_the_proven_one_drops_it() {
    // `pid ≥ 0` is no guard: the row axis stays checked, the columns proven.
    let func = full_tiles("ge %pid, %zero");
    let text = agrees(&func, 1, 12, 21, 3);
    assert_eq!(text.matches("check.bounds").count(), 2, "{text}");
    assert!(
        text.contains("// bounds: axes [1] proven, [0] checked"),
        "{text}"
    );
    // A fourth program is past the rows: its check fires, nothing is stored.
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    let mut actual = args(12, 21);
    let err = emulate::run(&program, [4, 1, 1], &mut actual).unwrap_err();
    assert!(
        err.fault
            .to_string()
            .contains(": partition index [3, 0] reaches outside"),
        "{err}"
    );
}

#[test]
fn a_guard_that_proves_too_little_proves_nothing() {
    // `pid ≤ row_tiles` admits one program past the last full tile.
    let func = full_tiles("le %pid, %row_tiles");
    let text = agrees(&func, 1, 12, 16, 3);
    assert!(
        text.contains("// bounds: axes [1] proven, [0] checked"),
        "{text}"
    );
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    let err = emulate::run(&program, [4, 1, 1], &mut args(12, 16)).unwrap_err();
    assert!(
        err.fault
            .to_string()
            .contains(": partition index [3, 0] reaches outside"),
        "{err}"
    );
}

#[test]
fn a_loop_to_one_tile_past_the_extent_is_not_proven() {
    // `for k < cols / 8 + 1` reaches one tile too far on the columns.
    let text = parse_function(
        "kernel @past(%x: tensor<f32, 1>) {
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %eight = constant 8 : i32
  %n = dim %x axis 0 : i32
  %tiles = div %n, %eight : i32
  %end = add %tiles, %one : i32
  %v = partition_view %x [8] : view<f32, [8]>
  for %k = %zero to %end step %one {
    %t = load %v[%k] : tile<8xf32>
    store %t, %v[%k]
    yield
  }
}",
    )
    .map(|f| lower(&f, &LowerOptions::warps(1)).unwrap().to_string())
    .unwrap();
    assert_eq!(text.matches("check.bounds").count(), 2, "{text}");
    assert!(!text.contains("proven"), "{text}");
}

#[test]
fn the_unsafe_mode_keeps_proofs_and_notes_the_unchecked_axes() {
    let func = full_tiles("ge %pid, %zero");
    // SAFETY: the program is only printed, never launched.
    let options = unsafe { LowerOptions::warps(1).without_bounds_checks() };
    let text = lower(&func, &options).unwrap().to_string();
    assert!(!text.contains("check.bounds"), "{text}");
    assert!(
        text.contains("// bounds: axes [1] proven, [0] unchecked (unsafe)"),
        "{text}"
    );
}
