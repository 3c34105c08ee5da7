//! Every worked example of tinygrad's movement docs
//! (<https://docs.tinygrad.org/tensor/movement/>) and of its view's `pad`
//! (docs/strided-views.md, "pad"), checked exactly.
//!
//! `Tensor.arange(n).reshape(shape)` is a contiguous view: its buffer positions
//! are its values, so the expected arrays of the docs are expected positions.
//! Examples that need tensor indexing, several source tensors or a reduction
//! (gather, cat, stack, meshgrid, diag, diagonal, roll, rearrange, unfold,
//! repeat_interleave) are not single-view movement ops and are not covered here.

mod strided_dense;

use strided_dense::{arange, values};
use tile_tensor::strided::{Index, StridedView, StridedViewError};

/// A view of `Tensor([first, first+1, ...])`: positions equal the values.
fn counting(first: isize, n: usize) -> StridedView {
    StridedView::new(&[n], &[1], first, None).unwrap()
}

#[test]
fn layout_algebra_pad_example() {
    let v = arange(&[2, 2]).pad(&[(1, 1), (1, 1)]).unwrap();
    assert_eq!(v.shape(), &[4, 4]);
    assert_eq!(v.strides(), &[2, 1]);
    assert_eq!(v.offset(), -3);
    assert_eq!(v.mask(), Some(&[(1, 3), (1, 3)][..]));
    assert_eq!(
        v.to_string(),
        "StridedView(shape=(4, 4), strides=(2, 1), offset=-3, mask=((1, 3), (1, 3)))"
    );
    assert_eq!(v.element_map(), ". . . .\n. 0 1 .\n. 2 3 .\n. . . .\n");
}

#[test]
fn reshape_arange_6_to_2x3() {
    let v = arange(&[6]).reshape(&[2, 3]).unwrap();
    assert_eq!(v.shape(), &[2, 3]);
    assert_eq!(values(&v, -1), [0, 1, 2, 3, 4, 5]);
}

