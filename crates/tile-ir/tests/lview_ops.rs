//! Each layout-view op in a text kernel, checked element by element against
//! a dense computation of what Mojo's `LayoutTensor` op returns (the Mojo
//! docs' examples where they give values).

mod lview_support;
use lview_support::*;

/// A row-major 4×4 tensor holding 0..16: element (r, c) is `4r + c`.
const M44: &str = "(4,4):(4,1)";

#[test]
fn layout_view_reads_the_layout_function() {
    // Column-major 3×4 view of a buffer of 12: element (r, c) at r + 3c.
    let got = offsets_read(
        12,
        "(3,4):(1,3)",
        "  %r = lview_coalesce %v : lview<f32, 12:1>",
        &[12],
    )
    .unwrap();
    assert_eq!(got, dense(&[12], |i| i[0]));
    let ops = "  %r = lview_transpose %v [0, 1] : lview<f32, (3,4):(1,3)>";
    let got = offsets_read(12, "(3,4):(1,3)", ops, &[3, 4]).unwrap();
    assert_eq!(got, dense(&[3, 4], |i| i[0] + 3 * i[1]));
    // A hierarchical mode is indexed colexicographically: (2,2):(1,4) holds 0, 1, 4, 5.
    let ops = "  %r = lview_transpose %v [0, 1] : lview<f32, ((2,2),3):((1,4),16)>";
    let got = offsets_read(48, "((2,2),3):((1,4),16)", ops, &[4, 3]).unwrap();
    assert_eq!(got, dense(&[4, 3], |i| [0, 1, 4, 5][i[0]] + 16 * i[1]));
}

#[test]
fn tile_takes_the_tile_at_a_tile_coordinate() {
    let a = tensor(
        &[4, 4],
        vec![
            1., 2., 3., 4., 2., 3., 4., 5., 5., 4., 3., 2., 1., 1., 1., 1.,
        ],
    );
    // Mojo's example: tile[2, 2](1, 0) of this 4×4 tensor is [[5, 4], [1, 1]].
    let src = "kernel @k(%src: tensor<f32, 2>, %dst: tensor<f32, 2>) {
  %one = constant 1 : i32
  %zero = constant 0 : i32
  %v = layout_view %src <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %t = lview_tile %v [2, 2] [%one, %zero] : lview<f32, (2,2):(4,1)>
  %x = lview_load %t : tile<2x2xf32>
  %w = layout_view %dst <(2,2):(2,1)> : lview<f32, (2,2):(2,1)>
  lview_store %x, %w
}";
    let out = run_text(src, vec![a, zeros(&[2, 2])]).unwrap();
    assert_eq!(values(&out, 1), [5., 4., 1., 1.]);
    // Every 2×1 tile of an 8×6 row-major tensor.
    for (i, j) in [(0, 0), (3, 5), (2, 3)] {
        let ops = format!(
            "  %i = constant {i} : i64\n  %j = constant {j} : i64\n  %r = lview_tile %v [2, 1] [%i, %j] : lview<f32, (2,1):(6,1)>"
        );
        let got = offsets_read(48, "(8,6):(6,1)", &ops, &[2, 1]).unwrap();
        assert_eq!(
            got,
            dense(&[2, 1], |t| (2 * i + t[0]) * 6 + (j + t[1])),
            "tile ({i}, {j})"
        );
    }
}

#[test]
fn tiled_iterator_is_a_tile_indexed_by_a_loop_variable() {
    // Mojo: tiled_iterator[2, 4, axis=1](1, 0) then get()/next(): the tiles
    // (1, 0), (1, 1), (1, 2) of an 4×12 tensor, here summed.
    let src = "kernel @k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>) {
  %c0 = constant 0 : i32
  %c1 = constant 1 : i32
  %c3 = constant 3 : i32
  %v = layout_view %src <(4,12):(12,1)> : lview<f32, (4,12):(12,1)>
  %z = full 0.0 : tile<2x4xf32>
  %acc = for %k = %c0 to %c3 step %c1 iter(%a = %z) : tile<2x4xf32> {
    %t = lview_tile %v [2, 4] [%c1, %k] : lview<f32, (2,4):(12,1)>
    %x = lview_load %t : tile<2x4xf32>
    %s = add %a, %x : tile<2x4xf32>
    yield %s
  }
  %w = layout_view %dst <(2,4):(4,1)> : lview<f32, (2,4):(4,1)>
  lview_store %acc, %w
}";
    let out = run_text(src, vec![iota(&[48]), zeros(&[8])]).unwrap();
    let want = dense(&[2, 4], |i| {
        (0..3).map(|k| (2 + i[0]) * 12 + 4 * k + i[1]).sum()
    });
    assert_eq!(values(&out, 1), want);
}

