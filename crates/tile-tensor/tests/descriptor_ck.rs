//! The tensor descriptor against CK's HostTensorDescriptor rules: the
//! reference's examples, stride derivation, partial-stride completion, sizes,
//! offsets, the debug format, and every validation error with its message.

use tile_tensor::descriptor::{DescriptorError, StrideOrder, TensorDescriptor};

use StrideOrder::{Bypass, ColumnMajor, RowMajor};

fn strides(lengths: &[usize], given: &[i64], layout: StrideOrder) -> Vec<usize> {
    TensorDescriptor::with_strides(lengths, given, layout)
        .unwrap_or_else(|e| panic!("{lengths:?} {given:?} {layout}: {e}"))
        .strides()
        .to_vec()
}

fn error(lengths: &[usize], given: &[i64], layout: StrideOrder) -> String {
    TensorDescriptor::with_strides(lengths, given, layout)
        .unwrap_err()
        .to_string()
}

#[test]
fn reference_usage_examples() {
    // HostTensorDescriptor desc1({4, 3}, RowMajor{}): auto-calculated strides.
    let d = TensorDescriptor::packed(&[4, 3], RowMajor).unwrap();
    assert_eq!(d.strides(), &[3, 1]);
    // desc2({4, 3}, {3, 1}, RowMajor{}): explicit strides, validated.
    assert_eq!(strides(&[4, 3], &[3, 1], RowMajor), [3, 1]);
    // desc3({4, 3}, {0, 1}, RowMajor{}): the unknown leading stride is completed.
    assert_eq!(strides(&[4, 3], &[0, 1], RowMajor), [3, 1]);
}

#[test]
fn row_major_derivation() {
    assert_eq!(strides(&[5], &[], RowMajor), [1]);
    assert_eq!(strides(&[2, 4, 3], &[], RowMajor), [12, 3, 1]);
    assert_eq!(
        strides(&[2, 2, 4, 3], &[0, 0, 0, 0], RowMajor),
        [24, 12, 3, 1]
    );
    assert_eq!(strides(&[2, 4, 3], &[-1, -1, -1], RowMajor), [12, 3, 1]);
}

#[test]
fn column_major_derivation() {
    // Square: the same as CK's swap of the last two row-major strides.
    assert_eq!(strides(&[4, 4], &[], ColumnMajor), [1, 4]);
    // Non-square: (1, M). CK's swap would give (1, 3), which its own check rejects.
    assert_eq!(strides(&[4, 3], &[], ColumnMajor), [1, 4]);
    assert_eq!(strides(&[2, 4, 3], &[], ColumnMajor), [12, 1, 4]);
    assert_eq!(strides(&[5], &[], ColumnMajor), [1]);
}

#[test]
fn empty_lengths_still_get_positive_strides() {
    assert_eq!(strides(&[3, 0], &[], RowMajor), [1, 1]);
    assert_eq!(strides(&[0, 3], &[], ColumnMajor), [1, 1]);
    assert_eq!(strides(&[4, 0], &[0, 1], RowMajor), [1, 1]);
}

#[test]
fn partial_strides_complete_the_last_two_dims() {
    // Row-major: {..., 0, N} and {..., M, 0}.
    assert_eq!(strides(&[4, 3], &[8, 0], RowMajor), [8, 1]);
    assert_eq!(strides(&[4, 3], &[-1, 2], RowMajor), [6, 2]);
    assert_eq!(strides(&[2, 4, 3], &[20, 0, 1], RowMajor), [20, 3, 1]);
    assert_eq!(strides(&[2, 4, 3], &[20, 5, -1], RowMajor), [20, 5, 1]);
    // Column-major: the unit-stride dim is the second-to-last.
    assert_eq!(strides(&[4, 3], &[0, 6], ColumnMajor), [1, 6]);
    assert_eq!(strides(&[4, 3], &[1, 0], ColumnMajor), [1, 4]);
    assert_eq!(strides(&[2, 4, 3], &[30, 2, 0], ColumnMajor), [30, 2, 8]);
}

#[test]
fn rank_1_is_not_checked_beyond_positivity() {
    assert_eq!(strides(&[5], &[3], RowMajor), [3]);
    assert_eq!(strides(&[5], &[0], ColumnMajor), [1]);
}

