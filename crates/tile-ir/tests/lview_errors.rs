//! Broken typing rules, bad layout text and out-of-bounds accesses of layout
//! views, each with its message pinned.

mod lview_support;
use lview_support::*;
use tile_ir::text::parse_function;
use tile_ir::verify;

/// A kernel over `%t: tensor<f32, 1>`, `%n: i32`, `%f: f32` with a tile
/// `%x: tile<4x4xf32>` and a row-major 4×4 view `%v`, then `line`.
fn kernel(line: &str) -> String {
    format!(
        "kernel @k(%t: tensor<f32, 1>, %n: i32, %f: f32, %u: tensor<i32, 1>) {{
  %x = full 0.0 : tile<4x4xf32>
  %v = layout_view %t <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  {line}
}}"
    )
}

/// The verifier's message for `kernel(line)`, from the op on.
fn rule_error(line: &str) -> String {
    let func = parse_function(&kernel(line)).unwrap();
    let message = verify::verify(&func).unwrap_err().to_string();
    message
        .split_once("`: ")
        .map_or(message.clone(), |(_, m)| m.to_string())
}

/// The parser's message for `kernel(line)`.
fn parse_error(line: &str) -> String {
    parse_function(&kernel(line)).unwrap_err().to_string()
}

/// `(3,(2,2)):(8,(1,4))` as `%w`, then `line`.
fn hierarchical(line: &str) -> String {
    format!("%w = layout_view %t <(3,(2,2)):(8,(1,4))> : lview<f32, (3,(2,2)):(8,(1,4))>\n  {line}")
}

#[test]
fn every_typing_rule_broken_once() {
    let cases: &[(&str, &str)] = &[
        ("%r = layout_view %n <4:1> : lview<f32, 4:1>", "layout_view takes one tensor operand, found i32"),
        ("%r = layout_view %t <(2048,1024):(1,2048)> : lview<f32, (2048,1024):(1,2048)>", "a tile holds at most 1048576 elements, [2048, 1024] holds more"),
        ("%r = layout_view %t <():()> : lview<f32, ():()>", "a layout view needs at least one mode, found ():()"),
        ("%r = lview_tile %v [0, 2] [%n, %n] : lview<f32, (1,2):(4,1)>", "mode 0 of (4,4):(4,1) has size 4, which the extent 0 does not divide"),
        (&hierarchical("%r = lview_tile %w [2, 3] [%n, %n] : lview<f32, (2,3):(8,1), masked>"), "mode 1 of (3,(2,2)):(8,(1,4)) is (2,2):(1,4), which the extent 3 does not divide: an edge tile needs a mode of one stride"),
        ("%r = lview_tile %v [2, 2] [%n] : lview<f32, (2,2):(4,1)>", "lview_tile needs 2 index operand(s) after the view, found 1"),
        ("%r = lview_tile %v [2, 2] [%n, %f] : lview<f32, (2,2):(4,1)>", "index operand 1 must be an integer scalar, found f32"),
        ("%r = lview_split %v axis 2 parts 2 [%n] : lview<f32, (2,4):(4,1)>", "axis 2 is out of range for the 2 mode(s) of (4,4):(4,1)"),
        ("%r = lview_split %v axis 0 parts 3 [%n] : lview<f32, (2,4):(4,1)>", "mode 0 of (4,4):(4,1) has size 4, which 3 parts do not divide"),
        ("%r = lview_vectorize %v [2] : lview<f32, (2,4):(4,1)>", "1 extent(s) for the 2 mode(s) of (4,4):(4,1)"),
        ("%r = lview_slice %v [1:5, 0:4] : lview<f32, (4,4):(4,1)>", "range 1:5 of mode 0 (size 4) must satisfy start < stop <= size"),
        (&hierarchical("%r = lview_slice %w [0:3, 1:3] : lview<f32, (3,2):(8,1)>"), "mode 1 of (3,(2,2)):(8,(1,4)) is (2,2):(1,4), which is not one stride: only its whole range 0:4 is one layout"),
        ("%r = lview_transpose %v [1, 1] : lview<f32, (4,4):(4,1)>", "[1, 1] is not a permutation of the 2 mode(s) of (4,4):(4,1)"),
        ("%r = lview_reshape %v [3, 5] : lview<f32, (4,4):(4,1)>", "reshape keeps the number of elements: (4,4):(4,1) has 16, [3, 5] has 15"),
        (&hierarchical("%r = lview_reshape %w [4, 3] : lview<f32, (4,3):(3,1)>"), "(3,(2,2)):(8,(1,4)) read in row-major order as [4, 3] is not one layout: composition: stride divisibility condition fails: ((2,2),3):((1,4),8) ∘ (4,3):(3,1): stride 3 is neither a divisor nor a multiple of extent 2"),
        ("%r = lview_compose %v <(4,3):(3,1)> : lview<f32, (4,4):(4,1)>", "composition: stride divisibility condition fails: (4,4):(4,1) ∘ (4,3):(3,1): stride 3 is neither a divisor nor a multiple of extent 4"),
        ("%r = lview_coalesce %x : lview<f32, (4,4):(4,1)>", "expected a layout view operand, found tile<4x4xf32>"),
        ("%r = lview_distribute %v <8:1> %n : lview<f32, (4,4):(4,1)>", "the thread layout 8:1 has 1 mode(s), the view (4,4):(4,1) has 2"),
        ("%r = lview_distribute %v <((2,2),2):((1,2),4)> %n : lview<f32, (4,4):(4,1)>", "mode 0 of the thread layout ((2,2),2):((1,2),4) must be one extent with a stride of at least 1, found (2,2):(1,2)"),
        ("%r = lview_distribute %v <(3,2):(2,1)> %n : lview<f32, (4,4):(4,1)>", "mode 0 of (4,4):(4,1) has size 4, which the extent 3 does not divide"),
        ("%r = lview_distribute %v <(2,2):(2,1)> %f : lview<f32, (4,4):(4,1)>", "index operand 0 must be an integer scalar, found f32"),
        ("%r = lview_load %t : tile<4x4xf32>", "expected a layout view operand, found tensor<f32, 1>"),
        ("%w = layout_view %u <4:1> : lview<i32, 4:1>\n  %r = lview_load_masked %w pad(nan) : tile<4xi32>", "padding nan needs a float dtype, the view is i32"),
        ("lview_store %f, %v", "the stored value must have type tile<4x4xf32> (the view's tile), found f32"),
        ("lview_store_masked %x, %t", "expected a layout view operand, found tensor<f32, 1>"),
    ];
    for (line, want) in cases {
        assert_eq!(rule_error(line), *want, "{line}");
    }
}