#[test]
fn expand_1_2_3_to_4_rows() {
    let v = counting(1, 3).expand(&[4, -1]).unwrap();
    assert_eq!(v.shape(), &[4, 3]);
    assert_eq!(values(&v, -1), [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
    assert_eq!(v.strides(), &[0, 1]);
}

#[test]
fn permute_2_3_5_by_2_0_1() {
    let v = arange(&[2, 3, 5]).permute(&[2, 0, 1]).unwrap();
    assert_eq!(v.shape(), &[5, 2, 3]);
}

#[test]
fn flip_rows_and_both_axes() {
    let t = arange(&[2, 3]);
    assert_eq!(values(&t.flip(&[0]).unwrap(), -1), [3, 4, 5, 0, 1, 2]);
    assert_eq!(values(&t.flip(&[0, 1]).unwrap(), -1), [5, 4, 3, 2, 1, 0]);
}

#[test]
fn shrink_columns_and_corner() {
    let t = arange(&[3, 3]);
    assert_eq!(
        values(&t.shrink(&[(0, 3), (1, 3)]).unwrap(), -1),
        [1, 2, 4, 5, 7, 8]
    );
    assert_eq!(
        values(&t.shrink(&[(0, 2), (0, 2)]).unwrap(), -1),
        [0, 1, 3, 4]
    );
}

#[test]
fn pad_with_a_negative_amount() {
    // t.pad((1, 2, 0, -1)) in flat (PyTorch) order is the grouped
    // ((0, 0), (0, 0), (0, -1), (1, 2)); both print the same array.
    let t = arange(&[1, 1, 3, 3]);
    let v = t.pad(&[(0, 0), (0, 0), (0, -1), (1, 2)]).unwrap();
    assert_eq!(v.shape(), &[1, 1, 2, 6]);
    // Padding with value 0 ...
    assert_eq!(values(&v, 0), [0, 0, 1, 2, 0, 0, 0, 3, 4, 5, 0, 0]);
    // ... and with value -inf, shown here as None: position 0 is real data.
    let dense = strided_dense::Dense::of(&v).data;
    let n = None;
    assert_eq!(
        dense,
        [
            n,
            Some(0),
            Some(1),
            Some(2),
            n,
            n,
            n,
            Some(3),
            Some(4),
            Some(5),
            n,
            n
        ]
    );
}

#[test]
fn getitem_int_slice_and_none() {
    let t = arange(&[3, 4]);
    let one = t.get(&[Index::At(1), Index::At(2)]).unwrap();
    assert_eq!(one.shape(), &[] as &[usize]);
    assert_eq!(one.index(&[]), Some(6));
    let sliced = t
        .get(&[
            Index::range(0, 2),
            Index::Slice {
                start: None,
                stop: None,
                step: Some(2),
            },
        ])
        .unwrap();
    assert_eq!(values(&sliced, -1), [0, 2, 4, 6]);
    let new_axis = t.get(&[Index::full(), Index::NewAxis]).unwrap();
    assert_eq!(new_axis.shape(), &[3, 1, 4]);
}

#[test]
fn squeeze_all_one_and_a_kept_axis() {
    let t = arange(&[2, 1, 2, 1, 2]);
    assert_eq!(t.squeeze(None).unwrap().shape(), &[2, 2, 2]);
    assert_eq!(t.squeeze(Some(0)).unwrap().shape(), &[2, 1, 2, 1, 2]);
    assert_eq!(t.squeeze(Some(1)).unwrap().shape(), &[2, 2, 1, 2]);
}

#[test]
fn unsqueeze_front_and_back() {
    let t = counting(1, 4);
    let front = t.unsqueeze(0).unwrap();
    assert_eq!(front.shape(), &[1, 4]);
    assert_eq!(values(&front, -1), [1, 2, 3, 4]);
    let back = t.unsqueeze(1).unwrap();
    assert_eq!(back.shape(), &[4, 1]);
    assert_eq!(values(&back, -1), [1, 2, 3, 4]);
}

#[test]
fn transpose_2x3() {
    let v = arange(&[2, 3]).transpose(0, 1).unwrap();
    assert_eq!(v.shape(), &[3, 2]);
    assert_eq!(values(&v, -1), [0, 3, 1, 4, 2, 5]);
}

#[test]
fn flatten_all_and_from_axis_1() {
    let t = arange(&[2, 2, 2]);
    let all = t.flatten(0, -1).unwrap();
    assert_eq!(all.shape(), &[8]);
    assert_eq!(values(&all, -1), [0, 1, 2, 3, 4, 5, 6, 7]);
    let inner = t.flatten(1, -1).unwrap();
    assert_eq!(inner.shape(), &[2, 4]);
    assert_eq!(values(&inner, -1), [0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn unflatten_three_examples() {
    let ones = arange(&[3, 4, 1]);
    assert_eq!(ones.unflatten(1, &[2, 2]).unwrap().shape(), &[3, 2, 2, 1]);
    assert_eq!(ones.unflatten(1, &[-1, 2]).unwrap().shape(), &[3, 2, 2, 1]);
    let big = arange(&[5, 12, 3]);
    assert_eq!(
        big.unflatten(-2, &[2, 2, 3, 1, 1]).unwrap().shape(),
        &[5, 2, 2, 3, 1, 1, 3]
    );
}

#[test]
fn repeat_examples() {
    let t = counting(1, 3);
    // t.repeat(4, 2) tiles [1, 2, 3] twice along a row: a copy, not a view.
    let err = t.repeat(&[4, 2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "repeat needs a copy: (3,) with strides (1,) cannot be repeated (4, 2) as one strided view: \
         axis 1 of the aligned shape (1, 3) has size 3 and stride 1; \
         only axes of size 1, or of stride 0 without a partial mask, repeat"
    );
    assert!(matches!(
        err,
        StridedViewError::NeedsCopy { op: "repeat", .. }
    ));
    let v = t.repeat(&[4, 2, 1]).unwrap();
    assert_eq!(v.shape(), &[4, 2, 3]);
    assert_eq!(values(&v, -1), [1, 2, 3].repeat(8));
}

#[test]
fn split_by_size_and_by_list() {
    let t = arange(&[5, 2]);
    let parts: Vec<Vec<isize>> = t
        .split_every(2, 0)
        .unwrap()
        .iter()
        .map(|v| values(v, -1))
        .collect();
    assert_eq!(parts, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9]]);
    let parts = t.split(&[1, 4], 0).unwrap();
    assert_eq!(parts[0].shape(), &[1, 2]);
    assert_eq!(parts[1].shape(), &[4, 2]);
    assert_eq!(values(&parts[0], -1), [0, 1]);
    assert_eq!(values(&parts[1], -1), [2, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn chunk_11_12_13_into_6() {
    let chunked = |n: usize| -> Vec<Vec<isize>> {
        arange(&[n])
            .chunk(6, 0)
            .unwrap()
            .iter()
            .map(|v| values(v, -1))
            .collect()
    };
    assert_eq!(
        chunked(11),
        vec![
            vec![0, 1],
            vec![2, 3],
            vec![4, 5],
            vec![6, 7],
            vec![8, 9],
            vec![10]
        ]
    );
    assert_eq!(
        chunked(12),
        vec![
            vec![0, 1],
            vec![2, 3],
            vec![4, 5],
            vec![6, 7],
            vec![8, 9],
            vec![10, 11]
        ]
    );
    assert_eq!(
        chunked(13),
        vec![
            vec![0, 1, 2],
            vec![3, 4, 5],
            vec![6, 7, 8],
            vec![9, 10, 11],
            vec![12]
        ]
    );
}
