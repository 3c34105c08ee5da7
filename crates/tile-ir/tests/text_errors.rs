//! Parse errors, each pinned with its exact location and message.

use tile_ir::text::parse_function;

/// A kernel with parameters `%x: tensor<f32, 2>`, `%n: i32`, `%c: bool`
/// around `body` (which starts on line 2).
fn kernel(body: &str) -> String {
    format!("kernel @k(%x: tensor<f32, 2>, %n: i32, %c: bool) {{\n{body}\n}}")
}

/// The error message of parsing `src`, as `line:col: message`.
fn error(src: &str) -> String {
    match parse_function(src) {
        Ok(func) => panic!("parsed without error:\n{func}"),
        Err(e) => e.to_string(),
    }
}

#[track_caller]
fn check(body: &str, expected: &str) {
    assert_eq!(error(&kernel(body)), expected, "in:\n{body}");
}

#[test]
fn undefined_value() {
    check(
        "  %0 = add %n, %m : i32",
        "2:16: use of undefined value `%m`",
    );
}

#[test]
fn redefinition() {
    check(
        "  %0 = constant 1 : i32\n  %0 = constant 2 : i32",
        "3:3: redefinition of `%0` (first defined at 2:3)",
    );
}

#[test]
fn use_after_region() {
    check(
        "  %0 = constant 0 : i32\n  for %1 = %0 to %n step %0 {\n    %2 = add %1, %1 : i32\n    yield\n  }\n  %3 = add %2, %2 : i32",
        "7:12: `%2` is not visible here: it is defined at 4:5 inside a region that has ended",
    );
}

#[test]
fn induction_variable_after_loop() {
    check(
        "  for %1 = %n to %n step %n {\n    yield\n  }\n  %2 = add %1, %1 : i32",
        "5:12: `%1` is not visible here: it is defined at 2:7 inside a region that has ended",
    );
}

#[test]
fn use_before_definition() {
    check(
        "  %0 = add %1, %n : i32\n  %1 = constant 2 : i32",
        "2:12: use of undefined value `%1`",
    );
}

#[test]
fn result_used_by_its_own_op() {
    check(
        "  %0 = add %0, %n : i32",
        "2:12: use of undefined value `%0`",
    );
}

#[test]
fn bad_tile_type() {
    check(
        "  %0 = constant 1 : tile<4x8>",
        "2:29: expected `x` after a tile extent, found `>`",
    );
}

#[test]
fn unknown_type() {
    check("  %0 = constant 1 : int", "2:21: unknown type `int`");
}

#[test]
fn unknown_op() {
    check("  %0 = frobnicate %n : i32", "2:8: unknown op `frobnicate`");
}

#[test]
fn unknown_dtype() {
    check(
        "  %0 = cast %n to f31 : i32",
        "2:19: unknown dtype `f31`; expected one of bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2, f4e2m1, f6e2m3, f6e3m2, f8e8m0",
    );
}

#[test]
fn constant_out_of_range() {
    check(
        "  %0 = constant 300 : i8",
        "2:17: constant 300 is out of range for i8",
    );
}

#[test]
fn negative_unsigned() {
    check(
        "  %0 = constant -1 : u8",
        "2:17: constant -1 is out of range for u8",
    );
}

#[test]
fn float_literal_for_integer() {
    check(
        "  %0 = constant 1.5 : i32",
        "2:17: expected an integer constant for i32, found `1.5`",
    );
}

#[test]
fn integer_literal_for_bool() {
    check(
        "  %0 = constant 1 : bool",
        "2:17: expected `true` or `false` for a bool constant, found `1`",
    );
}

#[test]
fn float_overflow() {
    check(
        "  %0 = constant 1e39 : f32",
        "2:17: constant 1e39 is out of range for f32",
    );
}

#[test]
fn no_infinity_in_e4m3() {
    check(
        "  %0 = full inf : tile<2xf8e4m3>",
        "2:13: f8e4m3 has no infinity",
    );
}

#[test]
fn negative_nan() {
    check(
        "  %0 = constant -nan : f32",
        "2:18: expected a number or `inf` after `-`, found `nan`",
    );
}

#[test]
fn missing_colon() {
    check(
        "  %0 = add %n, %n",
        "2:18: expected `:` and the result types, found end of line",
    );
}

#[test]
fn more_names_than_types() {
    check(
        "  %0, %1 = add %n, %n : i32",
        "2:23: 2 result names but 1 result type",
    );
}

#[test]
fn types_without_names() {
    check(
        "  %0 = partition_view %x [4] : view<f32, [4]>\n  store %0, %0[%n] : f32",
        "3:20: 0 result names but 1 result type",
    );
}

#[test]
fn bad_slice() {
    check(
        "  %0 = full 0.0 : tile<4xf32>\n  %1 = slice %0 [0:4] : tile<4xf32>",
        "3:21: expected `:` and the step after the stop of a slice, found `]`",
    );
}

#[test]
fn bad_index_list() {
    check(
        "  %0 = partition_view %x [4] : view<f32, [4]>\n  %1 = load %0[%n : tile<4xf32>",
        "3:19: expected `,` or `]` after an index, found `:`",
    );
}

