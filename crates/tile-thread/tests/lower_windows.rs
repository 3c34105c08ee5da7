//! Windows of partition views in the thread-level program: a window's
//! offsets and extents are checked where the view is made (a `check.window`
//! the text form prints and parses back), and a store through a window
//! that moves with a loop's iterations is ordered by a barrier inside the
//! loop, where a store through a view of the whole tensor needs none (its
//! owner threads are the same in every iteration).

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
