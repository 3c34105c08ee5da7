//! Every verifier rule, broken once, with its message pinned.
//!
//! Each case is a kernel in the text form whose body breaks one rule; the
//! parser builds it as written and the verifier must name the op, the rule
//! and the offending values.

use tile_ir::text::parse_function;
use tile_ir::verify::verify;

/// Verifies a kernel whose parameters are `params` and whose body is `body`,
/// returning the verifier's message.
fn error(params: &str, body: &str) -> String {
    let src = format!("kernel @k({params}) {{\n{body}\n}}");
    let func = parse_function(&src).unwrap_or_else(|e| panic!("case must parse: {e}\n{src}"));
    match verify(&func) {
        Ok(()) => panic!("the verifier accepted:\n{src}"),
        Err(e) => e.to_string(),
    }
}

const T2: &str = "%t: tensor<f32, 2>";

macro_rules! cases {
    ($($name:ident: ($params:expr, $body:expr) => $message:expr;)*) => {
        $(
            #[test]
            fn $name() {
                assert_eq!(error($params, $body), $message);
            }
        )*
    };
}

cases! {
    grid_axis_out_of_range: ("", "%0 = program_id 3 : i32")
        => "verifier: in kernel `k`, op `%0 = program_id`: the grid axis must be 0, 1 or 2, found 3";
    program_id_declared_with_wrong_type: ("", "%0 = program_id 0 : i64")
        => "verifier: in kernel `k`, op `%0 = program_id`: the result types must be (i32), found (i64)";
    binary_operands_of_different_shapes: ("", "%0 = full 1.0 : tile<128x64xf32>\n%1 = full 1.0 : tile<64xf32>\n%2 = add %0, %1 : tile<128x64xf32>")
        => "verifier: in kernel `k`, op `%2 = add %0, %1`: operands must have one type (broadcasts are explicit), found tile<128x64xf32> and tile<64xf32>";
    binary_operands_of_different_dtypes: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = full 1.0 : tile<4xf16>\n%2 = mul %0, %1 : tile<4xf32>")
        => "verifier: in kernel `k`, op `%2 = mul %0, %1`: operands must have one type (broadcasts are explicit), found tile<4xf32> and tile<4xf16>";
    binary_arity: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = add %0 : tile<4xf32>")
        => "verifier: in kernel `k`, op `%1 = add %0`: expected 2 operand(s), found 1";
    exp_of_integers: ("", "%0 = iota : tile<8xi32>\n%1 = exp %0 : tile<8xi32>")
        => "verifier: in kernel `k`, op `%1 = exp %0`: exp needs a float dtype, found i32";
    pow_of_integers: ("", "%0 = iota : tile<8xi32>\n%1 = pow %0, %0 : tile<8xi32>")
        => "verifier: in kernel `k`, op `%1 = pow %0, %0`: pow needs a float dtype, found i32";
    atan2_of_integers: ("", "%0 = iota : tile<8xi32>\n%1 = atan2 %0, %0 : tile<8xi32>")
        => "verifier: in kernel `k`, op `%1 = atan2 %0, %0`: atan2 needs a float dtype, found i32";
    unpack_fp4_of_another_dtype: ("", "%0 = full 1 : tile<4xi8>\n%1 = unpack_fp4 %0 axis 0 : tile<8xf4e2m1>")
        => "verifier: in kernel `k`, op `%1 = unpack_fp4 %0`: the packed FP4 pairs are u8 bytes, found i8";
    unpack_fp4_axis_out_of_range: ("", "%0 = full 1 : tile<4xu8>\n%1 = unpack_fp4 %0 axis 1 : tile<8xf4e2m1>")
        => "verifier: in kernel `k`, op `%1 = unpack_fp4 %0`: axis 1 is out of range for rank 1";
    pack_fp4_of_an_odd_extent: ("", "%0 = full 1.0 : tile<4x3xf4e2m1>\n%1 = pack_fp4 %0 axis 1 : tile<4x1xu8>")
        => "verifier: in kernel `k`, op `%1 = pack_fp4 %0`: pairs lie along axis 1, whose extent in [4, 3] is odd";
        bitcast_to_another_width: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = bitcast %0 to f16 : tile<4xf16>")
        => "verifier: in kernel `k`, op `%1 = bitcast %0`: bitcast needs dtypes of one width, found f32 (32 bits) to f16 (16 bits)";
    bitcast_of_bools: ("", "%0 = full true : tile<4xbool>\n%1 = bitcast %0 to u8 : tile<4xu8>")
        => "verifier: in kernel `k`, op `%1 = bitcast %0`: bitcast needs dtypes with a bit layout, found bool to u8";
    bitwise_and_of_floats: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = and %0, %0 : tile<4xf32>")
        => "verifier: in kernel `k`, op `%1 = and %0, %0`: and needs a bool or integer dtype, found f32";
    multiple_of_a_tile: ("", "%0 = iota : tile<8xi32>\n%1 = multiple_of 0 4 %0 : tile<8xi32>")
        => "verifier: in kernel `k`, op `%1 = multiple_of %0`: the operand must be an integer scalar, found tile<8xi32>";
    multiple_of_a_float: ("%x: f32", "%0 = multiple_of 0 4 %x : f32")
        => "verifier: in kernel `k`, op `%0 = multiple_of %x`: the operand must be an integer scalar, found f32";
    multiple_of_zero: ("%n: i32", "%0 = multiple_of 0 0 %n : i32")
        => "verifier: in kernel `k`, op `%0 = multiple_of %n`: the divisor must be at least 1 and fit i32, found 0";
    multiple_of_past_the_dtype: ("%n: i8", "%0 = multiple_of 0 128 %n : i8")
        => "verifier: in kernel `k`, op `%0 = multiple_of %n`: the divisor must be at least 1 and fit i8, found 128";
    shift_of_bools: ("", "%0 = constant true : bool\n%1 = shl %0, %0 : bool")
        => "verifier: in kernel `k`, op `%1 = shl %0, %0`: shl needs an integer dtype, found bool";
    abs_of_unsigned: ("", "%0 = constant 3 : u8\n%1 = abs %0 : u8")
        => "verifier: in kernel `k`, op `%1 = abs %0`: abs needs a signed integer or float dtype, found u8";
    ordered_compare_of_bools: ("", "%0 = constant true : bool\n%1 = cmp lt %0, %0 : bool")
        => "verifier: in kernel `k`, op `%1 = cmp %0, %0`: cmp lt needs integer or float operands, found bool";
    compare_result_not_bool: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = cmp eq %0, %0 : tile<4xf32>")
        => "verifier: in kernel `k`, op `%1 = cmp %0, %0`: the result types must be (tile<4xbool>), found (tile<4xf32>)";
    select_with_scalar_condition_on_tiles: ("", "%0 = constant true : bool\n%1 = full 1.0 : tile<4xf32>\n%2 = select %0, %1, %1 : tile<4xf32>")
        => "verifier: in kernel `k`, op `%2 = select %0, %1, %1`: the condition must have type tile<4xbool>, found bool";
    fma_of_integers: ("", "%0 = iota : tile<4xi32>\n%1 = fma %0, %0, %0 : tile<4xi32>")
        => "verifier: in kernel `k`, op `%1 = fma %0, %0, %0`: fma needs a float dtype, found i32";
    cast_declared_with_wrong_dtype: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = cast %0 to f16 : tile<4xbf16>")
        => "verifier: in kernel `k`, op `%1 = cast %0`: the result types must be (tile<4xf16>), found (tile<4xbf16>)";
    broadcast_incompatible: ("", "%0 = full 1.0 : tile<3x4xf32>\n%1 = broadcast %0 to [3, 8] : tile<3x8xf32>")
        => "verifier: in kernel `k`, op `%1 = broadcast %0`: cannot broadcast [3, 4] to [3, 8]: axis 1 has extent 4, which is neither 1 nor 8";
    broadcast_to_fewer_axes: ("", "%0 = full 1.0 : tile<2x4xf32>\n%1 = broadcast %0 to [4] : tile<4xf32>")
        => "verifier: in kernel `k`, op `%1 = broadcast %0`: cannot broadcast [2, 4] to [4]: the target has fewer axes";
    reshape_changes_element_count: ("", "%0 = full 1.0 : tile<4x8xf32>\n%1 = reshape %0 to [30] : tile<30xf32>")
        => "verifier: in kernel `k`, op `%1 = reshape %0`: reshape keeps the number of elements: [4, 8] has 32, [30] has 30";
    permute_not_a_permutation: ("", "%0 = full 1.0 : tile<4x8xf32>\n%1 = permute %0 [1, 1] : tile<8x8xf32>")
        => "verifier: in kernel `k`, op `%1 = permute %0`: [1, 1] is not a permutation of the 2 axes of [4, 8]";
    expand_non_unit_axis: ("", "%0 = full 1.0 : tile<2x8xf32>\n%1 = expand %0 to [4, 8] : tile<4x8xf32>")
        => "verifier: in kernel `k`, op `%1 = expand %0`: expand grows only axes of extent 1, but axis 0 of [2, 8] has extent 2 and the target [4, 8] has 4";
    expand_changes_rank: ("", "%0 = full 1.0 : tile<1x8xf32>\n%1 = expand %0 to [2, 1, 8] : tile<2x1x8xf32>")
        => "verifier: in kernel `k`, op `%1 = expand %0`: expand keeps the rank: [1, 8] has 2 axes, [2, 1, 8] has 3";
    flip_axis_twice: ("", "%0 = full 1.0 : tile<4x8xf32>\n%1 = flip %0 [1, 1] : tile<4x8xf32>")
        => "verifier: in kernel `k`, op `%1 = flip %0`: axis 1 is listed twice";
    slice_past_the_end: ("", "%0 = full 1.0 : tile<4x8xf32>\n%1 = slice %0 [0:4:1, 2:9:1] : tile<4x7xf32>")
        => "verifier: in kernel `k`, op `%1 = slice %0`: slice 2:9:1 of axis 1 (extent 8) must satisfy start < stop <= extent and step >= 1";
    pad_value_of_another_dtype: ("", "%0 = full 1 : tile<4xi32>\n%1 = pad %0 low [1] high [1] value 0.0 : tile<6xf32>")
        => "verifier: in kernel `k`, op `%1 = pad %0`: the padding value 0.0 is f32, the tile is i32";
    cat_of_one_tile: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = cat %0 axis 0 : tile<4xf32>")
        => "verifier: in kernel `k`, op `%1 = cat %0`: cat needs at least 2 operands, found 1";
    cat_with_mismatched_extents: ("", "%0 = full 1.0 : tile<4x8xf32>\n%1 = full 1.0 : tile<4x6xf32>\n%2 = cat %0, %1 axis 0 : tile<8x8xf32>")
        => "verifier: in kernel `k`, op `%2 = cat %0, %1`: cat along axis 0 needs one dtype and equal extents on the other axes, found tile<4x8xf32> and tile<4x6xf32>";
    reduce_axis_out_of_range: ("", "%0 = full 1.0 : tile<4x8xf32>\n%1 = reduce sum %0 axis 2 : tile<4xf32>")
        => "verifier: in kernel `k`, op `%1 = reduce %0`: axis 2 is out of range for rank 2";
    reduce_without_keepdim_declared_with_it: ("", "%0 = full 1.0 : tile<4x8xf32>\n%1 = reduce max %0 axis 1 : tile<4x1xf32>")
        => "verifier: in kernel `k`, op `%1 = reduce %0`: the result types must be (tile<4xf32>), found (tile<4x1xf32>)";
    argmax_result_not_i32: ("", "%0 = full 1.0 : tile<8xf32>\n%1 = arg argmax %0 axis 0 : f32")
        => "verifier: in kernel `k`, op `%1 = arg %0`: the result types must be (i32), found (f32)";
    scan_of_bools: ("", "%0 = full true : tile<8xbool>\n%1 = scan cumsum %0 axis 0 : tile<8xbool>")
        => "verifier: in kernel `k`, op `%1 = scan %0`: scan needs an integer or float dtype, found bool";
    dot_inner_extents_differ: ("", "%0 = full 1.0 : tile<16x8xf16>\n%1 = full 1.0 : tile<16x16xf16>\n%2 = full 0.0 : tile<16x16xf32>\n%3 = dot tensor %0, %1, %2 : tile<16x16xf32>")
        => "verifier: in kernel `k`, op `%3 = dot %0, %1, %2`: dot needs a: [M, K], b: [K, N], c: [M, N], found [16, 8], [16, 16] and [16, 16]";
    dot_accumulator_dtype: ("", "%0 = full 1.0 : tile<16x16xf16>\n%1 = full 0.0 : tile<16x16xf16>\n%2 = dot tensor %0, %0, %1 : tile<16x16xf16>")
        => "verifier: in kernel `k`, op `%2 = dot %0, %0, %1`: dot of f16 and f16 accumulates in f32, but the accumulator is f16";
    dot_tensor_precision_of_f32: ("", "%0 = full 1.0 : tile<16x16xf32>\n%1 = dot tensor %0, %0, %0 : tile<16x16xf32>")
        => "verifier: in kernel `k`, op `%1 = dot %0, %0, %0`: dot precision `tensor` needs f16, bf16 or FP8 operands, whose products are exact in the f32 accumulator; a dot of f32 and f32 is `ieee` (or `tf32` for f32)";
    dot_tf32_precision_of_f16: ("", "%0 = full 1.0 : tile<16x16xf16>\n%1 = full 0.0 : tile<16x16xf32>\n%2 = dot tf32 %0, %0, %1 : tile<16x16xf32>")
        => "verifier: in kernel `k`, op `%2 = dot %0, %0, %1`: dot precision `tf32` rounds f32 operands to TF32; a dot of f16 and f16 cannot have it";
    round_tf32_of_f64: ("", "%0 = full 1.0 : tile<4xf64>\n%1 = round_tf32 %0 : tile<4xf64>")
        => "verifier: in kernel `k`, op `%1 = round_tf32 %0`: round_tf32 needs f32, found f64";
    dot_of_rank_one_tiles: ("", "%0 = full 1.0 : tile<16xf32>\n%1 = dot ieee %0, %0, %0 : tile<16xf32>")
        => "verifier: in kernel `k`, op `%1 = dot %0, %0, %0`: dot needs rank-2 tiles, found [16], [16] and [16]";
    dot_scaled_scales_of_the_wrong_shape: ("", "%0 = full 1.0 : tile<8x64xf4e2m1>\n%1 = full 1.0 : tile<8x1xf8e8m0>\n%2 = full 1.0 : tile<64x4xbf16>\n%3 = full 0.0 : tile<8x4xf32>\n%4 = dot_scaled %0, %1, %2, %3 : tile<8x4xf32>")
        => "verifier: in kernel `k`, op `%4 = dot_scaled %0, %1, %2, %3`: a's scales must be [8, 2] (one f8e8m0 per 32 elements along K = 64), found [8, 1]";
    dot_scaled_nvfp4_scales_on_fp8: ("", "%0 = full 1.0 : tile<8x64xf8e4m3>\n%1 = full 1.0 : tile<8x4xf8e4m3>\n%2 = full 1.0 : tile<64x4xbf16>\n%3 = full 0.0 : tile<8x4xf32>\n%4 = dot_scaled %0, %1, %2, %3 : tile<8x4xf32>")
        => "verifier: in kernel `k`, op `%4 = dot_scaled %0, %1, %2, %3`: f8e4m3 scales (NVFP4) scale f4e2m1 elements; a is f8e4m3: give it f8e8m0 scales";
    dot_scaled_k_not_a_multiple_of_the_group: ("", "%0 = full 1.0 : tile<8x48xf4e2m1>\n%1 = full 1.0 : tile<8x1xf8e8m0>\n%2 = full 1.0 : tile<48x4xbf16>\n%3 = full 0.0 : tile<8x4xf32>\n%4 = dot_scaled %0, %1, %2, %3 : tile<8x4xf32>")
        => "verifier: in kernel `k`, op `%4 = dot_scaled %0, %1, %2, %3`: a's f8e8m0 scales cover groups of 32 along K, which 48 is not a multiple of";
    dot_scaled_missing_scales: ("", "%0 = full 1.0 : tile<8x64xf4e2m1>\n%1 = full 1.0 : tile<64x4xf4e2m1>\n%2 = full 0.0 : tile<8x4xf32>\n%3 = dot_scaled %0, %1, %2 : tile<8x4xf32>")
        => "verifier: in kernel `k`, op `%3 = dot_scaled %0, %1, %2`: dot_scaled takes `a, [a_scale,] b, [b_scale,] c`, a scale after each operand of an element format (f4e2m1, f6e2m3, f6e3m2, f8e4m3, f8e5m2); operands of dtypes (f4e2m1, f4e2m1, f32) do not fit";
    dot_scaled_accumulator_dtype: ("", "%0 = full 1.0 : tile<8x64xbf16>\n%1 = full 1.0 : tile<64x4xbf16>\n%2 = full 0.0 : tile<8x4xf16>\n%3 = dot_scaled %0, %1, %2 : tile<8x4xf16>")
        => "verifier: in kernel `k`, op `%3 = dot_scaled %0, %1, %2`: dot_scaled accumulates in f32, but the accumulator is f16";
    dot_scaled_of_f32: ("", "%0 = full 1.0 : tile<8x64xf32>\n%1 = full 1.0 : tile<64x4xbf16>\n%2 = full 0.0 : tile<8x4xf32>\n%3 = dot_scaled %0, %1, %2 : tile<8x4xf32>")
        => "verifier: in kernel `k`, op `%3 = dot_scaled %0, %1, %2`: dot_scaled's a must be f4e2m1, f6e2m3, f6e3m2, f8e4m3, f8e5m2 (with scales), bf16 or f16, found f32";
    dim_axis_out_of_range: (T2, "%0 = dim %t axis 2 : i32")
        => "verifier: in kernel `k`, op `%0 = dim %t`: axis 2 is out of range for rank 2";
    partition_rank_mismatch: (T2, "%0 = partition_view %t [128] : view<f32, [128]>")
        => "verifier: in kernel `k`, op `%0 = partition_view %t`: the partition shape [128] has rank 1, the tensor has rank 2";
    partition_view_of_a_tile: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = partition_view %0 [4] : view<f32, [4]>")
        => "verifier: in kernel `k`, op `%1 = partition_view %0`: the operand must be a tensor, found tile<4xf32>";
    load_with_too_few_indices: (T2, "%0 = partition_view %t [4, 8] : view<f32, [4, 8]>\n%1 = program_id 0 : i32\n%2 = load %0[%1] : tile<4x8xf32>")
        => "verifier: in kernel `k`, op `%2 = load %0, %1`: a view of rank 2 needs 2 partition indices, found 1";
    load_with_float_index: (T2, "%0 = partition_view %t [4, 8] : view<f32, [4, 8]>\n%1 = constant 1.0 : f32\n%2 = load %0[%1, %1] : tile<4x8xf32>")
        => "verifier: in kernel `k`, op `%2 = load %0, %1, %1`: partition index 0 must be an integer scalar, found f32";
    nan_padding_on_integers: ("%t: tensor<i32, 1>", "%0 = partition_view %t [4] : view<i32, [4]>\n%1 = program_id 0 : i32\n%2 = load_masked %0[%1] pad(nan) : tile<4xi32>")
        => "verifier: in kernel `k`, op `%2 = load_masked %0, %1`: padding nan needs a float dtype, the view is i32";
    infinite_padding_on_e4m3: ("%t: tensor<f8e4m3, 1>", "%0 = partition_view %t [4] : view<f8e4m3, [4]>\n%1 = program_id 0 : i32\n%2 = load_masked %0[%1] pad(posinf) : tile<4xf8e4m3>")
        => "verifier: in kernel `k`, op `%2 = load_masked %0, %1`: infinite padding needs a float dtype with infinities, the view is f8e4m3";
    store_of_wrong_tile: (T2, "%0 = partition_view %t [4, 8] : view<f32, [4, 8]>\n%1 = program_id 0 : i32\n%2 = full 0.0 : tile<8x4xf32>\nstore %2, %0[%1, %1]")
        => "verifier: in kernel `k`, op `store %2, %0, %1, %1`: the stored value must have type tile<4x8xf32> (the view's tile), found tile<8x4xf32>";
    for_bounds_of_mixed_types: ("", "%0 = constant 0 : i32\n%1 = constant 8 : i64\n%2 = constant 1 : i32\nfor %3 = %0 to %1 step %2 {\n  yield\n}")
        => "verifier: in kernel `k`, op `for %0, %1, %2`: the bounds and step must be scalars of one integer dtype, found i32, i64 and i32";
    for_yield_type_mismatch: ("", "%0 = constant 0 : i32\n%1 = constant 1.0 : f32\n%2 = for %3 = %0 to %0 step %0 iter(%4 = %1) : f32 {\n  %5 = cast %4 to f16 : f16\n  yield %5\n}")
        => "verifier: in kernel `k`, op `%2 = for %0, %0, %0, %1`: the loop body must yield (f32), found (f16)";
    if_on_a_tile: ("", "%0 = full true : tile<4xbool>\nif %0 {\n  yield\n} else {\n  yield\n}")
        => "verifier: in kernel `k`, op `if %0`: the condition must be a bool scalar (block-uniform), found tile<4xbool>; use select for a tile condition";
    if_branches_yield_different_types: ("", "%0 = constant true : bool\n%1 = constant 1.0 : f32\n%2 = constant 1 : i32\n%3 = if %0 : f32 {\n  yield %1\n} else {\n  yield %2\n}")
        => "verifier: in kernel `k`, op `%3 = if %0`: the else branch must yield (f32), found (i32)";
    yield_in_the_kernel_body: ("", "%0 = constant 1 : i32\nyield %0")
        => "verifier: in kernel `k`, op `yield %0`: `yield` may only end a region of `for`, `while`, `if` or a combine";
    combine_with_a_load: ("%t: tensor<f32, 1>", "%0 = full 1.0 : tile<4xf32>\n%1 = constant 0 : i32\n%2 = partition_view %t [4] : view<f32, [4]>\n%3 = reduce_with %0 axis 0 combine(%4, %5) : f32 {\n  %6 = load %2[%1] : tile<4xf32>\n  yield %4\n}")
        => "verifier: in kernel `k`, op `%3 = reduce_with %0`: a combine function holds only constants and elementwise ops, found `load`";
    combine_of_two_shapes: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = full 1 : tile<8xi32>\n%2, %3 = reduce_with %0, %1 axis 0 combine(%4, %5, %6, %7) : f32, i32 {\n  yield %4, %5\n}")
        => "verifier: in kernel `k`, op `%2, %3 = reduce_with %0, %1`: the operands must have one shape, found tile<4xf32> and tile<8xi32>";
    combine_yielding_the_wrong_dtype: ("", "%0 = full 1.0 : tile<4xf32>\n%1 = reduce_with %0 axis 0 combine(%2, %3) : f32 {\n  %4 = cast %2 to f16 : f16\n  yield %4\n}")
        => "verifier: in kernel `k`, op `%1 = reduce_with %0`: the combine function must yield (f32), found (f16)";
    while_on_a_tile: ("", "%0 = constant 1 : i32\n%1 = while iter(%2 = %0) : i32 {\n  %4 = full true : tile<4xbool>\n  yield %4\n} do(%3) {\n  yield %3\n}")
        => "verifier: in kernel `k`, op `%1 = while %0`: the loop condition must yield (bool), found (tile<4xbool>)";
    while_body_yield_type_mismatch: ("", "%0 = constant 1.0 : f32\n%1 = while iter(%2 = %0) : f32 {\n  %4 = constant false : bool\n  yield %4\n} do(%3) {\n  %5 = cast %3 to f16 : f16\n  yield %5\n}")
        => "verifier: in kernel `k`, op `%1 = while %0`: the loop body must yield (f32), found (f16)";
    while_result_types_unlike_its_initial_values: ("", "%0 = constant 1 : i32\n%1 = while iter(%2 = %0) : i64 {\n  %4 = constant false : bool\n  yield %4\n} do(%3) {\n  yield %3\n}")
        => "verifier: in kernel `k`, op `%1 = while %0`: the result types must be (i32), found (i64)";
    tile_with_zero_extent: ("", "%0 = full 1.0 : tile<0x4xf32>")
        => "verifier: in kernel `k`, op `%0 = full`: tile extents must be positive, found 0 at axis 0 of [0, 4]";
    tile_too_large: ("", "%0 = full 1.0 : tile<2048x1024xf32>")
        => "verifier: in kernel `k`, op `%0 = full`: a tile holds at most 1048576 elements, [2048, 1024] holds more";
    tensor_of_rank_zero: ("%t: tensor<f32, 0>", "%0 = program_id 0 : i32")
        => "verifier: in kernel `k`, parameter %t: a tensor needs at least one axis";
    tile_parameter: ("%t: tile<4xf32>", "%0 = program_id 0 : i32")
        => "verifier: in kernel `k`, parameter %t: a parameter is a scalar, a tensor or a tensor array, found tile<4xf32>";
}

