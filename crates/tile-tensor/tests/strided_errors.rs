//! Every way a view op refuses its input, with the message pinned. None of
//! these may panic.

mod strided_dense;

use strided_dense::arange;
use tile_tensor::strided::{Index, StridedView};

fn msg<T: std::fmt::Debug>(r: Result<T, tile_tensor::strided::StridedViewError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn construction() {
    assert_eq!(
        msg(StridedView::new(&[2, 3], &[1], 0, None)),
        "new: expected 2 strides for a rank-2 view, got 1"
    );
    assert_eq!(
        msg(StridedView::new(&[2, 3], &[3, 1], 0, Some(&[(0, 2)]))),
        "new: expected 2 mask entries for a rank-2 view, got 1"
    );
    assert_eq!(
        msg(StridedView::new(
            &[2, 3],
            &[3, 1],
            0,
            Some(&[(0, 2), (2, 4)])
        )),
        "new: axis 1: range (2, 4) is not within 0 <= begin <= end <= 3"
    );
    assert_eq!(
        msg(StridedView::contiguous(&[usize::MAX, 2])),
        "contiguous: arithmetic overflow computing a size"
    );
    assert_eq!(
        msg(StridedView::new(&[1 << 40, 1 << 40], &[1, 1], 0, None)),
        "new: arithmetic overflow computing the number of elements"
    );
}

#[test]
fn reshape_sizes() {
    let v = arange(&[2, 3]);
    assert_eq!(
        msg(v.reshape(&[4, 2])),
        "reshape: (4, 2) holds 8 elements but the view holds 6"
    );
    assert_eq!(
        msg(v.reshape(&[-1, -1])),
        "reshape: only one size may be -1, got (-1, -1)"
    );
    assert_eq!(
        msg(v.reshape(&[3, -2])),
        "reshape: size -2 at position 1 is negative (only -1 is allowed, meaning 'infer this size')"
    );
    assert_eq!(
        msg(v.reshape(&[4, -1])),
        "reshape: (4, -1) holds 4 elements but the view holds 6"
    );
    assert_eq!(
        msg(v.reshape(&[0, -1])),
        "reshape: (0, -1) holds 0 elements but the view holds 6"
    );
}

#[test]
fn expand() {
    let v = arange(&[2, 1]);
    assert_eq!(
        msg(v.expand(&[3, 4])),
        "expand: axis 0 has size 2 and cannot become 3; only size-1 dims expand"
    );
    assert_eq!(
        msg(v.expand(&[4])),
        "expand: got 1 sizes for a rank-2 view; need at least 2"
    );
    assert_eq!(
        msg(v.expand(&[2, -3])),
        "expand: size -3 at position 1 is negative (only -1 is allowed, meaning 'keep this size')"
    );
}

#[test]
fn axes_and_permutations() {
    let v = arange(&[2, 3, 4]);
    assert_eq!(
        msg(v.permute(&[0, 1])),
        "permute: (0, 1) is not a permutation of the 3 axes"
    );
    assert_eq!(
        msg(v.permute(&[0, 1, 1])),
        "permute: (0, 1, 1) is not a permutation of the 3 axes"
    );
    assert_eq!(
        msg(v.permute(&[0, 1, 3])),
        "permute: (0, 1, 3) is not a permutation of the 3 axes"
    );
    assert_eq!(
        msg(v.flip(&[3])),
        "flip: axis 3 is out of range for rank 3 (allowed -3..=2)"
    );
    assert_eq!(
        msg(v.flip(&[-4])),
        "flip: axis -4 is out of range for rank 3 (allowed -3..=2)"
    );
    assert_eq!(
        msg(v.flip(&[0, -3])),
        "flip: axis 0 appears more than once in (0, -3)"
    );
    assert_eq!(
        msg(v.transpose(0, 5)),
        "transpose: axis 5 is out of range for rank 3 (allowed -3..=2)"
    );
    assert_eq!(
        msg(v.unsqueeze(5)),
        "unsqueeze: axis 5 is out of range for rank 3 (allowed -4..=3)"
    );
    assert_eq!(
        msg(v.squeeze(Some(3))),
        "squeeze: axis 3 is out of range for rank 3 (allowed -3..=2)"
    );
    assert_eq!(
        msg(v.flatten(2, 1)),
        "flatten: start axis 2 is after end axis 1"
    );
    assert_eq!(
        msg(arange(&[]).flatten(0, -1)),
        "flatten: axis 0 is out of range for rank 0 (a rank-0 view has no axes)"
    );
    assert_eq!(
        msg(v.unflatten(1, &[2, 2])),
        "unflatten: (2, 2) holds 4 elements but the view holds 3"
    );
}

#[test]
fn shrink_pad_stride() {
    let v = arange(&[2, 3]);
    assert_eq!(
        msg(v.shrink(&[(0, 2)])),
        "shrink: expected 2 ranges for a rank-2 view, got 1"
    );
    assert_eq!(
        msg(v.shrink(&[(0, 2), (2, 4)])),
        "shrink: axis 1: range (2, 4) is not within 0 <= begin <= end <= 3"
    );
    assert_eq!(
        msg(v.shrink(&[(2, 1), (0, 3)])),
        "shrink: axis 0: range (2, 1) is not within 0 <= begin <= end <= 2"
    );
    assert_eq!(
        msg(v.pad(&[(1, 1)])),
        "pad: expected 2 padding pairs for a rank-2 view, got 1"
    );
    assert_eq!(
        msg(v.pad(&[(0, 0), (-2, -2)])),
        "pad: axis 1: padding (-2, -2) removes more than the 3 elements of the axis"
    );
    assert_eq!(
        msg(v.stride(&[1, 0])),
        "stride: axis 1: the step must not be 0"
    );
    assert_eq!(
        msg(v.stride(&[1])),
        "stride: expected 2 steps for a rank-2 view, got 1"
    );
    assert_eq!(
        msg(StridedView::new(&[2], &[isize::MAX], 0, None)
            .unwrap()
            .pad(&[(1, 0)])
            .unwrap()
            .pad(&[(1, 0)])),
        "pad: arithmetic overflow computing the offset"
    );
}

#[test]
fn getitem() {
    let v = arange(&[2, 3]);
    assert_eq!(
        msg(v.get(&[Index::At(2)])),
        "getitem: index 2 is out of range for axis 0 of size 2"
    );
    assert_eq!(
        msg(v.get(&[Index::At(0), Index::At(-4)])),
        "getitem: index -4 is out of range for axis 1 of size 3"
    );
    assert_eq!(
        msg(v.get(&[Index::At(0), Index::full(), Index::full()])),
        "getitem: 3 integer/slice indices for a rank-2 view"
    );
    assert_eq!(
        msg(v.get(&[Index::Ellipsis, Index::Ellipsis])),
        "getitem: an index may contain at most one ellipsis, got 2"
    );
    assert_eq!(
        msg(v.get(&[
            Index::full(),
            Index::Slice {
                start: None,
                stop: None,
                step: Some(0)
            }
        ])),
        "getitem: axis 1: the step must not be 0"
    );
    let hidden = arange(&[1]).pad(&[(1, 0)]).unwrap();
    assert_eq!(
        msg(hidden.get(&[Index::At(0)])),
        "getitem needs a copy: (1,) with strides (0,) cannot become () as one strided view: \
         every element is masked out and a rank-0 view has no mask"
    );
}

#[test]
fn split_and_chunk() {
    let v = arange(&[5, 2]);
    assert_eq!(
        msg(v.split(&[1, 2], 0)),
        "split: sizes (1, 2) must add up to the size 5 of axis 0"
    );
    assert_eq!(
        msg(v.split_every(0, 0)),
        "split: the piece size must be positive, got 0"
    );
    assert_eq!(
        msg(v.chunk(0, 0)),
        "chunk: the number of chunks must be positive, got 0"
    );
    assert_eq!(
        msg(v.chunk(2, 2)),
        "chunk: axis 2 is out of range for rank 2 (allowed -2..=1)"
    );
    assert_eq!(
        msg(v.repeat(&[2])),
        "repeat: got 1 sizes for a rank-2 view; need at least 2"
    );
}