#[test]
fn the_verifier_names_the_op() {
    let func = parse_function(&kernel("%r = lview_transpose %v [0] : lview<f32, 4:4>")).unwrap();
    assert_eq!(
        verify::verify(&func).unwrap_err().to_string(),
        "verifier: in kernel `k`, op `%2 = lview_transpose %1`: [0] is not a permutation of the 2 mode(s) of (4,4):(4,1)"
    );
}

#[test]
fn bad_layout_text() {
    let cases = [
        ("%r = layout_view %t <(4,8):(8> : lview<f32, 4:1>", "4:23: bad layout `(4,8):(8`: parse error at byte 8 of `(4,8):(8`: expected `,` or `)`"),
        ("%r = layout_view %t <(4,8):(8,1,2)> : lview<f32, 4:1>", "4:23: bad layout `(4,8):(8,1,2)`: Layout::new: (4,8) and (8,1,2) are not congruent"),
        ("%r = layout_view %t <(4,8):(8,1) : lview<f32, 4:1>", "4:43: expected `>` to close the layout, found `<`"),
        ("%r = layout_view %t <4:1> : lview<f32, (4,-):(1,2)>", "4:36: bad layout `(4,-):(1,2)`: parse error at byte 4 of `(4,-):(1,2)`: expected an integer"),
        ("%r = layout_view %t <4:1\n> : lview<f32, 4:1>", "4:27: expected `>` to close the layout, found end of line"),
        ("%r = lview_slice %v [1:3:1, 0:2] : lview<f32, (2,2):(4,1)>", "4:27: expected `,` or `]` after a range, found `:`"),
        ("%r = lview_split %v axis 0 [%n] : lview<f32, (2,4):(4,1)>", "4:30: expected `parts` and the number of parts, found `[`"),
    ];
    for (line, want) in cases {
        assert_eq!(parse_error(line), want, "{line}");
    }
}

/// The interpreter's error for `body` over a source tensor of `len` elements
/// (`%src`) and a destination of 16 (`%dst`).
fn run_error(len: usize, body: &str) -> String {
    let src = format!(
        "kernel @k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>, %i: i64) {{
  %v = layout_view %src <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %w = layout_view %dst <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
{body}
}}"
    );
    let args = vec![
        iota(&[len]),
        zeros(&[16]),
        tile_ir::interp::Arg::Scalar(tile_ir::Scalar::I64(-1)),
    ];
    run_text(&src, args).unwrap_err().to_string()
}