#[test]
fn split_takes_one_of_equal_parts_along_a_mode() {
    // split(count=3, idx) along axis 1 of a 4×6 tensor: columns 2·idx..2·idx+2.
    for (idx, name) in [(0, "%c0"), (2, "%c2")] {
        let ops =
            format!("  %r = lview_split %v axis 1 parts 3 [{name}] : lview<f32, (4,2):(6,1)>");
        let got = offsets_read(24, "(4,6):(6,1)", &ops, &[4, 2]).unwrap();
        assert_eq!(got, dense(&[4, 2], |i| i[0] * 6 + 2 * idx + i[1]));
    }
    let ops = "  %r = lview_split %v axis 0 parts 2 [%c1] : lview<f32, (2,6):(6,1)>";
    let got = offsets_read(24, "(4,6):(6,1)", ops, &[2, 6]).unwrap();
    assert_eq!(got, dense(&[2, 6], |i| (2 + i[0]) * 6 + i[1]));
}

#[test]
fn vectorize_puts_the_vectors_on_trailing_axes() {
    // Mojo: an 8×8 tensor vectorized by [2, 4] is a 4×2 tensor of 2×4 blocks;
    // element [a, b, c, d] is row 2a + c, column 4b + d.
    let ops = "  %r = lview_vectorize %v [2, 4] : lview<f32, (4,2,2,4):(16,4,8,1)>";
    let got = offsets_read(64, "(8,8):(8,1)", ops, &[4, 2, 2, 4]).unwrap();
    assert_eq!(
        got,
        dense(&[4, 2, 2, 4], |i| (2 * i[0] + i[2]) * 8 + 4 * i[1] + i[3])
    );
    // [1, 4]: SIMD vectors of 4 along rows.
    let ops = "  %r = lview_vectorize %v [1, 4] : lview<f32, (8,2,1,4):(8,4,8,1)>";
    let got = offsets_read(64, "(8,8):(8,1)", ops, &[8, 2, 1, 4]).unwrap();
    assert_eq!(got, dense(&[8, 2, 1, 4], |i| i[0] * 8 + 4 * i[1] + i[3]));
}

#[test]
fn slice_keeps_a_range_of_each_mode() {
    // Mojo's example: slice[Slice(1, 3), Slice(0, 2)] of [[1..4], [5..8], ...]
    // is [[5, 6], [9, 10]] (here the values are one less: 0-based).
    let ops = "  %r = lview_slice %v [1:3, 0:2] : lview<f32, (2,2):(4,1)>";
    let got = offsets_read(16, M44, ops, &[2, 2]).unwrap();
    assert_eq!(got, [4., 5., 8., 9.]);
    let ops = "  %r = lview_slice %v [2:5, 1:4] : lview<f32, (3,3):(1,5)>";
    let got = offsets_read(30, "(5,6):(1,5)", ops, &[3, 3]).unwrap();
    assert_eq!(got, dense(&[3, 3], |i| (2 + i[0]) + 5 * (1 + i[1])));
    // A whole hierarchical mode stays as it is.
    let ops = "  %r = lview_slice %v [0:4, 1:2] : lview<f32, ((2,2),1):((1,4),16)>";
    let got = offsets_read(48, "((2,2),3):((1,4),16)", ops, &[4, 1]).unwrap();
    assert_eq!(got, dense(&[4, 1], |i| [0, 1, 4, 5][i[0]] + 16));
}

#[test]
fn transpose_permutes_the_modes() {
    // Mojo's example: [[1, 2, 3], [4, 5, 6]] transposed is [[1, 4], [2, 5], [3, 6]].
    let ops = "  %r = lview_transpose %v [1, 0] : lview<f32, (3,2):(1,3)>";
    let got = offsets_read(6, "(2,3):(3,1)", ops, &[3, 2]).unwrap();
    assert_eq!(got, [0., 3., 1., 4., 2., 5.]);
    let ops = "  %r = lview_transpose %v [2, 0, 1] : lview<f32, (4,2,3):(1,12,4)>";
    let got = offsets_read(24, "(2,3,4):(12,4,1)", ops, &[4, 2, 3]).unwrap();
    assert_eq!(got, dense(&[4, 2, 3], |i| i[1] * 12 + i[2] * 4 + i[0]));
}

#[test]
fn reshape_reads_the_elements_in_row_major_order() {
    // Mojo's example: a 2×6 tensor reshaped to 3×4, same row-major elements.
    let ops = "  %r = lview_reshape %v [3, 4] : lview<f32, (3,4):(4,1)>";
    let got = offsets_read(12, "(2,6):(6,1)", ops, &[3, 4]).unwrap();
    assert_eq!(got, dense(&[3, 4], |i| i[0] * 4 + i[1]));
    // A column-major 4×6 view reshaped to 8×3: the view's row-major element
    // order is kept, not the memory order.
    let ops = "  %r = lview_reshape %v [8, 3] : lview<f32, ((2,4),3):((12,1),4)>";
    let got = offsets_read(24, "(4,6):(1,4)", ops, &[8, 3]).unwrap();
    assert_eq!(
        got,
        dense(&[8, 3], |i| {
            let linear = i[0] * 3 + i[1];
            let (r, c) = (linear / 6, linear % 6);
            r + 4 * c
        })
    );
}