/// Structural rules the parser cannot break (it checks names itself), broken
/// through the raw API.
mod structure {
    use tile_ir::function::Region;
    use tile_ir::verify::verify;
    use tile_ir::{DType, Function, OpKind, Scalar, Type};

    fn constant(func: &mut Function, v: i32) -> (tile_ir::OpId, tile_ir::Value) {
        let op = func.create_op(
            OpKind::Constant {
                value: Scalar::I32(v),
            },
            vec![],
            vec![Type::Scalar(DType::I32)],
            vec![],
        );
        (op, func.op(op).results[0])
    }

    fn add(func: &mut Function, a: tile_ir::Value, b: tile_ir::Value) -> tile_ir::OpId {
        func.create_op(
            OpKind::Binary(tile_ir::BinaryOp::Add),
            vec![a, b],
            vec![Type::Scalar(DType::I32)],
            vec![],
        )
    }

    #[test]
    fn use_before_definition() {
        let mut func = Function::new("k");
        let (c, v) = constant(&mut func, 1);
        let sum = add(&mut func, v, v);
        func.body.ops = vec![sum, c];
        assert_eq!(
            verify(&func).unwrap_err().to_string(),
            "verifier: in kernel `k`, op `%0 = add %1, %1`: operand 0 is used where its definition does not dominate (defined later, or inside a region that has ended)"
        );
    }

