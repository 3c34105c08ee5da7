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
/// `tensor<f32, 2, aligned>`s starting at column `start` (a constant 0;
/// the run-time `%c`; `%c4`, `%c` promised a multiple of 4; `%cx4`, `%c`
/// times 4) and `cols` columns wide (`%n`, `x`'s row length; `%m`; a
/// constant).
fn first_rows(start: &str, cols: &str) -> Function {
    parse_function(&format!(
        r#"kernel @first_rows(%x: tensor<f32, 2, aligned>, %out: tensor<f32, 2, aligned>, %m: i32, %c: i32) {{
  %zero = constant 0 : i32
  %n = dim %x axis 1 : i32
  %k = constant 24 : i32
  %four = constant 4 : i32
  %c4 = multiple_of 0 4 %c : i32
  %cx4 = mul %c, %four : i32
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
/// How each 4-wide access of `program` is made.
fn vectors(program: &Program) -> Vec<Vectors> {
    let text = program.to_string();
    let accesses: Vec<String> = text
        .lines()
        .filter(|l| l.contains("ld.global.v4") || l.contains("st.global.v4"))
        .map(str::to_string)
        .collect();
    accesses
        .iter()
        .map(|line| {
            let between = |open: &str, close: char| {
                let from = line.find(open).unwrap() + open.len();
                line[from..from + line[from..].find(close).unwrap()].to_string()
            };
            let (condition, masks) = (between("if(", ')'), between("mask(", ')'));
            let masks: Vec<&str> = masks.split(", ").collect();
            match (condition == masks[3], masks.iter().all(|&m| m == masks[0])) {
                (true, true) => Vectors::Whole,
                (true, false) => Vectors::Masked,
                (false, _) => Vectors::Tested,
            }
        })
        .collect()
}

/// Runs `func` and its lowering on 8×32 tensors with `m = 5` and `%c = c`:
/// `out` from each, or the failure of each.
fn first_rows_out(func: &Function, program: &Program, c: i32) -> [Result<Vec<u64>, String>; 2] {
    let (rows, cols) = (8, 32);
    let xs: Vec<f32> = (0..rows * cols).map(|i| i as f32 - 100.0).collect();
    let args = vec![
        Arg::Tensor(HostTensor::from_vec(&[rows, cols], xs).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[rows, cols], vec![7f32; rows * cols]).unwrap()),
        Arg::Scalar(tile_ir::Scalar::I32(5)),
        Arg::Scalar(tile_ir::Scalar::I32(c)),
    ];
    let (mut want, mut got) = (args.clone(), args);
    let out = |a: &[Arg]| match &a[1] {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_bits()).collect(),
        _ => unreachable!("`out` is a tensor"),
    };
    let interpreted = interp::run(func, [1, 1, 1], &mut want)
        .map(|()| out(&want))
        .map_err(|e| e.to_string());
    let emulated = tile_thread::emulate::run(program, [1, 1, 1], &mut got)
        .map(|_| out(&got))
        .map_err(|e| e.to_string());
    [interpreted, emulated]
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
    for (start, cols, want) in [
        ("%zero", "%n", Vectors::Whole),
        ("%zero", "%k", Vectors::Whole),
        ("%zero", "%m", Vectors::Masked),
        ("%c", "%n", Vectors::Tested),
    ] {
        let what = format!("offset {start}, {cols} columns");
        let func = first_rows(start, cols);
        let program = lower(&func, &LowerOptions::warps(2)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let found = vectors(&program);
        assert!(!found.is_empty(), "{what}");
        assert!(found.iter().all(|&v| v == want), "{what}: {found:?}");
        let [interpreted, emulated] = first_rows_out(&func, &program, 4);
        assert_eq!(emulated.unwrap(), interpreted.unwrap(), "{what}");
    }
}

/// A run-time column offset known to be a multiple of the vector, as a
/// product by 4 or through `multiple_of`, starts whole vectors as the
/// constant 0 does: no run-time test. The promise is checked: an offset
/// that breaks it fails as an assertion in the interpreter and on the
/// emulator alike, naming the value.
#[test]
fn a_window_at_a_multiple_of_the_vector_needs_no_contiguity_test() {
    for start in ["%c4", "%cx4"] {
        let func = first_rows(start, "%n");
        let program = lower(&func, &LowerOptions::warps(2)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let found = vectors(&program);
        assert!(!found.is_empty(), "{start}");
        assert!(
            found.iter().all(|&v| v == Vectors::Whole),
            "{start}: {found:?}"
        );
        let [interpreted, emulated] = first_rows_out(&func, &program, 4);
        assert_eq!(emulated.unwrap(), interpreted.unwrap(), "{start}");
    }
    let func = first_rows("%c4", "%n");
    let program = lower(&func, &LowerOptions::warps(2)).unwrap();
    let [interpreted, emulated] = first_rows_out(&func, &program, 6).map(Result::unwrap_err);
    assert!(
        interpreted.contains("`multiple_of`: 6 is not a multiple of 4"),
        "{interpreted}"
    );
    assert!(
        emulated.contains("assertion 0 failed") && emulated.contains("[I32(6)]"),
        "{emulated}"
    );
}