#[test]
fn compose_applies_the_layout_first() {
    // composition((6,2):(8,2), (4,3):(3,1)) maps 0..12 to
    // [0,24,2,26,8,32,10,34,16,40,18,42] (the CuTe docs' example).
    let ops = "  %r = lview_compose %v <(4,3):(3,1)> : lview<f32, ((2,2),3):((24,2),8)>";
    let got = offsets_read(48, "(6,2):(8,2)", ops, &[4, 3]).unwrap();
    let table = [0, 24, 2, 26, 8, 32, 10, 34, 16, 40, 18, 42];
    assert_eq!(got, dense(&[4, 3], |i| table[i[0] + 4 * i[1]]));
}

#[test]
fn coalesce_keeps_the_function_with_fewer_modes() {
    let ops = "  %r = lview_coalesce %v : lview<f32, 12:1>";
    let got = offsets_read(12, "(2,(1,6)):(1,(6,2))", ops, &[12]).unwrap();
    assert_eq!(got, dense(&[12], |i| i[0]));
    let ops = "  %r = lview_coalesce %v : lview<f32, (4,3):(3,1)>";
    let got = offsets_read(12, "(4,3):(3,1)", ops, &[4, 3]).unwrap();
    assert_eq!(got, dense(&[4, 3], |i| i[0] * 3 + i[1]));
}

#[test]
fn distribute_gives_each_thread_its_cyclic_elements() {
    // A 4×4 tensor over a row-major 2×2 thread layout: thread t has thread
    // coordinate (t / 2 % 2, t % 2) and owns rows c0, c0+2 and columns c1, c1+2.
    for (t, name) in [(0, "%c0"), (1, "%c1"), (2, "%c2"), (3, "%c3")] {
        let ops =
            format!("  %r = lview_distribute %v <(2,2):(2,1)> {name} : lview<f32, (2,2):(8,2)>");
        let got = offsets_read(16, M44, &ops, &[2, 2]).unwrap();
        let (c0, c1) = (t / 2 % 2, t % 2);
        assert_eq!(
            got,
            dense(&[2, 2], |i| (c0 + 2 * i[0]) * 4 + c1 + 2 * i[1]),
            "thread {t}"
        );
    }
    // A column-major thread layout 4×1 over an 8×2 tensor: thread t owns rows t, t+4.
    let ops = "  %r = lview_distribute %v <(4,1):(1,4)> %c3 : lview<f32, (2,2):(8,1)>";
    let got = offsets_read(16, "(8,2):(2,1)", ops, &[2, 2]).unwrap();
    assert_eq!(got, dense(&[2, 2], |i| (3 + 4 * i[0]) * 2 + i[1]));
}

#[test]
fn masked_loads_pad_and_masked_stores_skip_outside_the_element_space() {
    // The view reaches offsets 0..16 of a tensor of 10 elements.
    let src = "kernel @k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>) {
  %v = layout_view %src <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %x = lview_load_masked %v pad(-1.0) : tile<4x4xf32>
  %w = layout_view %dst <(4,4):(1,4)> : lview<f32, (4,4):(1,4)>
  lview_store_masked %x, %w
}";
    let out = run_text(src, vec![iota(&[10]), zeros(&[12])]).unwrap();
    // dst element r + 4c gets src element 4r + c, or -1 past 10; offsets 12.. skipped.
    let want: Vec<f32> = (0..12)
        .map(|o| {
            let (r, c) = (o % 4, o / 4);
            let s = 4 * r + c;
            if s < 10 {
                s as f32
            } else {
                -1.0
            }
        })
        .collect();
    assert_eq!(values(&out, 1), want);
}

#[test]
fn the_element_space_follows_the_tensor_strides() {
    // A 3×2 tensor with row pitch 4 in a buffer of 12: its element space is
    // offsets 0..10 (1 + 2·4 + 1·1), gaps included; a view reads it raw.
    use tile_ir::interp::{Arg, HostTensor};
    use tile_ir::DType;
    let bytes: Vec<u8> = (0..12).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let t = HostTensor::with_strides(DType::F32, &[3, 2], &[4, 1], 1, bytes).unwrap();
    let src = "kernel @k(%src: tensor<f32, 2>, %dst: tensor<f32, 1>) {
  %v = layout_view %src <10:1> : lview<f32, 10:1>
  %x = lview_load_masked %v pad(zero) : tile<10xf32>
  %w = layout_view %dst <10:1> : lview<f32, 10:1>
  lview_store %x, %w
}";
    let out = run_text(src, vec![Arg::Tensor(t), zeros(&[10])]).unwrap();
    assert_eq!(
        values(&out, 1),
        (1..11).map(|i| i as f32).collect::<Vec<_>>()
    );
}