    #[test]
    fn use_of_a_value_after_its_region_ended() {
        let mut func = Function::new("k");
        let (c0, zero) = constant(&mut func, 0);
        let (inner, v) = constant(&mut func, 7);
        let yield_op = func.create_op(OpKind::Yield, vec![], vec![], vec![]);
        let iv = func.new_region_arg(0, Type::Scalar(DType::I32));
        let body = Region {
            args: vec![iv],
            ops: vec![inner, yield_op],
        };
        let for_op = func.create_op(
            OpKind::For { stages: None },
            vec![zero, zero, zero],
            vec![],
            vec![body],
        );
        let after = add(&mut func, v, v);
        func.body.ops = vec![c0, for_op, after];
        assert_eq!(
            verify(&func).unwrap_err().to_string(),
            "verifier: in kernel `k`, op `%3 = add %2, %2`: operand 0 is used where its definition does not dominate (defined later, or inside a region that has ended)"
        );
    }

    #[test]
    fn op_placed_twice() {
        let mut func = Function::new("k");
        let (c, _) = constant(&mut func, 1);
        func.body.ops = vec![c, c];
        assert_eq!(
            verify(&func).unwrap_err().to_string(),
            "verifier: in kernel `k`, op `constant` (#0): the op appears in more than one place"
        );
    }

