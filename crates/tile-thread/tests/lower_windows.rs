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
/// the run-time `%c`).
fn first_rows(start: &str) -> Function {
    parse_function(&format!(
        r#"kernel @first_rows(%x: tensor<f32, 2, aligned>, %out: tensor<f32, 2, aligned>, %m: i32, %c: i32) {{
  %zero = constant 0 : i32
  %n = dim %x axis 1 : i32
  %vx = partition_view %x [8, 32] offset(%zero, {start}) extent(%m, %n) : view<f32, [8, 32]>
  %vo = partition_view %out [8, 32] offset(%zero, {start}) extent(%m, %n) : view<f32, [8, 32]>
  %t = load_masked %vx[%zero, %zero] pad(zero) : tile<8x32xf32>
  %d = add %t, %t : tile<8x32xf32>
  store_masked %d, %vo[%zero, %zero]
}}"#
    ))
    .unwrap()
}

/// A window of the first rows of an aligned tensor (column offset 0) keeps
/// the promise: its vectors need no run-time test of the window's
/// alignment, as a run-time column offset does (a vector is taken where it
/// lies in the window); the rows past `m` stay untouched.
#[test]
fn a_window_from_column_zero_of_an_aligned_tensor_needs_no_contiguity_test() {
    for (start, tested) in [("%zero", false), ("%c", true)] {
        let func = first_rows(start);
        let program = lower(&func, &LowerOptions::warps(2)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let text = program.to_string();
        // The vector condition of each access: its last element's mask
        // alone (the vector lies in the window), or that and a run-time
        // test of the window's alignment.
        for line in text
            .lines()
            .filter(|l| l.contains("ld.global.v4") || l.contains("st.global.v4"))
        {
            let between = |open: &str, close: char| {
                let from = line.find(open).unwrap() + open.len();
                line[from..from + line[from..].find(close).unwrap()].to_string()
            };
            let (condition, masks) = (between("if(", ')'), between("mask(", ')'));
            let last_mask = masks.rsplit(", ").next().unwrap().to_string();
            assert_eq!(condition != last_mask, tested, "{start}: {line}");
        }
        let (rows, cols) = (8, 32);
        let xs: Vec<f32> = (0..rows * cols).map(|i| i as f32 - 100.0).collect();
        let args = vec![
            Arg::Tensor(HostTensor::from_vec(&[rows, cols], xs).unwrap()),
            Arg::Tensor(HostTensor::from_vec(&[rows, cols], vec![7f32; rows * cols]).unwrap()),
            Arg::Scalar(tile_ir::Scalar::I32(5)),
            Arg::Scalar(tile_ir::Scalar::I32(0)),
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
        assert_eq!(bits(&got[1]), bits(&want[1]), "{start}");
    }
}
