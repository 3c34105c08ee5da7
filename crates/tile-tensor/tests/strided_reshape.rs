//! Reshape: merging, splitting, masks kept through both, size-1 axes, and the
//! cases that need a copy, with their messages pinned.

mod strided_dense;

use strided_dense::{arange, Dense};
use tile_tensor::strided::StridedView;

/// Reshapes and checks against the dense reference; returns the view.
fn reshaped(v: &StridedView, shape: &[usize]) -> StridedView {
    let signed: Vec<isize> = shape.iter().map(|&s| s as isize).collect();
    let r = v
        .reshape(&signed)
        .unwrap_or_else(|e| panic!("{v} -> {shape:?}: {e}"));
    assert_eq!(
        Dense::of(&r),
        Dense::of(v).reshape(shape),
        "{v} -> {shape:?} gave {r}"
    );
    r
}

/// The message of a reshape that must fail; no single view may express it.
fn failure(v: &StridedView, shape: &[isize]) -> String {
    let dense: Vec<usize> = shape.iter().map(|&s| s as usize).collect();
    assert!(
        !Dense::of(v).reshape(&dense).expressible(),
        "{v} -> {shape:?} is a view"
    );
    v.reshape(shape).unwrap_err().to_string()
}

#[test]
fn merges_contiguous_axes() {
    let r = reshaped(&arange(&[2, 3, 4]), &[6, 4]);
    assert_eq!((r.strides(), r.offset()), (&[4, 1][..], 0));
    let r = reshaped(&arange(&[2, 3, 4]), &[24]);
    assert_eq!(r.strides(), &[1]);
}

#[test]
fn merges_a_transposed_pair_that_stays_one_stride() {
    // (4, 3, 2) permuted to (3, 2, 4): axes 0 and 1 (strides 2, 1) still merge.
    let v = arange(&[4, 3, 2]).permute(&[1, 2, 0]).unwrap();
    let r = reshaped(&v, &[6, 4]);
    assert_eq!(r.strides(), &[1, 6]);
}

#[test]
fn splits_an_axis() {
    let r = reshaped(&arange(&[12]), &[3, 2, 2]);
    assert_eq!(r.strides(), &[4, 2, 1]);
    // Splitting a flipped axis keeps the negative stride.
    let r = reshaped(&arange(&[6]).flip(&[0]).unwrap(), &[2, 3]);
    assert_eq!((r.strides(), r.offset()), (&[-3, -1][..], 5));
}

#[test]
fn splits_and_merges_in_separate_groups() {
    // (4, 6) -> (2, 2, 2, 3) groups as 4 -> 2x2 and 6 -> 2x3, so a padded
    // inner axis can still be split where its rows line up.
    let v = arange(&[4, 6]).shrink(&[(0, 4), (0, 3)]).unwrap(); // (4, 3), strides (6, 1)
    let r = reshaped(&v, &[2, 2, 3]);
    assert_eq!(r.strides(), &[12, 6, 1]);
}

#[test]
fn keeps_the_mask_when_splitting_whole_rows() {
    // A 12-wide axis padded 4 on each side of 4 valid elements: row 1 of (3, 4).
    let v = arange(&[4]).pad(&[(4, 4)]).unwrap();
    let r = reshaped(&v, &[3, 4]);
    assert_eq!(r.mask(), Some(&[(1, 2), (0, 4)][..]));
    // Whole rows 1..3 of (4, 2): the range 2..6 of 8.
    let v = arange(&[4]).pad(&[(2, 2)]).unwrap();
    let r = reshaped(&v, &[4, 2]);
    assert_eq!(r.mask(), Some(&[(1, 3), (0, 2)][..]));
}