#[test]
fn unmasked_accesses_outside_the_element_space_are_errors() {
    assert_eq!(
        run_error(10, "  %x = lview_load %v : tile<4x4xf32>"),
        "program (0, 0, 0): `%2 = lview_load %0` (a view of `src`): element [2, 2] of the layout view (4,4):(4,1) (base 0) is at offset 10, outside the tensor's element space [0, 10) (use the masked form)"
    );
    assert_eq!(
        run_error(16, "  %x = lview_load %v : tile<4x4xf32>\n  %s = lview_tile %w [2, 2] [%i, %i] : lview<f32, (2,2):(4,1)>\n  %y = lview_load %v : tile<4x4xf32>\n  %z = slice %y [0:2:1, 0:2:1] : tile<2x2xf32>\n  lview_store %z, %s"),
        "program (0, 0, 0): `lview_store %5, %3` (a view of `dst`): element [0, 0] of the layout view (2,2):(4,1) (base -10) is at offset -10, outside the tensor's element space [0, 16) (use the masked form)"
    );
    // A tile coordinate past the grid moves the base past the tensor.
    assert_eq!(
        run_error(16, "  %c2 = constant 2 : i32\n  %c0 = constant 0 : i32\n  %s = lview_tile %v [2, 2] [%c2, %c0] : lview<f32, (2,2):(4,1)>\n  %x = lview_load %s : tile<2x2xf32>"),
        "program (0, 0, 0): `%5 = lview_load %4` (a view of `src`): element [0, 0] of the layout view (2,2):(4,1) (base 16) is at offset 16, outside the tensor's element space [0, 16) (use the masked form)"
    );
    // Also along a mode the tile covers whole (where the tile grid has one
    // tile): the next tile, not tile 0 again.
    assert_eq!(
        run_error(16, "  %c1 = constant 1 : i32\n  %c0 = constant 0 : i32\n  %s = lview_tile %v [4, 2] [%c1, %c0] : lview<f32, (4,2):(4,1)>\n  %x = lview_load %s : tile<4x2xf32>"),
        "program (0, 0, 0): `%5 = lview_load %4` (a view of `src`): element [0, 0] of the layout view (4,2):(4,1) (base 16) is at offset 16, outside the tensor's element space [0, 16) (use the masked form)"
    );
    assert_eq!(
        run_error(16, "  %s = lview_split %v axis 1 parts 1 [%i] : lview<f32, (4,4):(4,1)>\n  %x = lview_load %s : tile<4x4xf32>"),
        "program (0, 0, 0): `%3 = lview_load %2` (a view of `src`): element [0, 0] of the layout view (4,4):(4,1) (base -4) is at offset -4, outside the tensor's element space [0, 16) (use the masked form)"
    );
    // Index arithmetic saturates instead of wrapping back into the tensor.
    assert_eq!(
        run_error(16, "  %m = constant 9223372036854775807 : i64\n  %s = lview_tile %v [1, 1] [%m, %m] : lview<f32, (1,1):(4,1)>\n  %x = lview_load %s : tile<1x1xf32>"),
        "program (0, 0, 0): `%4 = lview_load %3` (a view of `src`): element [0, 0] of the layout view (1,1):(4,1) (base 46116860184273879035) is at offset 46116860184273879035, outside the tensor's element space [0, 16) (use the masked form)"
    );
}

#[test]
fn a_store_through_a_non_injective_layout_is_an_error() {
    assert_eq!(
        run_error(16, "  %x = full 1.0 : tile<4x2xf32>\n  %b = layout_view %dst <(4,2):(1,0)> : lview<f32, (4,2):(1,0)>\n  lview_store_masked %x, %b"),
        "program (0, 0, 0): `lview_store_masked %2, %3` (a view of `dst`): elements [0, 0] and [0, 1] of the layout view (4,2):(1,0) are both at offset 0: a store needs an injective layout"
    );
}

/// The interpreter's error for `src`, run without the verifier.
fn unverified_error(src: &str) -> String {
    let func = parse_function(src).unwrap();
    let mut args = vec![iota(&[16])];
    tile_ir::interp::run(&func, [1, 1, 1], &mut args)
        .unwrap_err()
        .to_string()
}

#[test]
fn unverified_views_are_errors_not_panics_or_allocations() {
    assert_eq!(
        unverified_error(
            "kernel @k(%t: tensor<f32, 1>) {
  %v = layout_view %t <(1099511627776,2):(1,0)> : lview<f32, (1099511627776,2):(1,0)>
  %x = lview_load %v : tile<1099511627776x2xf32>
}"
        ),
        "program (0, 0, 0): `%1 = lview_load %0` (a view of `t`): malformed IR: a tile of shape [1099511627776, 2] holds more than 1048576 elements"
    );
    assert_eq!(
        unverified_error(
            "kernel @k(%t: tensor<f32, 1>) {
  %x = lview_load %t : tile<4xf32>
}"
        ),
        "program (0, 0, 0): `%0 = lview_load %t` (`t`): malformed IR: expected a layout view operand"
    );
    assert_eq!(
        unverified_error(
            "kernel @k(%t: tensor<f32, 1>) {
  %v = layout_view %t <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %w = lview_tile %v [0, 4] [] : lview<f32, (4,4):(4,1)>
}"
        ),
        "program (0, 0, 0): `%1 = lview_tile %0` (a view of `t`): malformed IR: mode 0 of (4,4):(4,1) has size 4, which the extent 0 does not divide"
    );
}
