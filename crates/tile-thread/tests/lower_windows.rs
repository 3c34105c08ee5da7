//! Windows of partition views in the thread-level program: a window's
//! offsets and extents are checked where the view is made (a `check.window`
//! the text form prints and parses back), and a store through a window
//! that moves with a loop's iterations is ordered by a barrier inside the
//! loop, where a store through a view of the whole tensor needs none (its
//! owner threads are the same in every iteration).

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::Function;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::{parse_program, CheckKind, Op, Program, ThreadOpKind};

/// Rows `k .. k + 4` of `out` written with `k + 1` for `k` in `0..3`,
/// through a window at row `k` (`window`) or partition `k` of the whole
/// tensor.
fn rows_rewritten(window: bool) -> Function {
    let (view, index) = if window {
        (
            "%v = partition_view %out [4, 32] offset(%k, %zero) : view<f32, [4, 32]>",
            "%zero, %zero",
        )
    } else {
        (
            "%v = partition_view %out [4, 32] : view<f32, [4, 32]>",
            "%k, %zero",
        )
    };
    parse_function(&format!(
        r#"kernel @rows(%out: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %three = constant 3 : i32
  for %k = %zero to %three step %one {{
    {view}
    %kp = add %k, %one : i32
    %kf = cast %kp to f32 : f32
    %t = broadcast %kf to [4, 32] : tile<4x32xf32>
    store_masked %t, %v[{index}]
    yield
  }}
}}"#
    ))
    .unwrap()
}

/// Whether `ops` (recursively) hold an op `wanted` accepts.
fn holds(
    program: &Program,
    ops: &[tile_thread::program::OpId],
    wanted: &dyn Fn(&Op) -> bool,
) -> bool {
    ops.iter().any(|&id| {
        let op = &program.ops[id];
        wanted(op) || op.regions.iter().any(|r| holds(program, &r.ops, wanted))
    })
}

/// The body of the program's (only) `for` loop.
fn loop_body(program: &Program) -> Vec<tile_thread::program::OpId> {
    let id = program
        .body
        .ops
        .iter()
        .copied()
        .find(|&id| matches!(program.ops[id].kind, ThreadOpKind::For))
        .expect("the loop");
    program.ops[id].regions[0].ops.clone()
}

#[test]
fn a_store_through_a_moving_window_is_ordered_in_its_loop() {
    let barrier = |op: &Op| matches!(op.kind, ThreadOpKind::Barrier);
    for (window, needs) in [(true, true), (false, false)] {
        let program = lower(&rows_rewritten(window), &LowerOptions::warps(2)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        assert_eq!(
            holds(&program, &loop_body(&program), &barrier),
            needs,
            "window: {window}\n{program}"
        );
    }
}

#[test]
fn a_window_is_checked_where_it_is_made_and_its_program_round_trips() {
    let program = lower(&rows_rewritten(true), &LowerOptions::warps(2)).unwrap();
    let window_check = |op: &Op| {
        matches!(
            op.kind,
            ThreadOpKind::Check {
                kind: CheckKind::Window,
                ..
            }
        )
    };
    assert!(
        holds(&program, &loop_body(&program), &window_check),
        "{program}"
    );
    let text = program.to_string();
    assert!(text.contains("check.window"), "{text}");
    assert_eq!(parse_program(&text).unwrap().to_string(), text);
    // Without bounds checks there is none.
    // SAFETY: the program is inspected, never launched.
    let options = unsafe { LowerOptions::warps(2).without_bounds_checks() };
    let unchecked = lower(&rows_rewritten(true), &options).unwrap();
    assert!(!holds(&unchecked, &unchecked.body.ops, &window_check));
}

/// `out[..m] = 2 · x[..m]` for the first `m` rows, through windows of
/// `tensor<f32, 2, aligned>`s starting at column `start` (a constant 0, or
/// the run-time `%c`) and `cols` columns wide (`%n`, `x`'s row length;
/// `%m`; a constant).
fn first_rows(start: &str, cols: &str) -> Function {
    parse_function(&format!(
        r#"kernel @first_rows(%x: tensor<f32, 2, aligned>, %out: tensor<f32, 2, aligned>, %m: i32, %c: i32) {{
  %zero = constant 0 : i32
  %n = dim %x axis 1 : i32
  %k = constant 24 : i32
  %vx = partition_view %x [8, 32] offset(%zero, {start}) extent(%m, {cols}) : view<f32, [8, 32]>
  %vo = partition_view %out [8, 32] offset(%zero, {start}) extent(%m, {cols}) : view<f32, [8, 32]>
  %t = load_masked %vx[%zero, %zero] pad(zero) : tile<8x32xf32>
  %d = add %t, %t : tile<8x32xf32>
  store_masked %d, %vo[%zero, %zero]
}}"#
    ))
    .unwrap()
}