#[test]
fn explicit_strides_that_pass_validation() {
    assert_eq!(strides(&[4, 3], &[5, 1], RowMajor), [5, 1]);
    assert_eq!(strides(&[4, 3], &[1, 4], ColumnMajor), [1, 4]);
    assert_eq!(strides(&[2, 4, 3], &[12, 3, 1], RowMajor), [12, 3, 1]);
    assert_eq!(
        strides(&[2, 2, 4, 3], &[30, 15, 3, 1], RowMajor),
        [30, 15, 3, 1]
    );
}

#[test]
fn bypass_takes_strides_as_given() {
    let d = TensorDescriptor::with_strides(&[4, 3], &[0, 1], Bypass).unwrap();
    assert_eq!(d.strides(), &[0, 1]);
    assert_eq!(d.element_space_size(), 3);
    assert_eq!(strides(&[4, 3], &[1, 1], Bypass), [1, 1]);
    let scalar = TensorDescriptor::with_strides(&[], &[], Bypass).unwrap();
    assert_eq!((scalar.element_size(), scalar.element_space_size()), (1, 1));
}

#[test]
fn sizes() {
    let d = TensorDescriptor::with_strides(&[4, 3], &[5, 1], RowMajor).unwrap();
    assert_eq!(d.rank(), 2);
    assert_eq!(d.lengths(), &[4, 3]);
    assert_eq!(d.element_size(), 12);
    assert_eq!(d.element_space_size(), 1 + 3 * 5 + 2);
    assert_eq!(d.element_space_bytes(2).unwrap(), 36);
    let packed = TensorDescriptor::packed(&[2, 4, 3], ColumnMajor).unwrap();
    assert_eq!(packed.element_space_size(), packed.element_size());
    // A dim of length 0 adds nothing to the space, which is still 1 (CK).
    let empty = TensorDescriptor::packed(&[0, 3], RowMajor).unwrap();
    assert_eq!((empty.element_size(), empty.element_space_size()), (0, 3));
    assert_eq!(
        d.element_space_bytes(usize::MAX).unwrap_err().to_string(),
        "tensor descriptor: arithmetic overflow computing the element space in bytes"
    );
}

#[test]
fn offsets() {
    let d = TensorDescriptor::with_strides(&[4, 3], &[5, 1], RowMajor).unwrap();
    assert_eq!(d.offset(&[0, 0]).unwrap(), 0);
    assert_eq!(d.offset(&[2, 1]).unwrap(), 11);
    assert_eq!(d.offset(&[3, 2]).unwrap(), d.element_space_size() - 1);
    let c = TensorDescriptor::packed(&[2, 4, 3], ColumnMajor).unwrap();
    assert_eq!(c.offset(&[1, 2, 1]).unwrap(), 12 + 2 + 4);
    assert_eq!(
        d.offset(&[1]).unwrap_err().to_string(),
        "tensor descriptor: index has 1 coordinates for a rank-2 descriptor"
    );
    assert_eq!(
        d.offset(&[1, 3]).unwrap_err(),
        DescriptorError::IndexOutOfRange {
            dim: 1,
            index: 3,
            length: 3
        }
    );
    assert_eq!(
        d.offset(&[4, 0]).unwrap_err().to_string(),
        "tensor descriptor: index 4 is out of range for dim 0 of length 4"
    );
}

#[test]
fn display_is_cks_debug_format() {
    let d = TensorDescriptor::packed(&[4, 3], RowMajor).unwrap();
    assert_eq!(d.to_string(), "dim 2, lengths {4, 3}, strides {3, 1}");
    let d = TensorDescriptor::packed(&[7], RowMajor).unwrap();
    assert_eq!(d.to_string(), "dim 1, lengths {7}, strides {1}");
}

#[test]
fn value_type() {
    let a = TensorDescriptor::packed(&[4, 3], RowMajor).unwrap();
    let b = TensorDescriptor::with_strides(&[4, 3], &[3, 1], RowMajor).unwrap();
    assert_eq!(a, b.clone());
    assert_ne!(a, TensorDescriptor::packed(&[4, 3], ColumnMajor).unwrap());
    assert!(format!("{a:?}").contains("lengths: [4, 3]"));
}