#[test]
fn full_needs_a_tile() {
    check(
        "  %0 = full 1.0 : f32",
        "2:8: `full` takes its shape from its result type, which must be a tile, found `f32`",
    );
}

#[test]
fn constant_needs_one_type() {
    check(
        "  constant 1",
        "2:3: `constant` needs one result type to take its attributes from, found 0",
    );
}

#[test]
fn unknown_reduction() {
    check(
        "  %0 = full 0.0 : tile<4xf32>\n  %1 = reduce mean %0 axis 0 : f32",
        "3:15: expected a reduction (`sum`, `prod`, `max`, `min`), found `mean`",
    );
}

#[test]
fn two_ops_on_a_line() {
    check(
        "  %0 = constant 1 : i32 %1 = constant 2 : i32",
        "2:25: expected end of line, found `%1`",
    );
}

#[test]
fn for_carries_fewer_values_than_types() {
    check(
        "  %0 = for %1 = %n to %n step %n : f32 {\n    yield\n  }",
        "2:8: `for` carries 0 values but has 1 result type",
    );
}

#[test]
fn if_without_else() {
    check(
        "  if %c {\n    yield\n  }",
        "4:4: expected `else` after the then-region of `if`, found end of line",
    );
}

#[test]
fn unexpected_character() {
    check(
        "  %0 = constant 1 : i32 $",
        "2:25: unexpected character `$`",
    );
}

#[test]
fn grid_axis_too_large() {
    check(
        "  %0 = program_id 256 : i32",
        "2:19: grid axis 256 is out of range",
    );
}

#[test]
fn unterminated_region() {
    let src = "kernel @k(%n: i32) {\n  for %0 = %n to %n step %n {\n    yield\n";
    assert_eq!(
        error(src),
        "4:1: expected `}` to close the region opened at 2:29, found end of input"
    );
}

#[test]
fn unterminated_kernel() {
    assert_eq!(
        error("kernel @k(%n: i32) {\n  yield\n"),
        "3:1: expected `}` to close the region opened at 1:20, found end of input"
    );
}

#[test]
fn parameter_names_start_with_a_letter() {
    assert_eq!(
        error("kernel @k(%0: i32) {\n}"),
        "1:11: parameter name `%0` must start with a letter or `_`"
    );
}

#[test]
fn parameter_redefinition() {
    assert_eq!(
        error("kernel @k(%x: i32, %x: f32) {\n}"),
        "1:20: redefinition of `%x` (first defined at 1:11)"
    );
}

#[test]
fn missing_kernel_keyword() {
    assert_eq!(
        error("// nothing\nfunc @k() {\n}"),
        "2:1: expected `kernel`, found `func`"
    );
    assert_eq!(error(""), "1:1: expected `kernel`, found end of input");
}

#[test]
fn text_after_the_kernel() {
    assert_eq!(
        error("kernel @k() {\n}\n}"),
        "3:1: expected end of input after the kernel, found `}`"
    );
}

#[test]
fn op_after_open_brace_on_one_line() {
    assert_eq!(
        error("kernel @k(%c: bool) {\n  if %c { yield\n  } else {\n    yield\n  }\n}"),
        "2:11: expected end of line after `{`, found `yield`"
    );
}

#[test]
fn nesting_is_bounded() {
    let depth = 100;
    let mut src = String::from("kernel @k(%c: bool) {\n");
    for _ in 0..depth {
        src.push_str("if %c {\n");
    }
    let message = error(&src);
    assert!(
        message.ends_with("regions nest more than 64 levels deep"),
        "{message}"
    );
}

#[test]
fn list_without_bracket() {
    check(
        "  %0 = full 0.0 : tile<4x8xf32>\n  %1 = permute %0 1, 0 : tile<8x4xf32>",
        "3:19: expected `[` to start a list of axes, found `1`",
    );
}

#[test]
fn load_without_indices() {
    check(
        "  %0 = partition_view %x [4] : view<f32, [4]>\n  %1 = load %0 : tile<4xf32>",
        "3:16: expected `[` to start a list of indices, found `:`",
    );
}

#[test]
fn while_carries_fewer_values_than_types() {
    check(
        "  %0 = while : f32 {\n    yield\n  } do {\n    yield\n  }",
        "2:8: `while` carries 0 values but has 1 result type",
    );
}

#[test]
fn while_needs_do_before_its_body() {
    check(
        "  %0 = while iter(%1 = %n) : i32 {\n    %2 = constant true : bool\n    yield %2\n  } {\n    yield %1\n  }",
        "5:5: expected `do` after the condition of `while`, found `{`",
    );
}

#[test]
fn while_body_names_as_many_values_as_it_carries() {
    check(
        "  %0 = while iter(%1 = %n) : i32 {\n    %2 = constant true : bool\n    yield %2\n  } do {\n    yield %n\n  }",
        "2:8: the body of `while` takes 0 values but the loop carries 1 value",
    );
}

#[test]
fn unknown_tensor_promise() {
    assert_eq!(
        error("kernel @k(%x: tensor<f32, 2, packed>) {\n}"),
        "1:30: expected `aligned` or `>` after the tensor's rank, found `packed`"
    );
}