/// How a window's 4-wide accesses are made.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Vectors {
    /// Whole vectors, as an aligned tensor's: one mask for all 4 elements,
    /// which is the vector condition (the element-by-element path is never
    /// taken).
    Whole,
    /// A vector where its last element's mask holds, else element by
    /// element (the window's alignment known, its extent not).
    Masked,
    /// A vector where the mask and a run-time test of the window's
    /// alignment hold.
    Tested,
}

/// A window of the first rows of an aligned tensor (column offset 0) keeps
/// the promise: its vectors need no run-time test of the window's
/// alignment, as a run-time column offset does; where its rows are also
/// whole vectors long (the row length of an aligned tensor, or a constant
/// multiple of 4), a vector lies wholly inside the window or wholly outside
/// and is accessed as an aligned tensor's; the rows past `m` and the
/// columns past the window stay untouched.
#[test]
fn a_window_from_column_zero_of_an_aligned_tensor_needs_no_contiguity_test() {
    for (start, cols, vectors) in [
        ("%zero", "%n", Vectors::Whole),
        ("%zero", "%k", Vectors::Whole),
        ("%zero", "%m", Vectors::Masked),
        ("%c", "%n", Vectors::Tested),
    ] {
        let what = format!("offset {start}, {cols} columns");
        let func = first_rows(start, cols);
        let program = lower(&func, &LowerOptions::warps(2)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let text = program.to_string();
        let accesses: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("ld.global.v4") || l.contains("st.global.v4"))
            .collect();
        assert!(!accesses.is_empty(), "{what}");
        for line in accesses {
            let between = |open: &str, close: char| {
                let from = line.find(open).unwrap() + open.len();
                line[from..from + line[from..].find(close).unwrap()].to_string()
            };
            let (condition, masks) = (between("if(", ')'), between("mask(", ')'));
            let masks: Vec<&str> = masks.split(", ").collect();
            let found = match (condition == masks[3], masks.iter().all(|&m| m == masks[0])) {
                (true, true) => Vectors::Whole,
                (true, false) => Vectors::Masked,
                (false, _) => Vectors::Tested,
            };
            assert_eq!(found, vectors, "{what}: {line}");
        }
        let (rows, cols) = (8, 32);
        let xs: Vec<f32> = (0..rows * cols).map(|i| i as f32 - 100.0).collect();
        let args = vec![
            Arg::Tensor(HostTensor::from_vec(&[rows, cols], xs).unwrap()),
            Arg::Tensor(HostTensor::from_vec(&[rows, cols], vec![7f32; rows * cols]).unwrap()),
            Arg::Scalar(tile_ir::Scalar::I32(5)),
            Arg::Scalar(tile_ir::Scalar::I32(if start == "%c" { 4 } else { 0 })),
        ];
        let (mut want, mut got) = (args.clone(), args);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        tile_thread::emulate::run(&program, [1, 1, 1], &mut got).unwrap();
        let bits = |a: &Arg| match a {
            Arg::Tensor(t) => t
                .to_scalars()
                .iter()
                .map(|s| s.to_bits())
                .collect::<Vec<_>>(),
            Arg::Scalar(s) => vec![s.to_bits()],
        };
        assert_eq!(bits(&got[1]), bits(&want[1]), "{what}");
    }
}