#[test]
fn keeps_the_mask_when_merging() {
    // Padding the outer axis only: the inner axis is whole, so rows merge.
    let v = arange(&[2, 3]).pad(&[(1, 2), (0, 0)]).unwrap();
    let r = reshaped(&v, &[15]);
    assert_eq!(r.mask(), Some(&[(3, 9)][..]));
    // A single valid row merges with a padded inner axis.
    let v = arange(&[1, 3]).pad(&[(1, 1), (2, 0)]).unwrap(); // (3, 5), only row 1, cols 2..5
    let r = reshaped(&v, &[15]);
    assert_eq!(r.mask(), Some(&[(7, 10)][..]));
}

#[test]
fn drops_and_adds_size_1_axes_anywhere() {
    let v = arange(&[2, 1, 3]).pad(&[(0, 0), (0, 0), (1, 0)]).unwrap();
    let r = reshaped(&v, &[1, 2, 4, 1]);
    assert_eq!(r.strides(), &[0, 3, 1, 0]);
    reshaped(&r, &[2, 1, 1, 4]);
}

#[test]
fn merges_expanded_axes() {
    let v = arange(&[1, 1]).expand(&[3, 4]).unwrap();
    let r = reshaped(&v, &[12]);
    assert_eq!(r.strides(), &[0]);
    let v = arange(&[3, 1]).expand(&[3, 4]).unwrap();
    reshaped(&v, &[3, 2, 2]);
}

#[test]
fn fully_masked_and_empty_views_reshape_freely() {
    let hidden = arange(&[2, 2])
        .pad(&[(0, 0), (3, 0)])
        .unwrap()
        .shrink(&[(0, 2), (0, 2)])
        .unwrap();
    let r = reshaped(&hidden, &[4, 1]);
    assert_eq!(r.mask(), Some(&[(0, 0), (0, 0)][..]));
    let empty = arange(&[0, 3]);
    let r = reshaped(&empty, &[3, 0, 5]);
    assert_eq!(r.mask(), None);
}

#[test]
fn infers_minus_one() {
    let r = arange(&[2, 3, 4]).reshape(&[-1, 4]).unwrap();
    assert_eq!(r.shape(), &[6, 4]);
}

#[test]
fn merging_non_contiguous_axes_needs_a_copy() {
    let v = arange(&[2, 3]).transpose(0, 1).unwrap();
    assert_eq!(
        failure(&v, &[6]),
        "reshape needs a copy: (3, 2) with strides (1, 3) cannot become (6,) as one strided view: \
         axis 0 has stride 1 but axis 1 needs stride 3 * 2 = 6 to continue it"
    );
    let v = arange(&[4, 6]).shrink(&[(0, 4), (0, 3)]).unwrap();
    assert_eq!(
        failure(&v, &[12]),
        "reshape needs a copy: (4, 3) with strides (6, 1) cannot become (12,) as one strided view: \
         axis 0 has stride 6 but axis 1 needs stride 1 * 3 = 3 to continue it"
    );
}

#[test]
fn merging_a_padded_inner_axis_needs_a_copy() {
    let v = arange(&[2, 2]).pad(&[(0, 0), (1, 1)]).unwrap();
    assert_eq!(
        failure(&v, &[8]),
        "reshape needs a copy: (2, 4) with strides (2, 1) cannot become (8,) as one strided view: \
         the mask ((0, 2), (1, 3)) keeps part of axis 1 in several coordinates of axis 0, which is not one range"
    );
}

#[test]
fn splitting_a_range_that_is_no_box_needs_a_copy() {
    let v = arange(&[4]).pad(&[(1, 1)]).unwrap();
    assert_eq!(
        failure(&v, &[3, 2]),
        "reshape needs a copy: (6,) with strides (1,) cannot become (3, 2) as one strided view: \
         the valid range 1..5 of the merged axes is not a box in the new axes (3, 2)"
    );
}

#[test]
fn a_masked_out_scalar_needs_a_copy() {
    let v = arange(&[1])
        .pad(&[(1, 0)])
        .unwrap()
        .shrink(&[(0, 1)])
        .unwrap();
    assert_eq!(
        failure(&v, &[]),
        "reshape needs a copy: (1,) with strides (0,) cannot become () as one strided view: \
         every element is masked out and a rank-0 view has no mask"
    );
}