#[test]
fn no_dimensions() {
    assert_eq!(
        error(&[], &[], RowMajor),
        "tensor descriptor: no lengths given; a RowMajor descriptor needs at least one dimension"
    );
}

#[test]
fn stride_count() {
    assert_eq!(
        error(&[4, 3], &[3], RowMajor),
        "tensor descriptor: 1 strides for 2 lengths; give one stride per dimension, \
         or none (or all unknown) to derive them as RowMajor"
    );
    assert_eq!(
        error(&[4, 3], &[], Bypass),
        "tensor descriptor: 0 strides for 2 lengths; give one stride per dimension, \
         or none (or all unknown) to derive them as Bypass"
    );
    assert_eq!(
        TensorDescriptor::packed(&[4], Bypass).unwrap_err(),
        DescriptorError::StrideCount {
            layout: Bypass,
            lengths: 1,
            strides: 0
        }
    );
}

#[test]
fn non_positive_stride_outside_the_matrix() {
    assert_eq!(
        error(&[2, 4, 3], &[0, 3, 1], RowMajor),
        "tensor descriptor: dim 0 has stride 0, but RowMajor needs positive strides; \
         unknown strides (0 or negative) are only completed in the last two dims, or in every dim \
         when all strides are unknown"
    );
    assert_eq!(
        TensorDescriptor::with_strides(&[2, 2, 4, 3], &[24, -1, 0, 1], RowMajor).unwrap_err(),
        DescriptorError::NonPositiveStride {
            layout: RowMajor,
            dim: 1,
            stride: -1
        }
    );
}

#[test]
fn negative_bypass_stride() {
    assert_eq!(
        error(&[4, 3], &[3, -1], Bypass),
        "tensor descriptor: dim 1 has stride -1, but bypass strides must be 0 or positive"
    );
}

#[test]
fn matrix_overlap() {
    assert_eq!(
        error(&[4, 3], &[2, 1], RowMajor),
        "tensor descriptor: RowMajor: dim 0 has stride 2, less than length 3 * stride 1 of dim 1, \
         so consecutive rows overlap"
    );
    assert_eq!(
        error(&[4, 3], &[1, 3], ColumnMajor),
        "tensor descriptor: ColumnMajor: dim 1 has stride 3, less than length 4 * stride 1 of dim 0, \
         so consecutive columns overlap"
    );
    // A row-major stride pattern declared column-major.
    assert_eq!(
        TensorDescriptor::with_strides(&[4, 3], &[3, 1], ColumnMajor).unwrap_err(),
        DescriptorError::MatrixOverlap {
            layout: ColumnMajor,
            outer: 1,
            outer_stride: 1,
            inner: 0,
            inner_length: 4,
            inner_stride: 3,
            lines: "columns",
        }
    );
}

#[test]
fn batch_overlap() {
    // Between batch dims (CK's rule).
    assert_eq!(
        error(&[2, 2, 4, 3], &[20, 12, 3, 1], RowMajor),
        "tensor descriptor: RowMajor: batch dim 0 has stride 20, less than length 2 * stride 12 of dim 1, \
         so consecutive batches overlap"
    );
    // The innermost batch dim against the matrix (our addition).
    assert_eq!(
        error(&[2, 4, 3], &[10, 3, 1], RowMajor),
        "tensor descriptor: RowMajor: batch dim 0 has stride 10, less than length 4 * stride 3 of dim 1, \
         so consecutive batches overlap"
    );
    assert_eq!(
        TensorDescriptor::with_strides(&[2, 4, 3], &[11, 1, 4], ColumnMajor).unwrap_err(),
        DescriptorError::BatchOverlap {
            layout: ColumnMajor,
            dim: 0,
            stride: 11,
            next: 2,
            next_length: 3,
            next_stride: 4
        }
    );
}

#[test]
fn overflow() {
    assert_eq!(
        error(&[usize::MAX, 2], &[], RowMajor),
        "tensor descriptor: arithmetic overflow computing a packed stride"
    );
    assert_eq!(
        error(&[1 << 40, 1 << 40], &[1, 1], Bypass),
        "tensor descriptor: arithmetic overflow computing the element size"
    );
    assert_eq!(
        error(&[3, 2], &[i64::MAX, 1], Bypass),
        "tensor descriptor: arithmetic overflow computing the element space size"
    );
}