    #[test]
    fn dangling_op_handle() {
        let mut func = Function::new("k");
        func.body.ops = vec![tile_ir::OpId::from_index(5)];
        assert_eq!(
            verify(&func).unwrap_err().to_string(),
            "verifier: in kernel `k`, op #5: a region lists an op handle past the op arena"
        );
    }

    #[test]
    fn loop_region_missing_its_yield() {
        let mut func = Function::new("k");
        let (c0, zero) = constant(&mut func, 0);
        let iv = func.new_region_arg(0, Type::Scalar(DType::I32));
        let body = Region {
            args: vec![iv],
            ops: vec![],
        };
        let for_op = func.create_op(
            OpKind::For { stages: None },
            vec![zero, zero, zero],
            vec![],
            vec![body],
        );
        func.body.ops = vec![c0, for_op];
        assert_eq!(
            verify(&func).unwrap_err().to_string(),
            "verifier: in kernel `k`, op `for %0, %0, %0`: a nested region must end with `yield`"
        );
    }

    #[test]
    fn duplicate_parameter_names() {
        let mut func = Function::new("k");
        func.add_param("x", Type::Scalar(DType::I32));
        func.add_param("x", Type::Scalar(DType::F32));
        assert_eq!(
            verify(&func).unwrap_err().to_string(),
            "verifier: in kernel `k`, parameter %x: parameter names must be unique"
        );
    }
}
